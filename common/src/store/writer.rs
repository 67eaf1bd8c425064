//! The writer thread and its group commit: one flush of the file system makes a group of
//! transactions durable, and with them every file written beforehand on the same file system
//! (a deposit's encrypted document), before any of them is answered.
//!
//! SQLite commits with `synchronous=NORMAL` (in WAL mode: consistent after a power cut, but the
//! last commits may be lost), then a flusher thread calls `syncfs` once for all the transactions
//! committed since its last flush. A deposit thus costs one flush of the disk, as a bare write
//! and `fdatasync` would, instead of two (the blob's and the log's); concurrent writers share
//! one. The writer does not wait for a flush: it commits the next transactions while the
//! flusher makes the previous ones durable, so a flush (a quarter of a millisecond to a few)
//! no longer holds every other write of the process behind it.
//!
//! Nothing is answered, and so nothing leaves the process, before every change committed up to
//! its own transaction is on disk: a transaction that changed nothing (an idle consumer looking
//! for a message) still waits for the changes it may have read, but costs no flush of its own.
//!
//! A request about to write once it has sealed its files (a deposit) announces its write
//! ([`Announced`]). The flusher about to flush waits a little for the writes announced and not
//! yet in its hands, as PostgreSQL's `commit_delay` waits for sibling transactions: each of them
//! would otherwise need a flush of its own right after this one. Alone, a write is flushed at
//! once.

use super::StoreError;
use rusqlite::Connection;
use std::fs::File;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// How long a flush waits at most for the writes announced before it: about the time this
/// machine takes to seal and write a 1 MB document (larger ones are not waited for in full).
const GROUP_WAIT: Duration = Duration::from_millis(1);
/// How often the waiting flusher looks whether an announced write was given up (refused before
/// it committed): such a write sends nothing that would wake it.
const GROUP_LOOK: Duration = Duration::from_micros(100);

/// What a finished transaction does once its flush is known: answer its caller.
pub(super) type Completion = Box<dyn FnOnce(Result<(), FlushError>) + Send>;

/// One transaction for the writer thread; it returns its completion, called after the flush.
pub(super) type WriteJob = Box<dyn FnOnce(&mut Connection) -> Finished + Send>;

/// A transaction run by the writer: its completion, and the announcement of the write, if any,
/// which the flusher withdraws once it holds the commit (see [`wait_for_announced`]).
pub(super) struct Finished {
    pub(super) complete: Completion,
    pub(super) announced: Option<Announced>,
}

/// The flush after a group failed: its transactions are committed but may not be on disk.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("cannot flush the database's file system: {0}")]
pub struct FlushError(nix::errno::Errno);

impl From<FlushError> for StoreError {
    fn from(e: FlushError) -> Self {
        StoreError::Flush(std::io::Error::from(e.0))
    }
}

/// A handle on the file system that holds the database, to flush it.
pub(super) struct FileSystem {
    directory: File,
    /// Set by tests: every flush fails, as on a disk that refuses write-back.
    #[cfg(any(test, feature = "test-fixtures"))]
    pub(super) failing: Arc<std::sync::atomic::AtomicBool>,
}

impl FileSystem {
    pub(super) fn of(directory: &std::path::Path) -> std::io::Result<Self> {
        Ok(Self {
            directory: File::open(directory)?,
            #[cfg(any(test, feature = "test-fixtures"))]
            failing: Arc::default(),
        })
    }

    /// Writes back every dirty page and inode of the file system, then its journal, in one go.
    pub(super) fn flush(&self) -> Result<(), FlushError> {
        #[cfg(any(test, feature = "test-fixtures"))]
        if self.failing.load(Ordering::Acquire) {
            return Err(FlushError(nix::errno::Errno::EIO));
        }
        nix::unistd::syncfs(&self.directory).map_err(FlushError)
    }
}

/// The writes announced and not yet committed (or given up), shared with the flusher.
#[derive(Clone, Default)]
pub(super) struct Announcements(Arc<AtomicUsize>);

