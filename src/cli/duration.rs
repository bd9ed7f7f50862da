//! Duration flags, as kubectl takes them (Go's `time.ParseDuration`): one type,
//! [`KubeDuration`], and one parser for `--stuck-after`, `--request-timeout` and `--timeout`.
//!
//! Ours, not kube-core's `kube::core::Duration` (5.0), which parses the same units but not
//! exactly what kubectl accepts: it takes `""`, `-`, `--5s`, `+-5s` and `1h0` (Go refuses
//! each), durations past Go's limit of an int64 of nanoseconds (about 2,562,047 h), and panics
//! on one too big for a `std::time::Duration` (`9999999999999999999999h`), where a flag must
//! be refused with exit 1. The test below pins those differences, so it fails, and says to
//! switch, once kube-core parses as Go does.

use std::str::FromStr;
use std::time::Duration;

/// A duration flag (`90s`, `15m`, `1h30m`, `500ms`; `0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KubeDuration(pub Duration);

impl KubeDuration {
    /// `--request-timeout` also takes a bare number of seconds, as kubectl does (client-go
    /// reads an integer as seconds before it tries a duration).
    pub fn parse_or_seconds(s: &str) -> Result<KubeDuration, String> {
        match s.trim().parse::<u64>() {
            Ok(n) => Ok(KubeDuration(Duration::from_secs(n))),
            Err(_) => s.parse(),
        }
    }

    /// Whole seconds, as the analysis counts ages.
    pub fn seconds(self) -> i64 {
        i64::try_from(self.0.as_secs()).unwrap_or(i64::MAX)
    }

    /// `None` for zero ("no limit", as kubectl's `--request-timeout=0`).
    pub fn limit(self) -> Option<Duration> {
        (!self.0.is_zero()).then_some(self.0)
    }
}

impl FromStr for KubeDuration {
    type Err = String;

    fn from_str(s: &str) -> Result<KubeDuration, String> {
        parse_go_duration(s).map(KubeDuration)
    }
}

/// Parses a duration as kubectl takes one (Go's `time.ParseDuration`): a sequence of decimal
/// numbers, each with a unit, such as `90s`, `15m`, `4h`, `1h30m`, `1.5h`; `ns`, `us`, `µs`,
/// `ms`, `s`, `m`, `h`; `0` alone needs none. Negative durations are refused (no flag takes
/// one), and so is what overflows Go's int64 of nanoseconds.
pub fn parse_go_duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("invalid duration {s:?}: use a number with a unit, such as 90s, 15m, 4h or 1h30m");
    let t = s.trim();
    if t == "0" {
        return Ok(Duration::ZERO);
    }
    if t.is_empty() || t.starts_with('-') {
        return Err(bad());
    }
    let mut rest = t.strip_prefix('+').unwrap_or(t);
    let mut nanos: f64 = 0.0;
    while !rest.is_empty() {
        let num_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        if num_len == 0 {
            return Err(bad());
        }
        let n: f64 = rest[..num_len].parse().map_err(|_| bad())?;
        rest = &rest[num_len..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return Err(bad()),
        };
        rest = &rest[unit_len..];
        nanos += n * scale;
    }
    // Go refuses what overflows an int64 of nanoseconds (about 292 years)
    if !nanos.is_finite() || nanos > i64::MAX as f64 {
        return Err(bad());
    }
    Ok(Duration::from_nanos(nanos.round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whole seconds (rounded down), as `--stuck-after` counts them.
    fn parse_duration(s: &str) -> Result<i64, String> {
        s.parse::<KubeDuration>().map(KubeDuration::seconds)
    }

    #[test]
    fn durations_parse_as_kubectl_takes_them() {
        assert_eq!(parse_duration("90s"), Ok(90));
        assert_eq!(parse_duration("15m"), Ok(900));
        assert_eq!(parse_duration("4h"), Ok(14_400));
        assert_eq!(parse_duration("1h30m"), Ok(5400));
        assert_eq!(parse_duration("1.5h"), Ok(5400));
        assert_eq!(parse_duration("2h45m30s"), Ok(9930));
        assert_eq!(parse_duration("1500ms"), Ok(1));
        assert_eq!(parse_duration("0"), Ok(0));
        assert_eq!(parse_go_duration("500ms"), Ok(Duration::from_millis(500)));
        for bad in ["", "1", "h", "-1h", "1d", "1h x", "abc", "1..5h"] {
            assert!(parse_duration(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn durations_are_parsed_alike_and_request_timeouts_also_take_seconds() {
        let d = |s: &str| s.parse::<KubeDuration>().map(|d| d.0);
        assert_eq!(d("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(d("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(d("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(d("0"), Ok(Duration::ZERO));
        for bad in ["60", "1d", "-1h", "soon"] {
            assert!(d(bad).is_err(), "{bad}");
        }
        let r = |s: &str| KubeDuration::parse_or_seconds(s).map(|d| d.limit());
        assert_eq!(r("0"), Ok(None));
        assert_eq!(r("5"), Ok(Some(Duration::from_secs(5))));
        assert_eq!(r("30s"), Ok(Some(Duration::from_secs(30))));
        assert_eq!(r("1m"), Ok(Some(Duration::from_secs(60))));
        assert_eq!(r("500ms"), Ok(Some(Duration::from_millis(500))));
        assert!(r("soon").is_err());
        assert_eq!(KubeDuration(Duration::from_millis(1500)).seconds(), 1);
    }

    /// Why kube-core's parser is not used (see the module's note): it takes what Go refuses.
    /// When this fails, kube-core parses as Go does, and ours can go.
    #[test]
    fn kube_cores_duration_parser_takes_what_kubectl_refuses() {
        for go_refuses in ["", "-", "--5s", "+-5s", "1h0", "3000000h"] {
            assert!(go_refuses.parse::<kube::core::Duration>().is_ok(), "kube-core now refuses {go_refuses:?}");
            assert!(parse_go_duration(go_refuses).is_err(), "{go_refuses:?}");
        }
        let huge = std::panic::catch_unwind(|| "9999999999999999999999h".parse::<kube::core::Duration>());
        assert!(huge.is_err(), "kube-core now refuses an overflow instead of panicking");
        assert!(parse_go_duration("9999999999999999999999h").is_err());
        // where both parse, they agree
        for s in ["90s", "1h30m", "1.5h", "500ms", "12µs", "0"] {
            let theirs: Duration = s.parse::<kube::core::Duration>().unwrap().into();
            assert_eq!(Ok(theirs), parse_go_duration(s), "{s}");
        }
    }
}
