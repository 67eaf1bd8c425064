//! The writer thread and its group commit: one flush of the file system makes a group of
//! transactions durable, and with them every file written beforehand on the same file system
//! (a deposit's encrypted document), before any of them is answered.
//!
//! SQLite commits with `synchronous=NORMAL` (in WAL mode: consistent after a power cut, but the
//! last commits may be lost), then the thread calls `syncfs` once for all the transactions it
//! ran since the last flush. A deposit thus costs one flush of the disk, as a bare write and
//! `fdatasync` would, instead of two (the blob's and the log's); concurrent writers share one.
//! Nothing is answered, and so nothing leaves the process, before its flush has succeeded.
//! A group that changed no row has nothing to make durable and is answered without a flush:
//! idle consumers polling the embedded queue do not flush the disk several times a second.

use super::StoreError;
use rusqlite::Connection;
use std::fs::File;
use std::sync::mpsc;

/// At most this many transactions wait for one flush: a burst does not delay its first answer
/// behind an unbounded queue.
const MAX_GROUP: usize = 64;

/// What a finished transaction does once its flush is known: answer its caller.
pub(super) type Completion = Box<dyn FnOnce(Result<(), FlushError>) + Send>;

/// One transaction for the writer thread; it returns its completion, called after the flush.
pub(super) type WriteJob = Box<dyn FnOnce(&mut Connection) -> Completion + Send>;

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
}

impl FileSystem {
    pub(super) fn of(directory: &std::path::Path) -> std::io::Result<Self> {
        Ok(Self {
            directory: File::open(directory)?,
        })
    }

    /// Writes back every dirty page and inode of the file system, then its journal, in one go.
    pub(super) fn flush(&self) -> Result<(), FlushError> {
        nix::unistd::syncfs(&self.directory).map_err(FlushError)
    }
}

/// Runs until every sender is dropped: takes a job, then those already waiting (up to
/// [`MAX_GROUP`]), flushes once if any of them changed a row, and answers them all.
pub(super) fn run(conn: Connection, file_system: FileSystem, jobs: mpsc::Receiver<WriteJob>) {
    run_with(conn, || file_system.flush(), jobs)
}

fn run_with(mut conn: Connection, mut flush: impl FnMut() -> Result<(), FlushError>, jobs: mpsc::Receiver<WriteJob>) {
    while let Ok(first) = jobs.recv() {
        // Rows inserted, updated or deleted, triggers included, rolled-back ones too: a group
        // that rolled back only is flushed for nothing, which is merely slower.
        let changes_before = conn.total_changes();
        let mut completions = vec![first(&mut conn)];
        while completions.len() < MAX_GROUP {
            match jobs.try_recv() {
                Ok(job) => completions.push(job(&mut conn)),
                Err(_) => break,
            }
        }
        let flushed = if conn.total_changes() == changes_before { Ok(()) } else { flush() };
        if let Err(e) = &flushed {
            tracing::error!(error = %e, "the database's writes could not be flushed to disk");
        }
        for complete in completions {
            complete(flushed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A job that inserts `n` and records, when answered, whether its flush had happened.
    fn job(n: i64, flushes: Arc<Mutex<u32>>, answers: mpsc::Sender<(i64, u32, bool)>) -> WriteJob {
        Box::new(move |conn: &mut Connection| -> Completion {
            conn.execute("INSERT INTO t VALUES (?1)", [n]).expect("insert");
            Box::new(move |flushed| {
                let seen = *flushes.lock().expect("lock");
                answers.send((n, seen, flushed.is_ok())).expect("answer");
            })
        })
    }

    fn table() -> Connection {
        let conn = Connection::open_in_memory().expect("open");
        conn.execute_batch("CREATE TABLE t (n INTEGER)").expect("create");
        conn
    }

    /// Ten writers waiting together share one flush, and none is answered before it.
    #[test]
    fn waiting_writes_share_one_flush_and_are_answered_after_it() {
        let flushes = Arc::new(Mutex::new(0u32));
        let (jobs_tx, jobs_rx) = mpsc::channel();
        let (answers_tx, answers) = mpsc::channel();
        for n in 0..10 {
            jobs_tx.send(job(n, flushes.clone(), answers_tx.clone())).expect("queue");
        }
        drop(jobs_tx);
        let counted = flushes.clone();
        run_with(
            table(),
            move || {
                *counted.lock().expect("lock") += 1;
                Ok(())
            },
            jobs_rx,
        );
        let answers: Vec<_> = answers.try_iter().collect();
        assert_eq!(answers.len(), 10);
        assert!(answers.iter().all(|&(_, seen, ok)| seen == 1 && ok), "{answers:?}");
        assert_eq!(*flushes.lock().expect("lock"), 1);
    }

    /// Transactions that change nothing (an idle consumer looking for a message) cost no flush;
    /// the next one that changes a row is flushed as usual.
    #[test]
    fn a_group_that_changed_nothing_is_not_flushed() {
        let flushes = Arc::new(Mutex::new(0u32));
        let (jobs_tx, jobs_rx) = mpsc::channel::<WriteJob>();
        let (answers_tx, answers) = mpsc::channel();
        let looked = answers_tx.clone();
        jobs_tx
            .send(Box::new(move |conn: &mut Connection| -> Completion {
                let found: i64 = conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).expect("count");
                conn.execute("DELETE FROM t WHERE n < 0", []).expect("delete nothing");
                Box::new(move |flushed| looked.send((found, 0, flushed.is_ok())).expect("answer"))
            }))
            .expect("queue");
        let counted = flushes.clone();
        let worker = std::thread::spawn(move || {
            run_with(
                table(),
                move || {
                    *counted.lock().expect("lock") += 1;
                    Ok(())
                },
                jobs_rx,
            )
        });
        assert!(answers.recv().expect("answered").2, "a group that changed nothing is answered Ok");
        assert_eq!(*flushes.lock().expect("lock"), 0, "nothing changed, nothing to flush");
        jobs_tx.send(job(1, flushes.clone(), answers_tx)).expect("queue");
        assert_eq!(
            answers.recv().expect("answered"),
            (1, 1, true),
            "an insert is flushed before its answer"
        );
        drop(jobs_tx);
        worker.join().expect("writer");
        assert_eq!(*flushes.lock().expect("lock"), 1);
    }

    /// A failed flush is every waiting writer's failure: none is told its write is safe.
    #[test]
    fn a_failed_flush_fails_every_write_of_its_group() {
        let flushes = Arc::new(Mutex::new(0u32));
        let (jobs_tx, jobs_rx) = mpsc::channel();
        let (answers_tx, answers) = mpsc::channel();
        for n in 0..3 {
            jobs_tx.send(job(n, flushes.clone(), answers_tx.clone())).expect("queue");
        }
        drop(jobs_tx);
        run_with(table(), || Err(FlushError(nix::errno::Errno::ENOSPC)), jobs_rx);
        let answers: Vec<_> = answers.try_iter().collect();
        assert_eq!(answers.len(), 3);
        assert!(answers.iter().all(|&(_, _, ok)| !ok));
        let error = StoreError::from(FlushError(nix::errno::Errno::ENOSPC));
        assert!(error.is_out_of_space(), "a full disk at flush time is an outage (503), not a bug");
    }
}
