//! The parent's side: a few live children, each doing one request at a time. A child that dies or
//! overruns its deadline is killed with its whole process group (the OCR and rendering programs it
//! started included) and reaped; the next request starts a fresh one.

use super::cpu_time::{self, Overrun};
use super::environment;
use super::isolation::IsolationReport;
use super::pause::{Paused, Pauses};
use super::protocol::{self, Response};
use super::scratch::Scratch;
use super::Task;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::BufReader;
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::Semaphore;

/// Requests one child serves before it is replaced, so memory a parser left fragmented is returned.
const USES_PER_CHILD: u32 = 64;
/// Longest start of a child (an analysis child loads the trust list first); not counted in a
/// request's deadline.
const START_DEADLINE: Duration = Duration::from_secs(60);

/// The flag of `sceau sandbox` that lowers its priority.
const LOWER_PRIORITY_FLAG: &str = "--lower-priority";

/// How to start a child: the `sceau` binary itself, as `sceau sandbox`.
#[derive(Debug, Clone)]
pub struct SandboxCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The settings the child reads (`SCEAU_*`), beside the variables every child gets (see
    /// [`environment`]).
    pub settings: Vec<(String, OsString)>,
    /// How a request's deadline is counted.
    pub clock: DeadlineClock,
}

/// How a request's deadline is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeadlineClock {
    /// On the wall clock.
    Wall,
    /// In the child's CPU time (a wait for the CPU is not the document's), with the wall-clock
    /// backstop of [`cpu_time::wall_backstop`].
    Cpu,
    /// In the child's CPU time, and at most this long on the wall clock: where someone waits for
    /// the answer (the edge), a child starved of CPU must not hold it for ten deadlines.
    CpuWithin(Duration),
}

impl DeadlineClock {
    /// How long on the wall clock a request with `deadline` may run, when counted in CPU time.
    fn backstop(self, deadline: Duration) -> Duration {
        match self {
            Self::CpuWithin(backstop) => backstop.max(deadline),
            Self::Wall | Self::Cpu => cpu_time::wall_backstop(deadline),
        }
    }
}

impl SandboxCommand {
    /// The running binary, whose `sandbox` subcommand serves requests within `address_space_mb`.
    pub fn current_exe(address_space_mb: u64) -> std::io::Result<Self> {
        Ok(Self {
            program: std::env::current_exe()?,
            args: vec!["sandbox".to_owned(), "--address-space-mb".to_owned(), address_space_mb.to_string()],
            settings: Vec::new(),
            clock: DeadlineClock::Wall,
        })
    }

    /// Hands the child these settings, by their variable names (`SCEAU_DATA_DIR`).
    pub fn with_settings(mut self, settings: Vec<(String, OsString)>) -> Self {
        self.settings = settings;
        self
    }

    /// Counts a request's deadline in the child's CPU time, and ends it after `backstop` on the
    /// wall clock whatever its CPU time.
    pub fn with_cpu_deadline(mut self, backstop: Duration) -> Self {
        self.clock = DeadlineClock::CpuWithin(backstop);
        self
    }

    /// Asks the child to run `steps` below the service's CPU priority (nice); 0 changes nothing.
    /// Its deadline is then counted in its CPU time: a wait for the CPU is not the document's.
    pub fn with_lower_priority(mut self, steps: u8) -> Self {
        if steps > 0 {
            self.args.extend([LOWER_PRIORITY_FLAG.to_owned(), steps.to_string()]);
            if self.clock == DeadlineClock::Wall {
                self.clock = DeadlineClock::Cpu;
            }
        }
        self
    }

    /// Whether the child's deadline is counted in its CPU time.
    fn counts_cpu_time(&self) -> bool {
        self.clock != DeadlineClock::Wall
    }

    /// Also asks the child to build the analysis engine before it announces itself ready.
    pub fn with_engine(mut self) -> Self {
        self.args.push("--engine".to_owned());
        self
    }
}