impl Announcements {
    pub(super) fn announce(&self) -> Announced {
        self.0.fetch_add(1, Ordering::AcqRel);
        Announced(self.0.clone())
    }

    pub(super) fn pending(&self) -> usize {
        self.0.load(Ordering::Acquire)
    }
}

/// A write on its way: counted until it is committed (dropped in its transaction's job) or given
/// up (dropped on a refusal).
pub struct Announced(Arc<AtomicUsize>);

impl Drop for Announced {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Starts the writer and its flusher; the writer runs until every sender is dropped, then waits
/// for the flusher to answer what it committed.
pub(super) fn start(conn: Connection, file_system: FileSystem, announced: Announcements) -> std::io::Result<mpsc::Sender<WriteJob>> {
    start_with(conn, move || file_system.flush(), announced, GROUP_WAIT).map(|(jobs, _writer)| jobs)
}

fn start_with<F>(
    conn: Connection,
    flush: F,
    announced: Announcements,
    group_wait: Duration,
) -> std::io::Result<(mpsc::Sender<WriteJob>, std::thread::JoinHandle<()>)>
where
    F: FnMut() -> Result<(), FlushError> + Send + 'static,
{
    let changed_through = Arc::new(AtomicU64::new(0));
    let (to_flusher, committed) = mpsc::channel::<Committed>();
    let through = changed_through.clone();
    let flusher = std::thread::Builder::new()
        .name("sqlite-flusher".into())
        .spawn(move || flush_loop(flush, &through, (&announced, group_wait), committed))?;
    let (jobs_tx, jobs) = mpsc::channel::<WriteJob>();
    let writer = std::thread::Builder::new().name("sqlite-writer".into()).spawn(move || {
        write_loop(conn, &changed_through, &to_flusher, jobs);
        drop(to_flusher);
        let _ = flusher.join();
    })?;
    Ok((jobs_tx, writer))
}

/// A transaction committed (or rolled back), waiting for its answer: answered once the changes
/// numbered up to `needs` are on disk.
struct Committed {
    needs: u64,
    complete: Completion,
    announced: Option<Announced>,
}

impl Committed {
    /// In the flusher's hands: an announced write no longer needs waiting for.
    fn received(mut self) -> Self {
        self.announced = None;
        self
    }
}

/// Runs each transaction as it comes and hands it to the flusher. Transactions that changed a
/// row are numbered in commit order; `changed_through` is the last number given.
fn write_loop(mut conn: Connection, changed_through: &AtomicU64, to_flusher: &mpsc::Sender<Committed>, jobs: mpsc::Receiver<WriteJob>) {
    let mut changes = conn.total_changes();
    let mut changed = 0u64;
    while let Ok(job) = jobs.recv() {
        let Finished { complete, announced } = job(&mut conn);
        // Rows inserted, updated or deleted, triggers included, rolled-back ones too: a rolled
        // back transaction may be flushed for nothing, which is merely slower.
        if conn.total_changes() != changes {
            changes = conn.total_changes();
            changed += 1;
            changed_through.store(changed, Ordering::Release);
        }
        if to_flusher
            .send(Committed {
                needs: changed,
                complete,
                announced,
            })
            .is_err()
        {
            tracing::error!("the database's flusher stopped; writes are no longer answered");
        }
    }
}

/// Answers committed transactions: those whose changes are on disk at once, the others after
/// one flush that covers them all and the announced writes that commit in time.
fn flush_loop(
    mut flush: impl FnMut() -> Result<(), FlushError>,
    changed_through: &AtomicU64,
    (announced, group_wait): (&Announcements, Duration),
    committed: mpsc::Receiver<Committed>,
) {
    let mut durable = 0u64;
    while let Ok(first) = committed.recv() {
        let mut waiting = vec![first.received()];
        waiting.extend(committed.try_iter().map(Committed::received));
        let mut failure = None;
        if waiting.iter().any(|c| c.needs > durable) {
            wait_for_announced(announced, group_wait, &committed, &mut waiting);
            // Every change numbered up to `target` was committed before the flush starts.
            let target = changed_through.load(Ordering::Acquire);
            match flush() {
                Ok(()) => durable = target,
                Err(e) => {
                    tracing::error!(error = %e, "the database's writes could not be flushed to disk");
                    failure = Some(e);
                }
            }
        }
        for Committed { needs, complete, .. } in waiting {
            match failure {
                Some(e) if needs > durable => complete(Err(e)),
                _ => complete(Ok(())),
            }
        }
    }
}

/// Gathers the commits of the writes announced before this flush, for at most `group_wait`.
fn wait_for_announced(
    announced: &Announcements,
    group_wait: Duration,
    committed: &mpsc::Receiver<Committed>,
    waiting: &mut Vec<Committed>,
) {
    let deadline = Instant::now() + group_wait;
    while announced.pending() > 0 {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        match committed.recv_timeout(left.min(GROUP_LOOK)) {
            Ok(next) => waiting.push(next.received()),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
    }
    waiting.extend(committed.try_iter().map(Committed::received));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// What a test's transaction saw when it was answered.
    #[derive(Debug, PartialEq)]
    struct Answer {
        n: i64,
        /// Flushes finished when the answer came.
        flushes: u32,
        ok: bool,
    }

    /// The completion of test transaction `n`: sends its [`Answer`].
    fn reporter(n: i64, flushes: Arc<Mutex<u32>>, answers: mpsc::Sender<Answer>) -> Completion {
        Box::new(move |flushed| {
            let flushes = *flushes.lock().expect("lock");
            answers
                .send(Answer {
                    n,
                    flushes,
                    ok: flushed.is_ok(),
                })
                .expect("answer");
        })
    }

    /// A writer job of a transaction no one announced.
    fn job(f: impl FnOnce(&mut Connection) -> Completion + Send + 'static) -> WriteJob {
        Box::new(move |conn: &mut Connection| Finished {
            complete: f(conn),
            announced: None,
        })
    }

    /// A job that inserts `n` and reports, when answered, how many flushes had finished.
    fn insert(n: i64, flushes: Arc<Mutex<u32>>, answers: mpsc::Sender<Answer>) -> WriteJob {
        job(move |conn: &mut Connection| -> Completion {
            conn.execute("INSERT INTO t VALUES (?1)", [n]).expect("insert");
            reporter(n, flushes, answers)
        })
    }

    /// A job that only reads, reporting like [`insert`].
    fn look(n: i64, flushes: Arc<Mutex<u32>>, answers: mpsc::Sender<Answer>) -> WriteJob {
        job(move |conn: &mut Connection| -> Completion {
            let _: i64 = conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).expect("count");
            conn.execute("DELETE FROM t WHERE n < 0", []).expect("delete nothing");
            reporter(n, flushes, answers)
        })
    }

    fn table() -> Connection {
        let conn = Connection::open_in_memory().expect("open");
        conn.execute_batch("CREATE TABLE t (n INTEGER)").expect("create");
        conn
    }

    /// A flush that counts itself once done, after `pause`.
    fn counted(flushes: &Arc<Mutex<u32>>, pause: Duration) -> impl FnMut() -> Result<(), FlushError> + Send + 'static {
        let flushes = flushes.clone();
        move || {
            std::thread::sleep(pause);
            *flushes.lock().expect("lock") += 1;
            Ok(())
        }
    }

