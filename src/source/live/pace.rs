//! How often a follower (`--watch`) may ask the server again, whatever the server does: the
//! pacing of client-go's reflector, and a bound on the watch's requests together. Pure: every
//! decision takes the time it is made at, so it is tested without a clock.
//!
//! - The first problem after a healthy stream (or the first stream) is asked again at once, as
//!   the reflector resumes a stream that ended; only what follows backs off.
//! - [`Backoff`]: the reflector's `NewExponentialBackoffManager(800ms, 30s, 2min, 2.0, 1.0)`
//!   (client-go `tools/cache/reflector.go`): a wait that starts at 800 ms and doubles up to
//!   30 s, each with up to as much again of random jitter (so it ends at [30 s, 60 s), about
//!   0.02 requests a second per follower), back to 800 ms once nothing has backed off for two
//!   minutes, or after a healthy stream. It paces relists after 410 Gone, streams that end
//!   early (a server closing every stream after one event would otherwise be asked again at
//!   once, about a thousand times a second) and failed attempts.
//! - [`Bucket`]: every follower's attempts after its first together, at most client-go's
//!   default client rate (5 a second, bursts of 10): a server that ends every stream at once
//!   is asked again at most that often however many reads are followed.
//! - [`Trouble`]: how long a follower has been failing, when to say so (a warning line after
//!   [`WARN_AFTER`]) and when to give up: a failure that will not go away by asking again (the
//!   watch forbidden, an answer past the memory budget) soon, the rest (a server restarting,
//!   refusing connections, answering 5xx or 410, ending every stream) after [`GIVE_UP`].

use std::time::{Duration, Instant};

use super::http::Failure;

/// The first wait.
pub const INITIAL: Duration = Duration::from_millis(800);
/// The longest wait before jitter.
pub const CAP: Duration = Duration::from_secs(30);
/// With no backoff for this long, the next starts again at [`INITIAL`].
pub const RESET: Duration = Duration::from_secs(120);
/// A stream that stayed open this long was healthy: the backoff and the trouble start over,
/// and its end (the server's timeout, or ours) is resumed at once.
pub const HEALTHY: Duration = Duration::from_secs(10);
/// Failing this long, or [`WARN_PROBLEMS`] times in a row, a follower says so (once, until it
/// recovers).
pub const WARN_AFTER: Duration = Duration::from_secs(10);
/// See [`WARN_AFTER`]: with the backoff, the third problem in a row comes 2.4 s to 4.8 s after
/// the first.
pub const WARN_PROBLEMS: u32 = 3;
/// Failing this long with failures that may pass, a follower gives up (exit 1).
pub const GIVE_UP: Duration = Duration::from_secs(120);
/// Failures in a row that asking again will not change, after which a follower gives up.
pub const PERMANENT_ATTEMPTS: u32 = 3;
/// Requests a second of every follower together, after their first ones.
pub const RATE: f64 = 5.0;
/// And in a burst.
pub const BURST: f64 = 10.0;

/// A number in [0, 1) without a crate: the std hasher's per-process random keys.
pub fn random01() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u8(0);
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// The reflector's exponential backoff with jitter.
#[derive(Debug)]
pub struct Backoff {
    step: Duration,
    last: Option<Instant>,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff { step: INITIAL, last: None }
    }
}

impl Backoff {
    /// The wait before the next attempt, at `now`; `jitter` in [0, 1).
    pub fn next(&mut self, now: Instant, jitter: f64) -> Duration {
        if self.last.is_some_and(|l| now.saturating_duration_since(l) > RESET) {
            self.step = INITIAL;
        }
        let d = self.step;
        self.step = (self.step * 2).min(CAP);
        self.last = Some(now);
        d + d.mul_f64(jitter.clamp(0.0, 1.0))
    }

    /// After a healthy stream.
    pub fn reset(&mut self) {
        *self = Backoff::default();
    }
}

