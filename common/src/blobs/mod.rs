//! The blob store: documents and images, sealed by [`MasterKeys`] and bound to their owner by
//! associated data, under random names. They live in a local directory ([`disk`]) or in an
//! S3-compatible bucket ([`object`]), as `SCEAU_BLOB_URL` says ([`BlobLocation`]); callers never
//! know which.

mod disk;
mod location;
mod object;
pub mod outage;

pub use location::BlobLocation;
pub use object::Outage;

use crate::crypto::envelope::{EnvelopeError, MasterKeys};
use crate::store::Store;
use bytes::Bytes;
use disk::{DiskBlobs, Flush};
use object::ObjectBlobs;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    #[error("blob storage: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Envelope(#[from] EnvelopeError),
    #[error("malformed blob name")]
    BadName,
    /// No blob under that name (removed, or never written).
    #[error("no such blob")]
    Missing,
    /// The object store did not serve the request (down, slow, refusing).
    #[error("blob store unavailable: {0}")]
    Unavailable(#[source] Outage),
    /// The blob store cannot be used as configured (a start-up error).
    #[error("{0}")]
    Config(String),
}

impl BlobError {
    /// The file system is full (or the quota reached): an outage, not a bug; the same write
    /// succeeds once space is back.
    pub fn is_out_of_space(&self) -> bool {
        matches!(self, BlobError::Io(e) if is_out_of_space(e))
    }

    /// An outage of the object store: the same request succeeds once it is back.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, BlobError::Unavailable(_))
    }
}

/// ENOSPC or EDQUOT.
pub fn is_out_of_space(error: &std::io::Error) -> bool {
    matches!(error.kind(), std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded)
}

#[derive(Clone)]
pub struct BlobStore {
    backend: Backend,
    keys: Arc<MasterKeys>,
}

#[derive(Clone)]
enum Backend {
    Disk(DiskBlobs),
    Object(ObjectBlobs),
}

impl BlobStore {
    /// Blobs in a local directory (created, with its shards, when missing).
    pub fn new(root: PathBuf, keys: Arc<MasterKeys>) -> std::io::Result<Self> {
        Ok(Self {
            backend: Backend::Disk(DiskBlobs::new(root)?),
            keys,
        })
    }

    /// Blobs where `location` says; a bucket is asked once, so that a wrong endpoint, bucket or
    /// credential stops the start with one line.
    pub async fn open(location: &BlobLocation, keys: Arc<MasterKeys>) -> Result<Self, BlobError> {
        let backend = match location {
            BlobLocation::Directory(root) => Backend::Disk(
                DiskBlobs::new(root.clone())
                    .map_err(|e| BlobError::Config(format!("cannot open the blob directory {}: {e}", root.display())))?,
            ),
            BlobLocation::S3 { bucket, prefix } => {
                let store = ObjectBlobs::s3(bucket, prefix)?;
                store.check().await?;
                Backend::Object(store)
            }
        };
        Ok(Self { backend, keys })
    }

    /// Whether blobs can be kept where `location` says, without opening the store (no master
    /// key needed): a bucket answers, a directory is one (or can be made). What is checked, said.
    pub async fn check_location(location: &BlobLocation) -> Result<String, BlobError> {
        match location {
            BlobLocation::Directory(root) => match std::fs::metadata(root) {
                Ok(meta) if meta.is_dir() => Ok(format!("{} (a directory)", root.display())),
                Ok(_) => Err(BlobError::Config(format!("{} is not a directory", root.display()))),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(format!("{} (created at first start)", root.display())),
                Err(e) => Err(BlobError::Config(format!("{}: {e}", root.display()))),
            },
            BlobLocation::S3 { bucket, prefix } => {
                ObjectBlobs::s3(bucket, prefix)?.check().await?;
                Ok(format!("s3://{bucket}/{prefix} answers"))
            }
        }
    }

    /// A fresh random blob name.
    pub fn new_name() -> String {
        domain::ids::random_hex(32)
    }

