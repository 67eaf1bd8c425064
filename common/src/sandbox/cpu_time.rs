//! A deadline counted in the child's CPU time rather than on the wall clock, for children that run
//! below the service's priority: under load they wait for the CPU, and that wait must not pass for
//! a document too costly to analyse. A wall-clock backstop, far above, still ends a child that
//! waits for ever; that one is not the document's fault.

use std::future::Future;
use std::time::{Duration, Instant};

/// How often the child's CPU time is read while it works.
const POLL: Duration = Duration::from_millis(200);
/// The wall-clock backstop of a CPU-time deadline, as a multiple of it…
const WALL_BACKSTOP_FACTOR: u32 = 10;
/// …and at most this long (but never below the deadline): with the reads of its files, a job's
/// delivery must end within its queue lease (10 minutes), or it is handed out again while the
/// first copy still runs.
const WALL_BACKSTOP_CAP: Duration = Duration::from_secs(240);

/// How long on the wall clock a child with a CPU-time `deadline` may run.
pub fn wall_backstop(deadline: Duration) -> Duration {
    (deadline * WALL_BACKSTOP_FACTOR).min(WALL_BACKSTOP_CAP).max(deadline)
}

/// Why a watched exchange was given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overrun {
    /// The child used more CPU than its deadline: the work is too costly.
    Cpu,
    /// The child kept waiting past the backstop without using its CPU time up.
    Wall,
}

/// Runs `exchange` while process `pid` uses at most `deadline` of CPU time (its own, that of the
/// programs it started and reaped, and that of those still running: an OCR run is counted while
/// it runs, not once it ends) and at most `backstop` of wall time.
pub async fn within<T>(pid: u32, deadline: Duration, backstop: Duration, exchange: impl Future<Output = T>) -> Result<T, Overrun> {
    let start = used(pid).unwrap_or_default();
    let backstop = Instant::now() + backstop;
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

/// The CPU time process `pid` has used, user and system, with that of its reaped children and of
/// the programs it runs now (its descendants, through /proc's `children` lists: a handful of
/// reads, where a walk of every process of the machine would cost thousands on a busy host);
/// None when it is gone.
fn used(pid: u32) -> Option<Duration> {
    let own = ticks_of(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)?;
    let running: u64 = descendants(pid)
        .into_iter()
        .filter_map(|helper| std::fs::read_to_string(format!("/proc/{helper}/stat")).ok())
        .filter_map(|stat| running_ticks(&stat))
        .sum();
    let ticks = own + running;
    Some(Duration::from_secs_f64(
        ticks as f64 / rustix::param::clock_ticks_per_second() as f64,
    ))
}

/// The processes below `pid`, read from the `children` list of each of their threads.
fn descendants(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut next = vec![pid];
    while let Some(parent) = next.pop() {
        let Ok(threads) = std::fs::read_dir(format!("/proc/{parent}/task")) else {
            continue;
        };
        for thread in threads.flatten() {
            let Ok(children) = std::fs::read_to_string(thread.path().join("children")) else {
                continue;
            };
            for child in children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()) {
                found.push(child);
                next.push(child);
            }
        }
    }
    found
}

/// The fields of a `/proc/PID/stat` line after the command name in parentheses, which may hold
/// spaces and parentheses: state is the first (field 3 of proc(5)).
fn fields_after_name(stat: &str) -> Option<Vec<&str>> {
    Some(stat[stat.rfind(')')? + 1..].split_whitespace().collect())
}

/// utime + stime + cutime + cstime of a `/proc/PID/stat` line, in clock ticks.
fn ticks_of(stat: &str) -> Option<u64> {
    // utime is field 14, cstime field 17 of proc(5).
    fields_after_name(stat)?.get(11..15)?.iter().map(|f| f.parse::<u64>().ok()).sum()
}

/// utime + stime of a `/proc/PID/stat` line: a process still running, not yet reaped.
fn running_ticks(stat: &str) -> Option<u64> {
    fields_after_name(stat)?.get(11..13)?.iter().map(|f| f.parse::<u64>().ok()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    #[test]
    fn the_backstop_is_ten_deadlines_within_four_minutes_and_never_below_the_deadline() {
        assert_eq!(wall_backstop(Duration::from_secs(3)), Duration::from_secs(30));
        assert_eq!(wall_backstop(Duration::from_secs(120)), Duration::from_secs(240));
        assert_eq!(wall_backstop(Duration::from_secs(600)), Duration::from_secs(600));
    }

    #[test]
    fn the_ticks_are_read_after_the_command_name_whatever_it_holds() {
        let stat = "42 (a) b (c)) S 1 42 42 0 -1 4194304 100 0 0 0 7 3 2 1 20 0 1 0 5 0 0";
        assert_eq!(ticks_of(stat), Some(7 + 3 + 2 + 1));
        assert_eq!(ticks_of("42 (cut"), None);
        assert_eq!(ticks_of("42 (x) S 1"), None);
        assert_eq!(running_ticks(stat), Some(7 + 3));
    }

    /// A process that waits while a program it started spins (as a child waits for Tesseract) is
    /// charged for that program's CPU as it runs, not once it is reaped.
    #[tokio::test]
    async fn a_running_helper_is_counted() {
        use std::os::unix::process::CommandExt;
        let mut leader = Command::new("sh")
            .args(["-c", "sh -c 'while :; do :; done'; true"])
            .process_group(0)
            .spawn()
            .unwrap();
        let started = Instant::now();
        let watched = within(
            leader.id(),
            Duration::from_millis(300),
            wall_backstop(Duration::from_millis(300)),
            std::future::pending::<()>(),
        )
        .await;
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(leader.id() as i32), nix::sys::signal::Signal::SIGKILL);
        leader.wait().unwrap();
        assert_eq!(watched, Err(Overrun::Cpu));
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    }

    /// A process that waits uses no CPU: only the wall-clock backstop ends its watch.
    #[tokio::test]
    async fn a_child_that_waits_is_not_charged_for_it() {
        let mut sleeper = Command::new("sleep").arg("30").stdout(Stdio::null()).spawn().unwrap();
        let started = Instant::now();
        let watched = within(
            sleeper.id(),
            Duration::from_millis(100),
            wall_backstop(Duration::from_millis(100)),
            std::future::pending::<()>(),
        )
        .await;
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
        let watched = within(
            spinner.id(),
            Duration::from_millis(300),
            wall_backstop(Duration::from_millis(300)),
            std::future::pending::<()>(),
        )
        .await;
        spinner.kill().unwrap();
        spinner.wait().unwrap();
        assert_eq!(watched, Err(Overrun::Cpu));
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    }

    #[tokio::test]
    async fn an_answer_in_time_is_returned() {
        let pid = std::process::id();
        assert_eq!(
            within(pid, Duration::from_secs(5), Duration::from_secs(50), async { 7 }).await,
            Ok(7)
        );
    }
}
