//! Paths of the Kubernetes API as a printed command sends them (`kubectl … --raw=PATH`), built
//! only from words that can be Kubernetes names, each segment percent-encoded as Go's
//! `url.PathEscape` does (client-go's `rest.Request` builds its URL with `url.URL`, whose path
//! escaping leaves only unreserved characters and `$&+,:;=@` bare).
//!
//! The API server stores no object whose name breaks its kind's rule (a custom resource's name
//! is a DNS subdomain, a namespace's a DNS label: apimachinery's `NameIsDNSSubdomain`,
//! `ValidateNamespaceName`), so a word that breaks it comes from a hostile or damaged input, and
//! `kubectl --raw` would send it as a path of its own (`..`, `a/../b`, `%2F`: kubectl decodes
//! the URL it is given before it re-encodes it, so no escaping here survives a `/`). Such a word
//! is refused: the path is not built, and no command names it.

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 characters: a namespace, a version, a plural.
pub fn is_dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter().all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// DNS labels joined by `.`, at most 253 characters: a custom resource's name, an API group.
pub fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns_label)
}

/// One path segment as Go's `url.PathEscape` writes it.
pub fn escape_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        let bare = b.is_ascii_alphanumeric() || b"-_.~$&+,:;=@".contains(&b);
        if bare {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Why a word cannot stand where it would in an API path, if it cannot.
fn refuse(what: &str, word: &str, ok: bool, rule: &str) -> Result<(), String> {
    if ok { Ok(()) } else { Err(format!("the {what} {word:?} cannot be a Kubernetes {what} ({rule})")) }
}

/// The path of one custom resource object (`/apis/GROUP/VERSION[/namespaces/NS]/PLURAL/NAME`),
/// or why one of its words cannot be a Kubernetes name.
pub fn custom_object(
    group: &str,
    version: &str,
    namespace: Option<&str>,
    plural: &str,
    name: &str,
) -> Result<String, String> {
    refuse("group", group, is_dns_subdomain(group), "a DNS subdomain")?;
    refuse("version", version, is_dns_label(version), "a DNS label")?;
    if let Some(ns) = namespace {
        refuse("namespace", ns, is_dns_label(ns), "a DNS label")?;
    }
    refuse("resource", plural, is_dns_label(plural), "a DNS label")?;
    refuse("name", name, is_dns_subdomain(name), "a DNS subdomain")?;
    let mut segments = vec!["apis", group, version];
    if let Some(ns) = namespace {
        segments.extend(["namespaces", ns]);
    }
    segments.extend([plural, name]);
    Ok(segments.iter().map(|s| format!("/{}", escape_segment(s))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_valid_object_path_is_its_words_and_a_hostile_one_is_refused() {
        assert_eq!(
            custom_object("shop.example.net", "v1", Some("orders"), "carts", "c1.v2").as_deref(),
            Ok("/apis/shop.example.net/v1/namespaces/orders/carts/c1.v2")
        );
        assert_eq!(
            custom_object("shop.example.net", "v1", None, "carts", "c1").as_deref(),
            Ok("/apis/shop.example.net/v1/carts/c1")
        );
        let hostile = [
            "..",
            ".",
            "a/../b",
            "../../api/v1/namespaces/kube-system",
            "%2e%2e",
            "a%2Fb",
            "c1?dryRun=All",
            "c1#x",
            "C1",
            "c 1",
            "",
            "-c1",
            "c1-",
            "a..b",
            "c\u{202e}1",
            "c\u{200f}1",
            "$(id)",
            "c1;rm",
            "ｃ1",
            &"a".repeat(254),
        ];
        for name in hostile {
            let refused = custom_object("shop.example.net", "v1", Some("orders"), "carts", name);
            assert!(
                refused.as_ref().is_err_and(|e| e.contains("cannot be a Kubernetes name")),
                "{name:?}: {refused:?}"
            );
        }
        for ns in ["..", "kube-system/..", "Orders", "a.b"] {
            assert!(custom_object("shop.example.net", "v1", Some(ns), "carts", "c1").is_err(), "{ns:?}");
        }
        assert!(custom_object("shop/../x", "v1", None, "carts", "c1").is_err());
        assert!(custom_object("shop.example.net", "v1/..", None, "carts", "c1").is_err());
        assert!(custom_object("shop.example.net", "v1", None, "carts/x", "c1").is_err());
    }

    #[test]
    fn segments_are_escaped_as_go_path_escape_does() {
        assert_eq!(escape_segment("a-b_c.d~e"), "a-b_c.d~e");
        assert_eq!(escape_segment("a/b"), "a%2Fb");
        assert_eq!(escape_segment("a b?c#d%e"), "a%20b%3Fc%23d%25e");
        assert_eq!(escape_segment("$&+,:;=@"), "$&+,:;=@");
        assert_eq!(escape_segment("é"), "%C3%A9");
    }
}
