//! The SQLite store, system of record. One writer thread owns the only write connection (every
//! write of the process goes through it, in `BEGIN IMMEDIATE` transactions); reads use a small
//! pool of WAL readers. Other processes (the operator CLI) write through their own store, and
//! SQLite's lock with a busy timeout serialises them.
pub mod api_keys;
pub mod audit;
pub mod batches;
pub mod branding;
pub mod companies;
pub mod consultations;
pub mod dashboard;
pub mod error;
pub mod events;
pub mod holdings;
pub mod idempotency;
pub mod invitations;
pub mod live_flags;
pub mod members;
pub mod migrations;
pub mod outbox;
pub mod portal_sessions;
pub mod queue;
pub mod reviews;
pub mod settings;
pub mod sign_in_throttle;
#[cfg(any(test, feature = "test-fixtures"))]
pub mod test_support;
pub mod usage;
pub mod verifications;
pub mod workflows;
mod writer;

pub use error::RepoError;
pub use writer::Announced;

use crate::crypto::envelope::MasterKeys;
use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use tokio::sync::oneshot;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("database writer stopped")]
    WriterGone,
    #[error("database task failed: {0}")]
    Task(String),
    #[error("stored data is inconsistent: {0}")]
    Corrupt(String),
    /// Committed, but the flush to disk failed: the write may not survive a power cut.
    #[error("database flush: {0}")]
    Flush(std::io::Error),
}

impl StoreError {
    /// The transaction is committed though its answer is an error: its flush to disk failed.
    /// What it recorded stands (the files it names must stay), and may not survive a power cut.
    pub fn committed(&self) -> bool {
        matches!(self, StoreError::Flush(_))
    }

    /// The database could not grow: the disk (or the quota) is full. An outage, not a bug: the
    /// transaction was rolled back and the same write succeeds once space is back.
    pub fn is_out_of_space(&self) -> bool {
        match self {
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => e.code == rusqlite::ErrorCode::DiskFull,
            StoreError::Flush(e) => crate::blobs::is_out_of_space(e),
            _ => false,
        }
    }
}

use writer::{Completion, Finished, WriteJob};

const MAX_IDLE_READERS: usize = 8;

/// Handle to the store; cheap to clone.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    device: u64,
    writer: Mutex<mpsc::Sender<WriteJob>>,
    announcements: writer::Announcements,
    readers: Mutex<Vec<Connection>>,
    /// Makes the writer's flushes fail ([`Store::fail_flushes`]).
    #[cfg(any(test, feature = "test-fixtures"))]
    failing_flushes: Arc<std::sync::atomic::AtomicBool>,
}

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(())
}

