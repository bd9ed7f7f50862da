//! kubectl-style ages ("45s", "3m12s", "5h2m", "3d4h").

/// Formats a number of seconds the way `kubectl get` prints an AGE column.
pub fn human(seconds: i64) -> String {
    let s = seconds.max(0);
    let (d, h, m) = (s / 86_400, (s / 3600) % 24, (s / 60) % 60);
    match s {
        0..120 => format!("{s}s"),
        120..600 => format!("{m}m{}s", s % 60),
        600..10_800 => format!("{}m", s / 60),
        10_800..28_800 => format!("{}h{m}m", s / 3600),
        28_800..172_800 => format!("{}h", s / 3600),
        172_800..691_200 => {
            if h == 0 {
                format!("{d}d")
            } else {
                format!("{d}d{h}h")
            }
        }
        _ => format!("{d}d"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ages_read_like_kubectl() {
        let cases = [
            (5, "5s"),
            (119, "119s"),
            (192, "3m12s"),
            (7200, "120m"),
            (18_120, "5h2m"),
            (36_000, "10h"),
            (273_600, "3d4h"),
            (864_000, "10d"),
        ];
        for (s, want) in cases {
            assert_eq!(super::human(s), want, "{s}");
        }
    }
}