/// Why a request got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// The work ran past its deadline; its child was killed.
    #[error("the work took longer than {} s and was stopped", .0.as_secs_f32())]
    TimedOut(Duration),
    /// A lower-priority child waited for the CPU far past its deadline without using it up; it was
    /// killed. The machine is overloaded: not the document's fault.
    #[error("the work waited over {} s for the CPU and was stopped", .0.as_secs_f32())]
    Starved(Duration),
    /// The child was killed by a signal while working: its memory limit (an allocation failed and it
    /// aborted), a stack overflow, or a crash on these bytes.
    #[error("the work exceeded the sandbox's limits ({0})")]
    LimitExceeded(String),
    /// No child was free within the wait the caller allowed: the pool is busy, not the document's
    /// fault.
    #[error("no sandbox child was free within {} s", .0.as_secs_f32())]
    Busy(Duration),
    /// No child could do the work (it could not start, or it refused the request): not the
    /// document's fault.
    #[error("the sandbox is unavailable: {0}")]
    Unavailable(String),
}

/// A pool of sandbox children; cheap to clone.
#[derive(Clone)]
pub struct Sandbox {
    inner: Arc<Inner>,
}

struct Inner {
    command: SandboxCommand,
    /// Bumped by [`Sandbox::renew`]: a child of an older generation is retired instead of reused.
    generation: AtomicU64,
    idle: Mutex<Vec<Worker>>,
    /// One permit per child that may run at once.
    permits: Semaphore,
    /// The children at work, stopped while more urgent work asks for a pause.
    pauses: Pauses,
}

/// One live child.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    pid: u32,
    uses: u32,
    /// The pool's generation when it started.
    generation: u64,
    /// What the child enforced on itself, from its ready frame.
    isolation: IsolationReport,
    /// Its temporary directory, removed once it is gone (declared last: dropped after the child).
    _scratch: Scratch,
}

impl Sandbox {
    /// A pool of at most `children` children, started on demand.
    pub fn new(command: SandboxCommand, children: usize) -> Self {
        Self {
            inner: Arc::new(Inner {
                command,
                generation: AtomicU64::new(0),
                idle: Mutex::new(Vec::new()),
                permits: Semaphore::new(children.max(1)),
                pauses: Pauses::default(),
            }),
        }
    }

    /// Runs `task` on `files` in a child; the child is killed if it has not answered within
    /// `deadline` (counted once a child is free).
    pub async fn run<T: Task>(&self, task: &T, files: &[&[u8]], deadline: Duration) -> Result<T::Output, SandboxError> {
        self.run_waiting(task, files, deadline, None).await
    }

    /// [`Sandbox::run`], giving up with [`SandboxError::Busy`] when no child is free within
    /// `wait`: someone waits for the answer, and a queue behind others' slow files must not
    /// become theirs.
    pub async fn run_within<T: Task>(
        &self,
        task: &T,
        files: &[&[u8]],
        deadline: Duration,
        wait: Duration,
    ) -> Result<T::Output, SandboxError> {
        self.run_waiting(task, files, deadline, Some(wait)).await
    }

    async fn run_waiting<T: Task>(
        &self,
        task: &T,
        files: &[&[u8]],
        deadline: Duration,
        wait: Option<Duration>,
    ) -> Result<T::Output, SandboxError> {
        let body = serde_json::to_value(task).map_err(|e| SandboxError::Unavailable(e.to_string()))?;
        let acquire = self.inner.permits.acquire();
        let acquired = match wait {
            Some(wait) => tokio::time::timeout(wait, acquire).await.map_err(|_| SandboxError::Busy(wait))?,
            None => acquire.await,
        };
        let _permit = acquired.map_err(|_| SandboxError::Unavailable("the sandbox is closed".to_owned()))?;
        let mut worker = match self.take_idle() {
            Some(worker) => worker,
            None => self.spawn().await?,
        };
        let exchange = async {
            protocol::write_request(&mut worker.stdin, T::NAME, body, files).await?;
            protocol::read_response(&mut worker.stdout).await
        };
        let pid = worker.pid;
        let busy = self.inner.pauses.busy(pid);
        let clock = self.inner.command.clock;
        let watched = if self.inner.command.counts_cpu_time() {
            cpu_time::within(pid, deadline, clock.backstop(deadline), exchange).await
        } else {
            tokio::time::timeout(deadline, exchange).await.map_err(|_| Overrun::Cpu)
        };
        drop(busy);
        let answer = match watched {
            Ok(Ok(response)) => response,
            Ok(Err(io_error)) => {
                let status = worker.end().await;
                return Err(classify_death(status, &io_error));
            }
            Err(overrun) => {
                worker.stop().await;
                tracing::warn!(
                    task = T::NAME,
                    pid,
                    deadline_ms = deadline.as_millis() as u64,
                    ?overrun,
                    "sandbox child killed at its deadline"
                );
                return Err(match overrun {
                    Overrun::Cpu => SandboxError::TimedOut(deadline),
                    Overrun::Wall => SandboxError::Starved(clock.backstop(deadline)),
                });
            }
        };
        worker.uses += 1;
        self.give_back(worker).await;
        match answer {
            Response::Done(value) => serde_json::from_value(value).map_err(|e| SandboxError::Unavailable(e.to_string())),
            Response::Refused(message) => Err(SandboxError::Unavailable(message)),
        }
    }