    /// The name, if it is one this store gives (it becomes a path or an object key).
    fn checked(name: &str) -> Result<&str, BlobError> {
        if name.len() != 32 || !name.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(BlobError::BadName);
        }
        Ok(name)
    }

    /// Encrypts and writes durably. On a failure (a full disk, an unreachable bucket) nothing is
    /// left behind under the name.
    pub async fn put(&self, name: &str, context: &str, plaintext: Vec<u8>) -> Result<(), BlobError> {
        self.write(name, context, plaintext, Flush::Now).await
    }

    /// Encrypts and writes a blob that `store.write(…)` records next. On the database's file
    /// system it is not flushed here: that write's flush makes the file and its row durable
    /// together, one flush instead of two. Elsewhere it is flushed as by [`BlobStore::put`].
    /// Either way the blob is durable once the recording write has returned `Ok`.
    pub async fn put_then_record(&self, store: &Store, name: &str, context: &str, plaintext: Vec<u8>) -> Result<(), BlobError> {
        self.write(name, context, plaintext, self.flush_for(store)).await
    }

    /// [`BlobStore::put_then_record`] for code already on a blocking thread of the runtime, or on
    /// one of its workers when [`BlobStore::flushed_with`] the store (an upload would block it).
    pub fn put_then_record_here(&self, store: &Store, name: &str, context: &str, plaintext: Vec<u8>) -> Result<(), BlobError> {
        let name = Self::checked(name)?;
        let (header, ciphertext, tag) = self.seal(context, plaintext);
        match &self.backend {
            Backend::Disk(disk) => Ok(disk.write(name, &[&header, &ciphertext, &tag], self.flush_for(store))?),
            // A blocking thread may wait for the runtime's I/O; the upload runs on the runtime.
            Backend::Object(object) => tokio::runtime::Handle::current().block_on(object.put(name, into_parts(header, ciphertext, tag))),
        }
    }

    /// Whether a blob written here is made durable by the database's next flush (a directory on
    /// the database's file system): writing one is then a few system calls that wait neither for
    /// the disk nor for the network, and a write recorded with it shares that flush.
    pub fn flushed_with(&self, store: &Store) -> bool {
        self.flush_for(store) == Flush::WithTheRecord
    }

    fn flush_for(&self, store: &Store) -> Flush {
        match &self.backend {
            Backend::Disk(disk) => disk.flush_for(store.device()),
            Backend::Object(_) => Flush::Now,
        }
    }

    /// Encrypts `plaintext` where it lies: the blob is header, ciphertext, tag.
    fn seal(&self, context: &str, mut plaintext: Vec<u8>) -> (Vec<u8>, Vec<u8>, [u8; 16]) {
        let sealed = self.keys.seal_in_place(context, &mut plaintext);
        (sealed.header, plaintext, sealed.tag)
    }

    /// Seals on a blocking thread (AES over 10 MB is not for the runtime's), then writes there
    /// (a file) or uploads from the runtime (an object).
    async fn write(&self, name: &str, context: &str, plaintext: Vec<u8>, flush: Flush) -> Result<(), BlobError> {
        let name = Self::checked(name)?.to_owned();
        let (this, context) = (self.clone(), context.to_owned());
        let sealed = tokio::task::spawn_blocking(move || {
            let (header, ciphertext, tag) = this.seal(&context, plaintext);
            match &this.backend {
                Backend::Disk(disk) => disk.write(&name, &[&header, &ciphertext, &tag], flush).map(|()| None),
                Backend::Object(_) => Ok(Some((name, into_parts(header, ciphertext, tag)))),
            }
        })
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))??;
        match (&self.backend, sealed) {
            (Backend::Object(object), Some((name, parts))) => object.put(&name, parts).await,
            _ => Ok(()),
        }
    }

    pub async fn get(&self, name: &str, context: &str) -> Result<Vec<u8>, BlobError> {
        let name = Self::checked(name)?;
        let sealed = match &self.backend {
            Backend::Disk(disk) => disk.read(name).await.map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => BlobError::Missing,
                _ => BlobError::Io(e),
            })?,
            Backend::Object(object) => object.get(name).await?,
        };
        Ok(self.keys.open(context, &sealed)?)
    }

    /// Deletes; a blob already gone is not an error (deletion is retried after crashes).
    pub async fn delete(&self, name: &str) -> Result<(), BlobError> {
        let name = Self::checked(name)?;
        match &self.backend {
            Backend::Disk(disk) => Ok(disk.delete(name).await?),
            Backend::Object(object) => object.delete(name).await,
        }
    }
}

/// The three parts of a sealed blob as one upload, without copying the ciphertext.
fn into_parts(header: Vec<u8>, ciphertext: Vec<u8>, tag: [u8; 16]) -> Vec<Bytes> {
    vec![Bytes::from(header), Bytes::from(ciphertext), Bytes::copy_from_slice(&tag)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enospc_and_edquot_are_out_of_space() {
        for (errno, full) in [(28, true), (122, true), (13, false), (5, false)] {
            let error = BlobError::Io(std::io::Error::from_raw_os_error(errno));
            assert_eq!(error.is_out_of_space(), full, "errno {errno}");
        }
        assert!(!BlobError::BadName.is_out_of_space());
    }

    #[tokio::test]
    async fn a_blob_reads_back_only_under_its_context_and_names_are_checked() {
        let dir = std::env::temp_dir().join(format!("sceau-blobs-{}", domain::ids::random_hex(8)));
        let blobs = BlobStore::new(dir.clone(), Arc::new(MasterKeys::ephemeral())).unwrap();
        let name = BlobStore::new_name();
        blobs.put(&name, "company:a", b"document".to_vec()).await.unwrap();
        assert_eq!(blobs.get(&name, "company:a").await.unwrap(), b"document");
        assert!(matches!(blobs.get(&name, "company:b").await, Err(BlobError::Envelope(_))));
        blobs.delete(&name).await.unwrap();
        assert!(matches!(blobs.get(&name, "company:a").await, Err(BlobError::Missing)));
        blobs.delete(&name).await.unwrap();
        for bad in ["../../etc/passwd", "", "zz", &"g".repeat(32)] {
            assert!(matches!(blobs.get(bad, "c").await, Err(BlobError::BadName)), "{bad}");
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}
