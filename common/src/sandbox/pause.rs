//! Preemption of a pool's work by more urgent work on the same machine: while a journey is
//! analysed, the batch pool's busy children (and the programs they started) are stopped with
//! SIGSTOP and continued afterwards. A lower priority (nice) already gives the journey the CPU
//! first, but the batch analysis on the other core still shares the caches and the memory
//! bandwidth with it: +10 ms on a 150 ms journey here, enough to put its p95 past 1.2× idle.
//!
//! A pause is bounded by a budget that only running time refills ([`MAX_PAUSE`] at most, one
//! second of budget per second run): under an endless stream of journeys, batch children still
//! run at least half the time, so a batch is slowed, never starved.

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The longest a pool's children stay stopped in one go, and the most budget that builds up.
pub const MAX_PAUSE: Duration = Duration::from_secs(1);
/// The least budget a pause starts with: stopping children for less is not worth the signals.
const MIN_PAUSE: Duration = Duration::from_millis(50);

/// The children of one pool that may be paused, and the pauses asked for.
#[derive(Clone, Default)]
pub(super) struct Pauses {
    state: Arc<Mutex<State>>,
}

struct State {
    /// Pauses asked for and not released yet.
    holds: usize,
    /// Whether the busy children are kept stopped now.
    stopping: bool,
    /// Bumped at each stop, so that the timer of an earlier one does nothing.
    epoch: u64,
    /// The children at work (each the leader of its process group).
    busy: HashSet<u32>,
    /// The children stopped by the current pause, to continue at its end.
    stopped: Vec<u32>,
    /// Time left to spend stopped.
    budget: Duration,
    /// When the budget was last brought up to date.
    updated: Option<Instant>,
}

impl Default for State {
    fn default() -> Self {
        Self {
            holds: 0,
            stopping: false,
            epoch: 0,
            busy: HashSet::new(),
            stopped: Vec::new(),
            budget: MAX_PAUSE,
            updated: None,
        }
    }
}

impl State {
    /// Spends the time stopped since the last update, or earns the time run.
    fn settle(&mut self, now: Instant) {
        let elapsed = self.updated.map_or(Duration::ZERO, |then| now.saturating_duration_since(then));
        self.budget = if self.stopping {
            self.budget.saturating_sub(elapsed)
        } else {
            (self.budget + elapsed).min(MAX_PAUSE)
        };
        self.updated = Some(now);
    }

    /// Continues every child this pause stopped.
    fn resume(&mut self) {
        self.stopping = false;
        for pid in self.stopped.drain(..) {
            signal_group(pid, Signal::SIGCONT);
        }
    }
}

impl Pauses {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only ever guards signals already sent: the state is still sound.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Stops the busy children until the returned guard is dropped, within the budget. Outside a
    /// Tokio runtime (no timer to bound the pause) nothing is stopped.
    pub(super) fn pause(&self) -> Paused {
        let mut state = self.lock();
        let now = Instant::now();
        state.settle(now);
        state.holds += 1;
        let budget = state.budget;
        if state.stopping || budget < MIN_PAUSE {
            return Paused { pauses: self.clone() };
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return Paused { pauses: self.clone() };
        };
        state.stopping = true;
        state.epoch += 1;
        let busy: Vec<u32> = state.busy.iter().copied().collect();
        for pid in busy {
            signal_group(pid, Signal::SIGSTOP);
            state.stopped.push(pid);
        }
        let (pauses, epoch) = (self.clone(), state.epoch);
        runtime.spawn(async move {
            tokio::time::sleep(budget).await;
            pauses.expire(epoch);
        });
        Paused { pauses: self.clone() }
    }

    /// Ends the pause numbered `epoch` once its budget is spent, even if it is still held.
    fn expire(&self, epoch: u64) {
        let mut state = self.lock();
        if state.stopping && state.epoch == epoch {
            state.settle(Instant::now());
            state.resume();
        }
    }

    fn release(&self) {
        let mut state = self.lock();
        state.holds = state.holds.saturating_sub(1);
        if state.holds == 0 && state.stopping {
            state.settle(Instant::now());
            state.resume();
        }
    }

    /// Counts child `pid` at work until the returned guard is dropped; stopped at once while a
    /// pause lasts.
    pub(super) fn busy(&self, pid: u32) -> Busy {
        let mut state = self.lock();
        state.busy.insert(pid);
        if state.stopping {
            signal_group(pid, Signal::SIGSTOP);
            state.stopped.push(pid);
        }
        drop(state);
        Busy { pauses: self.clone(), pid }
    }