    /// Stops this pool's children at work, and those that start work meanwhile, until the
    /// returned guard is dropped or [`MAX_PAUSE`](super::pause::MAX_PAUSE) has passed: the
    /// batch pool's, while a journey is analysed. Only a pool whose deadlines count CPU time
    /// (a lower-priority one) is paused: on the wall clock a stop would pass for the document's.
    pub fn pause(&self) -> Option<Paused> {
        self.inner.command.counts_cpu_time().then(|| self.inner.pauses.pause())
    }

    /// Retires the idle children and has the busy ones retired once done, so that the next
    /// work starts a child that reads its configuration anew (a trust list copied since).
    pub async fn renew(&self) {
        self.inner.generation.fetch_add(1, Ordering::SeqCst);
        let idle = match self.inner.idle.lock() {
            Ok(mut idle) => std::mem::take(&mut *idle),
            Err(_) => return,
        };
        for worker in idle {
            worker.retire().await;
        }
    }

    fn take_idle(&self) -> Option<Worker> {
        self.inner.idle.lock().ok()?.pop()
    }

    async fn give_back(&self, worker: Worker) {
        if worker.uses >= USES_PER_CHILD || worker.generation != self.inner.generation.load(Ordering::SeqCst) {
            worker.retire().await;
            return;
        }
        if let Ok(mut idle) = self.inner.idle.lock() {
            idle.push(worker);
        }
    }

    /// What the children of this pool enforce on themselves: the report of an idle child, or of
    /// one started for the question (it then waits, idle, for the first work: a role asks at its
    /// start, so its first document does not wait for a child either).
    pub async fn isolation(&self) -> Result<IsolationReport, SandboxError> {
        let _permit = self
            .inner
            .permits
            .acquire()
            .await
            .map_err(|_| SandboxError::Unavailable("the sandbox is closed".to_owned()))?;
        let worker = match self.take_idle() {
            Some(worker) => worker,
            None => self.spawn().await?,
        };
        let report = worker.isolation;
        self.give_back(worker).await;
        Ok(report)
    }

