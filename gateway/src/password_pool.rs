//! Argon2 runs here and nowhere else: on threads of its own, as many as the cores, behind as many
//! slots. One password check costs 19 MiB and tens of milliseconds of a core: run one per request,
//! as tokio's blocking pool would, and a flood of sign-ins takes every core and gigabytes, while
//! the store's reads, which share that blocking pool, wait behind it. A request that gets no slot
//! within a short wait is told to come back later (503 with `Retry-After`), so the flood costs
//! its senders, not the other users of the service.

use common::crypto::password::{self, Password};
use std::panic::AssertUnwindSafe;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;
use tokio::sync::{oneshot, OwnedSemaphorePermit, Semaphore};

/// Longest wait for a slot before the request is refused.
pub const SLOT_WAIT: Duration = Duration::from_secs(2);
/// Most threads, whatever the core count: each check holds 19 MiB while it runs.
pub const MOST_THREADS: usize = 8;
/// The nice value of the pool's threads (0 is the gateway's own, 19 the lowest).
const HASHING_NICENESS: i32 = 10;
/// What a refused request is told to wait (`Retry-After`, in seconds).
pub const RETRY_AFTER_SECS: u64 = 5;

#[derive(Debug, thiserror::Error)]
pub enum HashError {
    #[error("every password hashing slot stayed taken")]
    Busy,
    #[error("the password hashing threads stopped")]
    Stopped,
}

type Job = Box<dyn FnOnce() + Send>;

/// The threads and their slots; shared by every request of the gateway.
pub struct PasswordPool {
    slots: Arc<Semaphore>,
    jobs: mpsc::Sender<Job>,
    wait: Duration,
}

/// The right to run one job on the pool, held from before the request's throttle write until its
/// hash is done (even if the request is dropped meanwhile: the thread keeps it to the end).
pub struct Slot {
    permit: OwnedSemaphorePermit,
    jobs: mpsc::Sender<Job>,
}

impl PasswordPool {
    /// One thread and one slot per core, up to [`MOST_THREADS`].
    pub fn for_this_machine() -> std::io::Result<Self> {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
        Self::new(cores.min(MOST_THREADS), SLOT_WAIT)
    }

    /// `threads` threads and as many slots; a request waits at most `wait` for one.
    pub fn new(threads: usize, wait: Duration) -> std::io::Result<Self> {
        let threads = threads.max(1);
        let (jobs, queue) = mpsc::channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        for i in 0..threads {
            let queue = queue.clone();
            std::thread::Builder::new()
                .name(format!("sceau-argon2-{i}"))
                .spawn(move || work(&queue))?;
        }
        Ok(Self {
            slots: Arc::new(Semaphore::new(threads)),
            jobs,
            wait,
        })
    }

    /// A slot, once one is free; [`HashError::Busy`] when none is within the wait.
    pub async fn slot(&self) -> Result<Slot, HashError> {
        match tokio::time::timeout(self.wait, self.slots.clone().acquire_owned()).await {
            Ok(Ok(permit)) => Ok(Slot {
                permit,
                jobs: self.jobs.clone(),
            }),
            Ok(Err(_)) => Err(HashError::Stopped),
            Err(_) => {
                metrics::counter!("sceau_password_hashing_busy_total").increment(1);
                Err(HashError::Busy)
            }
        }
    }
}

/// A pool thread: runs jobs until the pool is dropped.
fn work(queue: &Mutex<mpsc::Receiver<Job>>) {
    // Hashing yields the processor to the rest of the gateway: when a flood keeps every slot busy,
    // the requests of other users still get the cores first. On Linux the nice value is the
    // thread's own, so this lowers only the pool's threads; failing to, they run as they are.
    if let Err(e) = rustix::process::setpriority_process(None, HASHING_NICENESS) {
        tracing::warn!(error = %e, "cannot lower the priority of a password hashing thread");
    }
    loop {
        let job = match queue.lock() {
            Ok(queue) => queue.recv(),
            Err(_) => return,
        };
        let Ok(job) = job else { return };
        // A panicking job loses its answer (the request gets an error), not the thread.
        let _ = std::panic::catch_unwind(AssertUnwindSafe(job));
    }
}

/// Counts one argon2 run on the metrics endpoint: the figure that shows how many guesses were
/// really checked.
fn counted(kind: &'static str) {
    metrics::counter!("sceau_password_hashes_total", "kind" => kind).increment(1);
}

