//! A deadline counted in the child's CPU time rather than on the wall clock, for children that run
//! below the service's priority: under load they wait for the CPU, and that wait must not pass for
//! a document too costly to analyse. A wall-clock backstop, far above, still ends a child that
//! waits for ever; that one is not the document's fault.

use std::future::Future;
use std::time::{Duration, Instant};

/// How often the child's CPU time is read while it works.
const POLL: Duration = Duration::from_millis(200);
/// The wall-clock backstop of a CPU-time deadline, as a multiple of it.
pub const WALL_BACKSTOP_FACTOR: u32 = 10;

/// Why a watched exchange was given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overrun {
    /// The child used more CPU than its deadline: the work is too costly.
    Cpu,
    /// The child kept waiting past the backstop without using its CPU time up.
    Wall,
}

/// Runs `exchange` while process `pid` uses at most `deadline` of CPU time (its own and that of
/// the programs it started and reaped) and at most `WALL_BACKSTOP_FACTOR` times that of wall time.
pub async fn within<T>(pid: u32, deadline: Duration, exchange: impl Future<Output = T>) -> Result<T, Overrun> {
    let start = used(pid).unwrap_or_default();
    let backstop = Instant::now() + deadline * WALL_BACKSTOP_FACTOR;
    let mut poll = tokio::time::interval(POLL);
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(exchange);
    loop {
        tokio::select! {
            done = &mut exchange => return Ok(done),
            _ = poll.tick() => {
                // A child gone from /proc is about to break the exchange, which says why.
                if used(pid).is_some_and(|now| now.saturating_sub(start) > deadline) {
                    return Err(Overrun::Cpu);
                }
                if Instant::now() >= backstop {
                    return Err(Overrun::Wall);
                }
            }
        }
    }
}

/// The CPU time process `pid` has used, user and system, with that of its reaped children; None
/// when it is gone.
fn used(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    ticks_of(&stat).map(|ticks| Duration::from_secs_f64(ticks as f64 / rustix::param::clock_ticks_per_second() as f64))
}

/// utime + stime + cutime + cstime of a `/proc/PID/stat` line, in clock ticks. The command name
/// in parentheses may hold spaces and parentheses: the fields are counted after the last `)`.
fn ticks_of(stat: &str) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    // After the name: state (3), ppid (4), … utime is field 14, cstime field 17 of proc(5).
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    fields.get(11..15)?.iter().map(|f| f.parse::<u64>().ok()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    #[test]
    fn the_ticks_are_read_after_the_command_name_whatever_it_holds() {
        let stat = "42 (a) b (c)) S 1 42 42 0 -1 4194304 100 0 0 0 7 3 2 1 20 0 1 0 5 0 0";
        assert_eq!(ticks_of(stat), Some(7 + 3 + 2 + 1));
        assert_eq!(ticks_of("42 (cut"), None);
        assert_eq!(ticks_of("42 (x) S 1"), None);
    }

    /// A process that waits uses no CPU: only the wall-clock backstop ends its watch.
    #[tokio::test]
    async fn a_child_that_waits_is_not_charged_for_it() {
        let mut sleeper = Command::new("sleep").arg("30").stdout(Stdio::null()).spawn().unwrap();
        let started = Instant::now();
        let watched = within(sleeper.id(), Duration::from_millis(100), std::future::pending::<()>()).await;
        sleeper.kill().unwrap();
        sleeper.wait().unwrap();
        assert_eq!(watched, Err(Overrun::Wall));
        assert!(started.elapsed() >= Duration::from_secs(1), "{:?}", started.elapsed());
    }

    /// A process that spins is stopped once it used its CPU time, long before the backstop.
    #[tokio::test]
    async fn a_child_that_spins_is_stopped_at_its_cpu_time() {
        let mut spinner = Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap();
        let started = Instant::now();
        let watched = within(spinner.id(), Duration::from_millis(300), std::future::pending::<()>()).await;
        spinner.kill().unwrap();
        spinner.wait().unwrap();
        assert_eq!(watched, Err(Overrun::Cpu));
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    }

    #[tokio::test]
    async fn an_answer_in_time_is_returned() {
        let pid = std::process::id();
        assert_eq!(within(pid, Duration::from_secs(5), async { 7 }).await, Ok(7));
    }
}