/// A token bucket over every follower's attempts.
#[derive(Debug)]
pub struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    /// A full bucket at `now`.
    pub fn new(now: Instant) -> Bucket {
        Bucket { tokens: BURST, at: now }
    }

    /// Takes a token at `now`: how long to wait for it (zero when one was there). The token
    /// is the caller's once it has waited: a later caller waits for the next one.
    pub fn take(&mut self, now: Instant) -> Duration {
        let refill = now.saturating_duration_since(self.at).as_secs_f64() * RATE;
        self.tokens = (self.tokens + refill).min(BURST) - 1.0;
        self.at = now.max(self.at);
        if self.tokens >= 0.0 { Duration::ZERO } else { Duration::from_secs_f64(-self.tokens / RATE) }
    }
}

/// Why an attempt did not give a healthy stream.
#[derive(Debug, Clone)]
pub enum Problem {
    /// The stream ended before [`HEALTHY`] (after `after`).
    EndedEarly {
        /// How long it lasted.
        after: Duration,
    },
    /// 410 Gone: the history is no longer there (a relist follows).
    Expired,
    /// The request failed.
    Failed(Failure),
}

/// How long asking again may help with a problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lasting {
    /// It may pass (a restart, an overloaded server, a compaction): waited for up to [`GIVE_UP`].
    Passing,
    /// The same answer would come again (forbidden, not found, not decodable): a few attempts.
    Permanent,
    /// Asking again would only do harm (an answer past the memory budget): at once.
    Fatal,
}

impl Problem {
    /// How long asking again may help.
    pub fn lasting(&self) -> Lasting {
        match self {
            Problem::EndedEarly { .. } | Problem::Expired => Lasting::Passing,
            Problem::Failed(f) => match f {
                Failure::TooLarge(_) | Failure::OverBudget(_) => Lasting::Fatal,
                Failure::Status { code, .. } if matches!(code, 408 | 410 | 429) || *code >= 500 => Lasting::Passing,
                Failure::Timeout(_) | Failure::Transport { .. } => Lasting::Passing,
                _ => Lasting::Permanent,
            },
        }
    }

    /// What went wrong, for the warning and the error.
    pub fn describe(&self) -> String {
        match self {
            Problem::EndedEarly { after } => {
                format!("the server ends every watch early (the last after {} ms)", after.as_millis())
            }
            Problem::Expired => "the server answers 410 Gone (its history is gone) to every watch".into(),
            Problem::Failed(f) => f.describe(),
        }
    }
}

/// What a follower does after a problem.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// Waits, and asks again.
    Retry,
    /// Says it keeps failing (once), waits, and asks again.
    Warn {
        /// Since the first failure after the last healthy stream.
        failing_for: Duration,
    },
    /// Gives up.
    GiveUp,
}

/// A follower's failures since its last healthy stream.
#[derive(Debug, Default)]
pub struct Trouble {
    since: Option<Instant>,
    problems: u32,
    permanent: u32,
    warned: bool,
}

impl Trouble {
    /// A problem at `now`.
    pub fn record(&mut self, now: Instant, p: &Problem) -> Next {
        let since = *self.since.get_or_insert(now);
        let failing_for = now.saturating_duration_since(since);
        self.problems += 1;
        match p.lasting() {
            Lasting::Fatal => return Next::GiveUp,
            Lasting::Permanent => {
                self.permanent += 1;
                if self.permanent >= PERMANENT_ATTEMPTS {
                    return Next::GiveUp;
                }
            }
            Lasting::Passing => {
                self.permanent = 0;
                if failing_for >= GIVE_UP {
                    return Next::GiveUp;
                }
            }
        }
        if (failing_for >= WARN_AFTER || self.problems >= WARN_PROBLEMS) && !self.warned {
            self.warned = true;
            return Next::Warn { failing_for };
        }
        Next::Retry
    }

    /// Whether nothing has failed since the last healthy stream (or the start).
    pub fn is_clear(&self) -> bool {
        self.since.is_none()
    }