    fn idle(&self, pid: u32) {
        let mut state = self.lock();
        state.busy.remove(&pid);
        // Stopped just after it answered, it would stay stopped while idle: continued now.
        if let Some(at) = state.stopped.iter().position(|p| *p == pid) {
            state.stopped.swap_remove(at);
            signal_group(pid, Signal::SIGCONT);
        }
    }
}

/// A pause asked for: the pool's busy children run again when the last one is dropped.
#[must_use = "the children are continued when this is dropped"]
pub struct Paused {
    pauses: Pauses,
}

impl Drop for Paused {
    fn drop(&mut self) {
        self.pauses.release();
    }
}

/// A child counted at work; it leaves the count when this is dropped.
pub(super) struct Busy {
    pauses: Pauses,
    pid: u32,
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.pauses.idle(self.pid);
    }
}

fn signal_group(pid: u32, signal: Signal) {
    if let Ok(pid) = i32::try_from(pid) {
        // The group may be gone already (the child died at its work): nothing to do then.
        let _ = killpg(Pid::from_raw(pid), signal);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state of process `pid` in /proc: `T` when stopped.
    fn run_state(pid: u32) -> char {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        stat.rsplit(')').next().and_then(|rest| rest.trim().chars().next()).unwrap_or('?')
    }

    async fn wait_for_state(pid: u32, wanted: char) -> char {
        for _ in 0..100 {
            if run_state(pid) == wanted {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        run_state(pid)
    }

    /// A process group that spins until dropped (killed and reaped even when a test fails).
    struct Spinner(std::process::Child);

    impl Spinner {
        fn start() -> Self {
            use std::os::unix::process::CommandExt;
            let child = std::process::Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .process_group(0)
                .spawn()
                .expect("sh starts");
            Self(child)
        }

        fn id(&self) -> u32 {
            self.0.id()
        }
    }

    impl Drop for Spinner {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    #[tokio::test]
    async fn a_pause_stops_the_busy_children_and_its_end_continues_them() {
        let child = Spinner::start();
        let pauses = Pauses::default();
        let busy = pauses.busy(child.id());
        let paused = pauses.pause();
        assert_eq!(wait_for_state(child.id(), 'T').await, 'T');
        drop(paused);
        assert_eq!(wait_for_state(child.id(), 'R').await, 'R');
        drop(busy);
    }

    #[tokio::test]
    async fn a_child_that_starts_work_during_a_pause_is_stopped_and_one_that_ends_is_continued() {
        let child = Spinner::start();
        let pauses = Pauses::default();
        let paused = pauses.pause();
        let busy = pauses.busy(child.id());
        assert_eq!(wait_for_state(child.id(), 'T').await, 'T');
        drop(busy);
        assert_eq!(wait_for_state(child.id(), 'R').await, 'R', "an idle child is never left stopped");
        drop(paused);
    }

    #[tokio::test]
    async fn a_pause_held_past_its_budget_ends_and_the_next_waits_for_budget() {
        let child = Spinner::start();
        let pauses = Pauses::default();
        let _busy = pauses.busy(child.id());
        let paused = pauses.pause();
        assert_eq!(wait_for_state(child.id(), 'T').await, 'T');
        tokio::time::sleep(MAX_PAUSE).await;
        assert_eq!(
            wait_for_state(child.id(), 'R').await,
            'R',
            "held past its budget, the pause is over"
        );
        drop(paused);
        let again = pauses.pause();
        let stopped = pauses.lock().stopping;
        drop(again);
        assert!(!stopped, "with no budget left, a new pause stops nothing");
    }

    #[test]
    fn the_budget_is_spent_while_stopped_and_earned_back_while_running() {
        let start = Instant::now();
        let mut state = State::default();
        state.settle(start);
        state.stopping = true;
        state.settle(start + Duration::from_millis(700));
        assert_eq!(state.budget, Duration::from_millis(300));
        state.stopping = false;
        state.settle(start + Duration::from_millis(1_000));
        assert_eq!(state.budget, Duration::from_millis(600));
        state.settle(start + Duration::from_secs(10));
        assert_eq!(state.budget, MAX_PAUSE, "never more than one pause's worth");
    }

    #[test]
    fn outside_a_runtime_nothing_is_stopped() {
        let pauses = Pauses::default();
        let _paused = pauses.pause();
        assert!(!pauses.lock().stopping);
    }
}