impl Slot {
    /// Whether `candidate` is the password of `stored`; with no stored hash (no such member, or
    /// no password yet) the same work is spent on nothing, so the answer takes as long.
    pub async fn verify(self, stored: Option<String>, candidate: String) -> Result<bool, HashError> {
        self.run(move || {
            counted("verify");
            match stored {
                Some(stored) => password::verify(&stored, &candidate),
                None => {
                    password::verify_against_nothing(&candidate);
                    false
                }
            }
        })
        .await
    }

    /// The hash of `chosen` if `candidate` is the password of `stored` (a password change: both
    /// argon2 runs on one slot).
    pub async fn verify_then_hash(self, stored: Option<String>, candidate: String, chosen: Password) -> Result<Option<String>, HashError> {
        self.run(move || {
            counted("verify");
            let right = stored.is_some_and(|stored| password::verify(&stored, &candidate));
            right.then(|| {
                counted("hash");
                password::hash(&chosen)
            })
        })
        .await
    }

    /// The PHC string of a new password.
    pub async fn hash(self, chosen: Password) -> Result<String, HashError> {
        self.run(move || {
            counted("hash");
            password::hash(&chosen)
        })
        .await
    }

    async fn run<T: Send + 'static>(self, work: impl FnOnce() -> T + Send + 'static) -> Result<T, HashError> {
        let (answer, answered) = oneshot::channel();
        let permit = self.permit;
        let job: Job = Box::new(move || {
            let value = work();
            // Free before answering, so that the next request finds the slot as soon as it can.
            drop(permit);
            let _ = answer.send(value);
        });
        self.jobs.send(job).map_err(|_| HashError::Stopped)?;
        answered.await.map_err(|_| HashError::Stopped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Instant;

    #[tokio::test]
    async fn a_request_waits_for_a_slot_then_is_refused() {
        let pool = PasswordPool::new(1, Duration::from_millis(100)).unwrap();
        let held = pool.slot().await.unwrap();
        let start = Instant::now();
        assert!(matches!(pool.slot().await, Err(HashError::Busy)));
        assert!(start.elapsed() >= Duration::from_millis(100), "{:?}", start.elapsed());
        drop(held);
        assert!(pool.slot().await.is_ok(), "a slot given back is free again");
    }

    /// Twelve requests at once on two slots: never more than two jobs run, each on a thread of
    /// the pool (not tokio's blocking pool, which the store's reads use).
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn no_more_jobs_run_than_there_are_slots() {
        let pool = Arc::new(PasswordPool::new(2, Duration::from_secs(10)).unwrap());
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..12 {
            let (pool, running, most) = (pool.clone(), running.clone(), most.clone());
            tasks.spawn(async move {
                let slot = pool.slot().await.unwrap();
                slot.run(move || {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(20));
                    running.fetch_sub(1, Ordering::SeqCst);
                    std::thread::current().name().unwrap_or_default().to_owned()
                })
                .await
                .unwrap()
            });
        }
        while let Some(thread) = tasks.join_next().await {
            let thread = thread.unwrap();
            assert!(thread.starts_with("sceau-argon2-"), "{thread}");
        }
        assert_eq!(most.load(Ordering::SeqCst), 2);
    }

    /// One real hash and its checks, on the pool.
    #[tokio::test]
    async fn verifies_and_hashes_on_the_pool() {
        let pool = PasswordPool::new(1, SLOT_WAIT).unwrap();
        let chosen = Password::parse("correct horse battery").unwrap();
        let phc = pool.slot().await.unwrap().hash(chosen.clone()).await.unwrap();
        let pool = &pool;
        let verify = |stored: Option<&str>, candidate: &str| {
            let (stored, candidate) = (stored.map(str::to_owned), candidate.to_owned());
            async move { pool.slot().await.unwrap().verify(stored, candidate).await.unwrap() }
        };
        assert!(verify(Some(&phc), "correct horse battery").await);
        assert!(!verify(Some(&phc), "correct horse batterY").await);
        assert!(!verify(None, "correct horse battery").await);
        let slot = pool.slot().await.unwrap();
        assert!(slot.verify_then_hash(Some(phc), "wrong".into(), chosen).await.unwrap().is_none());
    }
}