    /// A healthy stream: whether a warning had been given (and now the trouble is over).
    pub fn clear(&mut self) -> bool {
        let warned = self.warned;
        *self = Trouble::default();
        warned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(secs: f64) -> Duration {
        Duration::from_secs_f64(secs)
    }

    #[test]
    fn the_backoff_doubles_from_800ms_to_30s_with_jitter_and_starts_over_after_two_quiet_minutes() {
        let t0 = Instant::now();
        let mut b = Backoff::default();
        let waits: Vec<Duration> = (0..8).map(|i| b.next(t0 + s(i as f64), 0.0)).collect();
        assert_eq!(waits, [s(0.8), s(1.6), s(3.2), s(6.4), s(12.8), s(25.6), s(30.0), s(30.0)]);
        // jitter: up to as much again
        assert_eq!(b.next(t0 + s(9.0), 0.5), s(45.0));
        // two minutes without a backoff: from the start
        assert_eq!(b.next(t0 + s(9.0 + 121.0), 0.0), s(0.8));
        b.next(t0 + s(200.0), 0.0);
        b.reset();
        assert_eq!(b.next(t0 + s(201.0), 0.0), s(0.8));
        for _ in 0..100 {
            assert!((0.0..1.0).contains(&random01()));
        }
    }

    #[test]
    fn the_bucket_lets_a_burst_through_then_five_a_second() {
        let t0 = Instant::now();
        let mut b = Bucket::new(t0);
        for _ in 0..10 {
            assert_eq!(b.take(t0), Duration::ZERO);
        }
        // the eleventh waits for a fifth of a second, the twelfth for two fifths
        assert_eq!(b.take(t0), s(0.2));
        assert_eq!(b.take(t0), s(0.4));
        // however many ask at once, over 10 s no more than 10 + 50 get through without waiting
        let mut b = Bucket::new(t0);
        let mut free = 0;
        for i in 0..10_000 {
            if b.take(t0 + s(i as f64 / 1000.0)) == Duration::ZERO {
                free += 1;
            }
        }
        assert!(free <= 60, "{free}");
    }

    #[test]
    fn trouble_warns_once_then_gives_up_after_two_minutes_of_passing_failures() {
        let t0 = Instant::now();
        let mut t = Trouble::default();
        let refused = Problem::Failed(Failure::Timeout(s(5.0)));
        assert_eq!(t.record(t0, &refused), Next::Retry);
        assert_eq!(t.record(t0 + s(11.0), &refused), Next::Warn { failing_for: s(11.0) });
        assert_eq!(t.record(t0 + s(40.0), &Problem::EndedEarly { after: s(0.01) }), Next::Retry);
        assert_eq!(t.record(t0 + s(120.0), &refused), Next::GiveUp);
        // or the third in a row, however soon
        let mut t = Trouble::default();
        assert_eq!(t.record(t0, &Problem::Expired), Next::Retry);
        assert_eq!(t.record(t0 + s(1.0), &Problem::Expired), Next::Retry);
        assert_eq!(t.record(t0 + s(3.0), &Problem::Expired), Next::Warn { failing_for: s(3.0) });
        // a healthy stream in between starts it over, and says the warning was given
        let mut t = Trouble::default();
        assert!(t.is_clear());
        t.record(t0, &refused);
        assert!(!t.is_clear());
        t.record(t0 + s(15.0), &refused);
        assert!(t.clear());
        assert!(t.is_clear());
        assert_eq!(t.record(t0 + s(130.0), &refused), Next::Retry);
        assert!(!t.clear());
    }

    #[test]
    fn what_asking_again_cannot_change_ends_sooner() {
        let t0 = Instant::now();
        let forbidden =
            Problem::Failed(Failure::Status { code: 403, reason: "Forbidden".into(), message: String::new() });
        let mut t = Trouble::default();
        assert_eq!(t.record(t0, &forbidden), Next::Retry);
        assert_eq!(t.record(t0 + s(1.0), &forbidden), Next::Retry);
        assert_eq!(t.record(t0 + s(3.0), &forbidden), Next::GiveUp);
        let mut t = Trouble::default();
        assert_eq!(t.record(t0, &Problem::Failed(Failure::OverBudget(64))), Next::GiveUp);
        let unavailable = Problem::Failed(Failure::Status { code: 503, reason: String::new(), message: String::new() });
        assert_eq!(unavailable.lasting(), Lasting::Passing);
    }
}
