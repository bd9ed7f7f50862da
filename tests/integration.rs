
mod support;
mod live;
mod plugin;