impl Store {
    /// Opens (creating if needed) the database, applies migrations and starts the writer thread.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        crate::private_fs::create_dir(dir).map_err(|e| StoreError::Task(format!("cannot create {}: {e}", dir.display())))?;
        // SQLite gives its -wal and -shm files the database's mode: 0600 for all three.
        crate::private_fs::touch(path).map_err(|e| StoreError::Task(format!("cannot create {}: {e}", path.display())))?;
        let file_system = writer::FileSystem::of(dir).map_err(|e| StoreError::Task(format!("cannot open {}: {e}", dir.display())))?;
        let device = device_of(dir).map_err(|e| StoreError::Task(format!("cannot stat {}: {e}", dir.display())))?;
        let mut conn = Connection::open(path)?;
        configure(&conn)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // NORMAL: the writer thread flushes the file system itself before answering (see
        // `writer`), so that one flush covers the log and the files written beside it.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        migrations::apply(&mut conn)?;
        file_system.flush()?;
        let announcements = writer::Announcements::default();
        #[cfg(any(test, feature = "test-fixtures"))]
        let failing_flushes = file_system.failing.clone();
        let tx = writer::start(conn, file_system, announcements.clone()).map_err(|e| StoreError::Task(e.to_string()))?;
        Ok(Self {
            inner: Arc::new(Inner {
                path: path.to_owned(),
                device,
                writer: Mutex::new(tx),
                announcements,
                readers: Mutex::new(Vec::new()),
                #[cfg(any(test, feature = "test-fixtures"))]
                failing_flushes,
            }),
        })
    }

    /// The file system that holds the database: a file written on it before a [`Store::write`]
    /// is on disk when that write returns, without a flush of its own.
    pub fn device(&self) -> u64 {
        self.inner.device
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction on the writer; commits when it returns `Ok`,
    /// rolls back otherwise, so a refused request leaves nothing half-written. Returns once the
    /// commit is on disk, with every file written on the same file system before it.
    pub async fn write<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T, E> + Send + 'static,
    {
        self.queue_write(None, f)?.await.map_err(|_| StoreError::WriterGone)?
    }

    /// Announces a write this request is about to make, once its files are written (a deposit):
    /// a flush that starts meanwhile waits a little for it (see `writer`), so that concurrent
    /// deposits share a flush. Announce only for work of a fraction of a millisecond, files on the
    /// database's file system: every flush of the process waits while a write is announced. Give
    /// it to [`Store::write_announced`]; dropped, it withdraws.
    pub fn announce_write(&self) -> Announced {
        self.inner.announcements.announce()
    }

    /// From now on (`true`), every flush fails with EIO, as on a disk that refuses write-back:
    /// writes are committed and answered [`StoreError::Flush`]. For tests of what follows.
    #[cfg(any(test, feature = "test-fixtures"))]
    pub fn fail_flushes(&self, failing: bool) {
        self.inner.failing_flushes.store(failing, std::sync::atomic::Ordering::Release);
    }

    /// The writes announced and not yet in the flusher's hands: none once requests are answered.
    pub fn announced_writes(&self) -> usize {
        self.inner.announcements.pending()
    }

    /// [`Store::write`] for the write `announced` foretold.
    pub async fn write_announced<T, E, F>(&self, announced: Announced, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T, E> + Send + 'static,
    {
        self.queue_write(Some(announced), f)?.await.map_err(|_| StoreError::WriterGone)?
    }

    /// [`Store::write_here`] for the write `announced` foretold, if any.
    pub fn write_here_announced<T, E, F>(&self, announced: Option<Announced>, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T, E> + Send + 'static,
    {
        self.queue_write(announced, f)?
            .blocking_recv()
            .map_err(|_| StoreError::WriterGone)?
    }

    /// [`Store::write`] for code already on a blocking thread: waits here for the answer, so that
    /// a request's task is woken once, when its blocking work and its write are both done.
    pub fn write_here<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T, E> + Send + 'static,
    {
        self.queue_write(None, f)?.blocking_recv().map_err(|_| StoreError::WriterGone)?
    }

    /// Hands `f` to the writer; the answer comes once its transaction is flushed. The
    /// announcement of the write, if any, is withdrawn once its transaction has ended.
    fn queue_write<T, E, F>(&self, announced: Option<Announced>, f: F) -> Result<oneshot::Receiver<Result<T, E>>, StoreError>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T, E> + Send + 'static,
    {
        let (done_tx, done_rx) = oneshot::channel();
        let job: WriteJob = Box::new(move |conn: &mut Connection| -> Finished {
            let result = run_transaction(conn, f);
            let complete: Completion = Box::new(move |flushed| {
                let _ = done_tx.send(result.and_then(|value| flushed.map(|()| value).map_err(|e| E::from(StoreError::from(e)))));
            });
            Finished { complete, announced }
        });
        let sent = self.inner.writer.lock().map_err(|_| StoreError::WriterGone)?.send(job);
        sent.map_err(|_| StoreError::WriterGone)?;
        Ok(done_rx)
    }

    /// Runs `f` on a read connection (WAL: it never blocks the writer).
    pub async fn read<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: FnOnce(&Connection) -> Result<T, E> + Send + 'static,
    {
        let store = self.clone();
        tokio::task::spawn_blocking(move || store.read_here(f))
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// Whether the database answers a read: the readiness probe.
    pub async fn ping(&self) -> Result<(), StoreError> {
        self.read(|c| {
            c.query_row("SELECT 1", [], |r| r.get::<_, i64>(0))
                .map(drop)
                .map_err(StoreError::from)
        })
        .await
    }

    /// [`Store::read`] for code already on a blocking thread, or for a lookup by key short enough
    /// for a runtime worker (about 10 µs, where a hop to a blocking thread and back costs 50).
    pub fn read_here<T, E, F>(&self, f: F) -> Result<T, E>
    where
        E: From<StoreError>,
        F: FnOnce(&Connection) -> Result<T, E>,
    {
        let conn = self.inner.take_reader()?;
        let result = f(&conn);
        self.inner.give_back(conn);
        result
    }
}

impl Store {
    /// Runs the migrations that need the master key (see [`migrations::seal_webhook_secrets`] and
    /// [`migrations::key_recovery_codes`]); returns how many rows it sealed or keyed. When it
    /// changed any, the database is rewritten and its log emptied, so no freed page of either file
    /// still holds a value that was in clear (or hashed without the key).
    pub async fn apply_keyed_migrations(&self, keys: Arc<MasterKeys>) -> Result<usize, StoreError> {
        let sealed = self
            .write(move |tx| Ok::<_, StoreError>(migrations::seal_webhook_secrets(tx, &keys)? + migrations::key_recovery_codes(tx, &keys)?))
            .await?;
        if sealed > 0 {
            let path = self.inner.path.clone();
            tokio::task::spawn_blocking(move || rewrite_files(&path))
                .await
                .map_err(|e| StoreError::Task(e.to_string()))??;
        }
        Ok(sealed)
    }
}

/// VACUUM (a fresh copy of every live page) then a truncating checkpoint (the log emptied).
fn rewrite_files(path: &Path) -> Result<(), StoreError> {
    let conn = Connection::open(path)?;
    configure(&conn)?;
    conn.execute_batch("VACUUM")?;
    let busy: i64 = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?;
    if busy != 0 {
        // Another process is reading: its next checkpoints overwrite the log in time.
        tracing::warn!("the database log could not be emptied after sealing secrets and keying recovery codes");
    }
    Ok(())
}

/// The device number of the file system that holds `path`.
pub fn device_of(path: &Path) -> std::io::Result<u64> {
    use std::os::unix::fs::MetadataExt;
    Ok(std::fs::metadata(path)?.dev())
}

fn run_transaction<T, E, F>(conn: &mut Connection, f: F) -> Result<T, E>
where
    E: From<StoreError>,
    F: FnOnce(&Transaction<'_>) -> Result<T, E>,
{
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(StoreError::from)?;
    let value = f(&tx)?;
    tx.commit().map_err(StoreError::from)?;
    Ok(value)
}

impl Inner {
    fn take_reader(&self) -> Result<Connection, StoreError> {
        if let Some(conn) = self.readers.lock().ok().and_then(|mut r| r.pop()) {
            return Ok(conn);
        }
        let conn = Connection::open_with_flags(&self.path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
        configure(&conn)?;
        Ok(conn)
    }

    fn give_back(&self, conn: Connection) {
        if let Ok(mut r) = self.readers.lock() {
            if r.len() < MAX_IDLE_READERS {
                r.push(conn);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::TempStore;
    use super::*;

    async fn add_outbox_row(store: &Store) {
        store
            .write(|tx| {
                tx.execute("INSERT INTO outbox (topic, payload, created_at) VALUES ('events', 'a', 'x')", [])
                    .map_err(StoreError::from)
            })
            .await
            .unwrap();
    }

    async fn outbox_rows(store: &Store) -> i64 {
        store
            .read(|c| {
                c.query_row("SELECT count(*) FROM outbox", [], |r| r.get(0))
                    .map_err(StoreError::from)
            })
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn write_rolls_back_on_error_and_reads_see_commits() {
        let store = TempStore::new("store");
        add_outbox_row(&store).await;
        let failed: Result<(), StoreError> = store
            .write(|tx| {
                tx.execute("INSERT INTO outbox (topic, payload, created_at) VALUES ('events', 'b', 'x')", [])?;
                Err(StoreError::Corrupt("refused".into()))
            })
            .await;
        assert!(failed.is_err());
        let n = outbox_rows(&store).await;
        assert_eq!(n, 1);
    }

    /// A write whose flush fails is committed and says so (`committed`), so that its caller
    /// keeps the files it names; a refused one is not; writes are answered Ok again once flushes
    /// succeed.
    #[tokio::test]
    async fn a_write_whose_flush_fails_is_committed_and_says_so() {
        let store = TempStore::new("unflushed");
        store.fail_flushes(true);
        let unflushed: Result<(), StoreError> = store
            .write(|tx| {
                tx.execute("INSERT INTO outbox (topic, payload, created_at) VALUES ('events', 'b', 'x')", [])?;
                Ok(())
            })
            .await;
        let unflushed = unflushed.expect_err("the flush failed");
        assert!(unflushed.committed() && RepoError::Store(unflushed).committed());
        let refused: Result<(), StoreError> = store.write(|_| Err(StoreError::Corrupt("refused".into()))).await;
        assert!(!refused.expect_err("refused").committed());
        store.fail_flushes(false);
        assert_eq!(outbox_rows(&store).await, 1, "the unflushed row stands");
        add_outbox_row(&store).await;
    }

    /// A database that cannot grow (here capped by `max_page_count`, which SQLite reports like a
    /// full disk) is out of space, the transaction leaves nothing, and writes resume once there is
    /// room again.
    #[tokio::test]
    async fn a_full_database_is_out_of_space_and_recovers() {
        let store = TempStore::new("store");
        let fill = |cap: &'static str| {
            store.write(move |tx| {
                tx.execute_batch(&format!("PRAGMA max_page_count = {cap}"))?;
                tx.execute(
                    "INSERT INTO outbox (topic, payload, created_at) VALUES ('events', ?1, 'x')",
                    ["x".repeat(1_000_000)],
                )
                .map_err(StoreError::from)
            })
        };
        let full = fill("1").await.unwrap_err();
        assert!(full.is_out_of_space(), "{full}");
        assert!(!StoreError::WriterGone.is_out_of_space());
        fill("1000000").await.unwrap();
        let n = outbox_rows(&store).await;
        assert_eq!(n, 1, "only the write that had room");
    }

    #[tokio::test]
    async fn the_database_and_its_log_files_are_private_whatever_the_umask() {
        use std::os::unix::fs::PermissionsExt;
        let store = TempStore::new("store");
        add_outbox_row(&store).await;
        let dir = store.dir();
        let mode = |name: &str| std::fs::metadata(dir.join(name)).map(|m| m.permissions().mode() & 0o777);
        assert_eq!(std::fs::metadata(dir).unwrap().permissions().mode() & 0o777, 0o700);
        for name in ["db.sqlite", "db.sqlite-wal", "db.sqlite-shm"] {
            assert_eq!(mode(name).unwrap(), 0o600, "{name}");
        }
    }
}