    fn answers_of(answers: &mpsc::Receiver<Answer>, n: usize) -> Vec<Answer> {
        (0..n)
            .map(|_| answers.recv_timeout(Duration::from_secs(10)).expect("answered"))
            .collect()
    }

    /// Ten writers arriving together share the flushes (the first may go alone, the nine others
    /// commit during its flush and share the next), and none is answered before a flush.
    #[test]
    fn waiting_writes_share_a_flush_and_are_answered_after_it() {
        let flushes = Arc::new(Mutex::new(0u32));
        let (jobs, writer) = start_with(
            table(),
            counted(&flushes, Duration::from_millis(50)),
            Announcements::default(),
            GROUP_WAIT,
        )
        .expect("start");
        let (answers_tx, answers) = mpsc::channel();
        for n in 0..10 {
            jobs.send(insert(n, flushes.clone(), answers_tx.clone())).expect("queue");
        }
        drop(jobs);
        writer.join().expect("writer");
        let answers = answers_of(&answers, 10);
        assert!(answers.iter().all(|a| a.flushes >= 1 && a.ok), "{answers:?}");
        assert!(*flushes.lock().expect("lock") <= 2, "ten writes, at most two flushes");
    }

    /// The writer commits while a flush is under way: a flush that cannot finish does not stop
    /// the next transactions, which are answered only after a flush of their own.
    #[test]
    fn transactions_commit_while_a_flush_is_under_way() {
        let (release_tx, release) = mpsc::channel::<()>();
        let (started_tx, started) = mpsc::channel::<()>();
        let flushes = Arc::new(Mutex::new(0u32));
        let count = flushes.clone();
        let (jobs, writer) = start_with(
            table(),
            move || {
                started_tx.send(()).expect("started");
                release.recv().expect("released");
                *count.lock().expect("lock") += 1;
                Ok(())
            },
            Announcements::default(),
            GROUP_WAIT,
        )
        .expect("start");
        let (answers_tx, answers) = mpsc::channel();
        jobs.send(insert(1, flushes.clone(), answers_tx.clone())).expect("queue");
        started.recv_timeout(Duration::from_secs(10)).expect("the first flush began");
        // The first flush is waiting to be released; the second transaction commits meanwhile.
        let (seen_tx, seen) = mpsc::channel();
        jobs.send(job(move |conn: &mut Connection| -> Completion {
            let rows: i64 = conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).expect("count");
            conn.execute("INSERT INTO t VALUES (2)", []).expect("insert");
            seen_tx.send(rows).expect("seen");
            reporter(2, flushes.clone(), answers_tx.clone())
        }))
        .expect("queue");
        assert_eq!(
            seen.recv_timeout(Duration::from_secs(10)),
            Ok(1),
            "committed during the first flush"
        );
        assert!(answers.try_recv().is_err(), "nothing is answered before its flush");
        release_tx.send(()).expect("release");
        assert_eq!(answers.recv_timeout(Duration::from_secs(10)).expect("first").n, 1);
        assert!(
            answers.try_recv().is_err(),
            "the second waits for a flush that began after its commit"
        );
        release_tx.send(()).expect("release");
        let second = answers.recv_timeout(Duration::from_secs(10)).expect("second");
        assert_eq!(
            second,
            Answer {
                n: 2,
                flushes: 2,
                ok: true
            }
        );
        drop(jobs);
        writer.join().expect("writer");
    }

    /// Transactions that change nothing cost no flush once what they read is on disk; the next
    /// one that changes a row is flushed as usual.
    #[test]
    fn a_transaction_that_changed_nothing_is_not_flushed() {
        let flushes = Arc::new(Mutex::new(0u32));
        let (jobs, writer) = start_with(table(), counted(&flushes, Duration::ZERO), Announcements::default(), GROUP_WAIT).expect("start");
        let (answers_tx, answers) = mpsc::channel();
        jobs.send(look(0, flushes.clone(), answers_tx.clone())).expect("queue");
        assert_eq!(
            answers_of(&answers, 1),
            [Answer {
                n: 0,
                flushes: 0,
                ok: true
            }],
            "nothing to flush"
        );
        jobs.send(insert(1, flushes.clone(), answers_tx.clone())).expect("queue");
        assert_eq!(
            answers_of(&answers, 1),
            [Answer {
                n: 1,
                flushes: 1,
                ok: true
            }],
            "an insert is flushed first"
        );
        jobs.send(look(2, flushes.clone(), answers_tx)).expect("queue");
        assert_eq!(
            answers_of(&answers, 1),
            [Answer {
                n: 2,
                flushes: 1,
                ok: true
            }],
            "what it read is on disk"
        );
        drop(jobs);
        writer.join().expect("writer");
        assert_eq!(*flushes.lock().expect("lock"), 1);
    }

    /// A writer whose flushes are counted and wait up to `group_wait` for `announcements`.
    fn waiting_writer(
        flushes: &Arc<Mutex<u32>>,
        announcements: &Announcements,
        group_wait: Duration,
    ) -> (mpsc::Sender<WriteJob>, std::thread::JoinHandle<()>) {
        start_with(table(), counted(flushes, Duration::ZERO), announcements.clone(), group_wait).expect("start")
    }

    /// A flush waits for the writes announced before it: a write announced while the first one
    /// commits shares its flush, however long it takes within the wait.
    #[test]
    fn an_announced_write_shares_the_flush_of_the_write_before_it() {
        let flushes = Arc::new(Mutex::new(0u32));
        let announcements = Announcements::default();
        let (jobs, writer) = waiting_writer(&flushes, &announcements, Duration::from_secs(30));
        let (answers_tx, answers) = mpsc::channel();
        let announced = announcements.announce();
        jobs.send(insert(1, flushes.clone(), answers_tx.clone())).expect("queue");
        std::thread::sleep(Duration::from_millis(50));
        assert!(answers.try_recv().is_err(), "the first write waits for the announced one");
        let second = insert(2, flushes.clone(), answers_tx);
        jobs.send(Box::new(move |conn: &mut Connection| Finished {
            announced: Some(announced),
            ..second(conn)
        }))
        .expect("queue");
        let answers = answers_of(&answers, 2);
        assert!(answers.iter().all(|a| a.ok && a.flushes == 1), "{answers:?}");
        drop(jobs);
        writer.join().expect("writer");
        assert_eq!(*flushes.lock().expect("lock"), 1, "one flush for both");
    }

    /// An announced write given up (a refused deposit) no longer holds the flush; nor does one
    /// that takes longer than the wait.
    #[test]
    fn a_flush_waits_for_no_withdrawn_or_late_announcement() {
        let flushes = Arc::new(Mutex::new(0u32));
        let announcements = Announcements::default();
        let (jobs, writer) = waiting_writer(&flushes, &announcements, Duration::from_secs(30));
        let (answers_tx, answers) = mpsc::channel();
        let announced = announcements.announce();
        jobs.send(insert(1, flushes.clone(), answers_tx.clone())).expect("queue");
        std::thread::sleep(Duration::from_millis(50));
        drop(announced);
        assert_eq!(
            answers_of(&answers, 1),
            [Answer {
                n: 1,
                flushes: 1,
                ok: true
            }]
        );
        drop(jobs);
        writer.join().expect("writer");

        let (jobs, writer) = waiting_writer(&flushes, &announcements, Duration::from_millis(20));
        let _late = announcements.announce();
        let started = Instant::now();
        jobs.send(insert(2, flushes.clone(), answers_tx)).expect("queue");
        assert_eq!(
            answers_of(&answers, 1),
            [Answer {
                n: 2,
                flushes: 2,
                ok: true
            }]
        );
        assert!(started.elapsed() < Duration::from_secs(10), "the wait is bounded");
        drop(jobs);
        writer.join().expect("writer");
    }

    /// A failed flush is every waiting writer's failure: none is told its write is safe.
    #[test]
    fn a_failed_flush_fails_every_write_it_covered() {
        let flushes = Arc::new(Mutex::new(0u32));
        let (jobs, writer) = start_with(
            table(),
            || Err(FlushError(nix::errno::Errno::ENOSPC)),
            Announcements::default(),
            GROUP_WAIT,
        )
        .expect("start");
        let (answers_tx, answers) = mpsc::channel();
        for n in 0..3 {
            jobs.send(insert(n, flushes.clone(), answers_tx.clone())).expect("queue");
        }
        jobs.send(look(3, flushes.clone(), answers_tx)).expect("queue");
        drop(jobs);
        writer.join().expect("writer");
        let answers = answers_of(&answers, 4);
        assert!(answers.iter().all(|a| !a.ok), "{answers:?}");
        let error = StoreError::from(FlushError(nix::errno::Errno::ENOSPC));
        assert!(error.is_out_of_space(), "a full disk at flush time is an outage (503), not a bug");
    }
}
