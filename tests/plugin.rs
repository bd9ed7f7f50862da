//! kubectl through the plugin mechanism.
