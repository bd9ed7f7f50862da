//! Ages as `kubectl get` prints them: apimachinery's `duration.HumanDuration` (two or three
//! significant figures: "70s", "3m10s", "4h", "2d1h", "2y70d").

/// Formats a number of whole seconds exactly as kubectl's AGE column does. Ages a little in
/// the future (clock skew of one second) read "0s"; further in the future, `<invalid>`.
pub fn human(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".to_string();
    }
    let s = seconds.max(0);
    if s < 120 {
        return format!("{s}s");
    }
    let minutes = s / 60;
    if minutes < 10 {
        return two(minutes, "m", s % 60, "s");
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = s / 3600;
    if hours < 8 {
        return two(hours, "h", minutes % 60, "m");
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if hours < 24 * 8 {
        return two(days, "d", hours % 24, "h");
    }
    if hours < 24 * 365 * 2 {
        return format!("{days}d");
    }
    let years = days / 365;
    if hours < 24 * 365 * 8 {
        return two(years, "y", days % 365, "d");
    }
    format!("{years}y")
}

/// `3m10s`, or `3m` when the smaller unit is zero, as HumanDuration writes two figures.
fn two(major: i64, major_unit: &str, minor: i64, minor_unit: &str) -> String {
    match minor {
        0 => format!("{major}{major_unit}"),
        minor => format!("{major}{major_unit}{minor}{minor_unit}"),
    }
}

#[cfg(test)]
mod tests {
    /// apimachinery's own tables (TestHumanDuration, TestHumanDurationBoundaries), in whole
    /// seconds: a duration just under a boundary is the boundary minus one second here.
    #[test]
    fn ages_read_like_kubectl_human_duration() {
        const M: i64 = 60;
        const H: i64 = 3600;
        const D: i64 = 24 * H;
        const Y: i64 = 365 * D;
        let cases = [
            (1, "1s"),
            (70, "70s"),
            (190, "3m10s"),
            (70 * M, "70m"),
            (47 * H, "47h"),
            (49 * H, "2d1h"),
            ((8 * 24 + 2) * H, "8d"),
            (367 * D, "367d"),
            (2 * Y + 25 * H, "2y1d"),
            (8 * Y + 2 * H, "8y"),
            (-2, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (119, "119s"),
            (2 * M, "2m"),
            (2 * M + 1, "2m1s"),
            (10 * M - 1, "9m59s"),
            (10 * M, "10m"),
            (10 * M + 1, "10m"),
            (3 * H - 1, "179m"),
            (3 * H, "3h"),
            (3 * H + M, "3h1m"),
            (8 * H - 1, "7h59m"),
            (8 * H, "8h"),
            (8 * H + 59 * M, "8h"),
            (2 * D - 1, "47h"),
            (2 * D, "2d"),
            (2 * D + H, "2d1h"),
            (8 * D - 1, "7d23h"),
            (8 * D, "8d"),
            (8 * D + 23 * H, "8d"),
            (2 * Y - 1, "729d"),
            (2 * Y, "2y"),
            (2 * Y + 23 * H + 59 * M, "2y"),
            (2 * Y + D - 1, "2y"),
            (2 * Y + D, "2y1d"),
            (2 * Y + 70 * D, "2y70d"),
            (3 * Y, "3y"),
            (7 * Y, "7y"),
            (8 * Y - 1, "7y364d"),
            (8 * Y, "8y"),
            (8 * Y + 364 * D, "8y"),
            (9 * Y, "9y"),
            (3 * M, "3m"),
            (4 * H, "4h"),
        ];
        for (s, want) in cases {
            assert_eq!(super::human(s), want, "{s}s");
        }
    }
}