    /// Starts a child and waits for its ready frame, so its start is not charged to a document.
    async fn spawn(&self) -> Result<Worker, SandboxError> {
        let command = &self.inner.command;
        let scratch = Scratch::create(&std::env::temp_dir())
            .map_err(|e| SandboxError::Unavailable(format!("cannot create the child's temporary directory: {e}")))?;
        let mut child = tokio::process::Command::new(&command.program)
            .args(&command.args)
            // Nothing of the service's environment but what is named (see `environment`).
            .env_clear()
            .envs(environment::allowed(std::env::vars_os()))
            .envs(command.settings.iter().map(|(name, value)| (name, value)))
            .env(environment::MALLOC_ARENAS.0, environment::MALLOC_ARENAS.1)
            .env(environment::MIMALLOC_ARENA_RESERVE.0, environment::MIMALLOC_ARENA_RESERVE.1)
            .env("TMPDIR", scratch.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            // Its own group, so a kill reaches the programs it starts (OCR, rendering).
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| SandboxError::Unavailable(format!("cannot start {}: {e}", command.program.display())))?;
        let (Some(stdin), Some(stdout), Some(pid)) = (child.stdin.take(), child.stdout.take(), child.id()) else {
            return Err(SandboxError::Unavailable("the child has no pipes".to_owned()));
        };
        let mut starting = Starting {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            pid,
        };
        let ready = tokio::time::timeout(START_DEADLINE, protocol::read_response(&mut starting.stdout)).await;
        let report = match ready {
            Ok(Ok(Response::Done(report))) => {
                serde_json::from_value::<IsolationReport>(report).map_err(|e| format!("its ready frame is not an isolation report: {e}"))
            }
            Ok(Ok(Response::Refused(message))) => Err(format!("the child could not start: {message}")),
            Ok(Err(error)) => {
                let status = tokio::time::timeout(Duration::from_secs(2), starting.child.wait()).await;
                Err(format!("the child could not start ({status:?}): {error}"))
            }
            Err(_) => Err("the child did not start in time".to_owned()),
        };
        let isolation = match report {
            Ok(report) => report,
            Err(message) => {
                if let Ok(pid) = i32::try_from(starting.pid) {
                    let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
                }
                let _ = starting.child.wait().await;
                return Err(SandboxError::Unavailable(message));
            }
        };
        announce_gaps(&isolation);
        Ok(Worker {
            child: starting.child,
            stdin: starting.stdin,
            stdout: starting.stdout,
            pid: starting.pid,
            uses: 0,
            generation: self.inner.generation.load(Ordering::SeqCst),
            isolation,
            _scratch: scratch,
        })
    }
}

/// A child between its start and its ready frame.
struct Starting {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    pid: u32,
}

/// Says once per process, at the first child's start, what isolation this kernel or these
/// privileges leave out (the roles start a child at their own start, see [`Sandbox::isolation`]).
fn announce_gaps(report: &IsolationReport) {
    static ANNOUNCED: std::sync::Once = std::sync::Once::new();
    ANNOUNCED.call_once(|| {
        let gaps = report.gaps();
        if !gaps.is_empty() {
            let missing: Vec<String> = gaps.iter().map(|f| format!("{}: {}", f.name, f.detail)).collect();
            tracing::warn!(
                missing = missing.join("; "),
                "the sandbox children run with less isolation than they can have"
            );
        }
    });
}

impl Worker {
    /// Kills the child's whole group and reaps it; returns how it ended.
    async fn stop(mut self) -> Option<ExitStatus> {
        self.kill_group();
        self.child.wait().await.ok()
    }

    /// After a broken exchange: lets the child finish dying on its own (so its signal tells why),
    /// then kills what is left of its group and reaps it.
    async fn end(mut self) -> Option<ExitStatus> {
        let natural = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
        self.kill_group();
        match natural {
            Ok(Ok(status)) => Some(status),
            _ => {
                let _ = self.child.wait().await;
                None
            }
        }
    }

    fn kill_group(&self) {
        if let Ok(pid) = i32::try_from(self.pid) {
            // The group may be gone already (the child died and had no helpers): nothing to do then.
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }

    /// Ends an idle child politely: it sees the pipe close and exits.
    async fn retire(mut self) {
        drop(self.stdin);
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await.is_err() {
            let _ = self.child.start_kill();
        }
    }
}

/// A child killed by a signal died on the work (its memory limit makes an allocation fail and the
/// child abort); one that exited by itself could not serve at all.
fn classify_death(status: Option<ExitStatus>, io_error: &std::io::Error) -> SandboxError {
    match status {
        Some(status) => match status.signal() {
            Some(signal) => {
                let name = Signal::try_from(signal).map_or_else(|_| format!("signal {signal}"), |s| s.as_str().to_owned());
                tracing::warn!(signal = name.as_str(), "sandbox child died on its work");
                SandboxError::LimitExceeded(name)
            }
            None => SandboxError::Unavailable(format!("the child exited ({status}) after {io_error}")),
        },
        None => SandboxError::Unavailable(format!("the child vanished after {io_error}")),
    }
}
