//! Blobs in an S3-compatible object store (`s3://bucket[/prefix]`), through the `object_store`
//! crate: what lets workers run on other hosts than the gateway, sharing nothing but the broker
//! and the bucket. An object is durable once its PUT has answered.

use super::BlobError;
use bytes::Bytes;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::path::Path as ObjectPath;
use object_store::{BackoffConfig, ClientConfigKey, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// Time allowed for one request to the store, and for connecting: a store that hangs makes a
/// deposit answer 503 rather than hold its connection.
const REQUEST_TIMEOUT: &str = "30s";
const CONNECT_TIMEOUT: &str = "5s";

/// Uploads in flight at once, and how long one waits for its turn before it is answered as an
/// outage: a bucket that hangs holds each upload for its 30 s, on a thread of the runtime's
/// blocking pool for a deposit; without a bound, deposits would take every such thread, and every
/// read of the database with them.
const UPLOADS_AT_ONCE: usize = 64;
const UPLOAD_TURN_WAIT: Duration = Duration::from_secs(1);

/// Retries of a failed request: a blip is absorbed, an outage is answered 503 within seconds
/// (the crate's default retries for 3 minutes, holding the deposit's connection all along).
fn retries() -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig::default(),
        max_retries: 2,
        retry_timeout: Duration::from_secs(10),
    }
}

#[derive(Clone)]
pub(super) struct ObjectBlobs {
    store: Arc<dyn ObjectStore>,
    /// Empty or ending with `/`.
    prefix: String,
    /// One permit per upload in flight ([`UPLOADS_AT_ONCE`]).
    uploads: Arc<Semaphore>,
}

impl ObjectBlobs {
    /// The bucket, with endpoint, region and credentials from the `AWS_*` variables. Plain http
    /// is accepted to a loopback endpoint only (a local S3 server); documents never cross a
    /// network in clear.
    pub(super) fn s3(bucket: &str, prefix: &str) -> Result<Self, BlobError> {
        let builder = AmazonS3Builder::from_env();
        let allow_http = match effective_endpoint(&builder) {
            Some(url) => plain_http_to_loopback(&url)?,
            None => false,
        };
        // reqwest is built without a default crypto provider (ring, as everywhere in the workspace).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let store = hardened(builder, bucket, allow_http)
            .build()
            .map_err(|e| BlobError::Config(format!("SCEAU_BLOB_URL: {e}")))?;
        Ok(Self::over(Arc::new(store), prefix))
    }

    fn over(store: Arc<dyn ObjectStore>, prefix: &str) -> Self {
        Self {
            store,
            prefix: prefix.to_owned(),
            uploads: Arc::new(Semaphore::new(UPLOADS_AT_ONCE)),
        }
    }

    /// Asks for an object that does not exist: a wrong endpoint, bucket or credential fails here,
    /// at start, with one line, rather than on the first document.
    pub(super) async fn check(&self) -> Result<(), BlobError> {
        match self.store.head(&self.key("00probe")).await {
            Ok(_) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(BlobError::Config(format!("SCEAU_BLOB_URL: the bucket cannot be reached: {e}"))),
        }
    }

    /// Where a (checked) blob name lives: sharded as on disk, which also spreads S3's
    /// per-prefix request rates.
    fn key(&self, name: &str) -> ObjectPath {
        ObjectPath::from(format!("{}{}/{}", self.prefix, &name[..2], name))
    }

    /// Uploads, once one of the [`UPLOADS_AT_ONCE`] turns is free within [`UPLOAD_TURN_WAIT`]: the
    /// store is too slow to take more, which is answered as an outage (503 to a deposit).
    pub(super) async fn put(&self, name: &str, parts: Vec<Bytes>) -> Result<(), BlobError> {
        let _turn = match tokio::time::timeout(UPLOAD_TURN_WAIT, self.uploads.acquire()).await {
            Ok(Ok(turn)) => turn,
            _ => return Err(BlobError::Unavailable(Outage::Saturated)),
        };
        let payload: PutPayload = parts.into_iter().collect();
        self.store.put(&self.key(name), payload).await.map_err(unavailable)?;
        Ok(())
    }

    pub(super) async fn get(&self, name: &str) -> Result<Vec<u8>, BlobError> {
        let object = self.store.get(&self.key(name)).await.map_err(unavailable)?;
        Ok(object.bytes().await.map_err(unavailable)?.into())
    }

    /// Deletes; an object already gone is not an error.
    pub(super) async fn delete(&self, name: &str) -> Result<(), BlobError> {
        match self.store.delete(&self.key(name)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(unavailable(e)),
        }
    }
}

/// Why the object store did not serve a request: an outage either way, answered 503.
#[derive(Debug, thiserror::Error)]
pub enum Outage {
    /// Every upload turn stayed taken for [`UPLOAD_TURN_WAIT`]: the store takes no more.
    #[error("{UPLOADS_AT_ONCE} uploads to the object store are in flight")]
    Saturated,
    /// The store answered with an error, or not in time (its retries spent).
    #[error(transparent)]
    Store(object_store::Error),
}

/// The builder with what the environment may not change: the bucket, plain http only where
/// allowed, certificates checked (`from_env` reads every AWS_* variable, among them
/// AWS_ALLOW_INVALID_CERTIFICATES), and bounded requests.
fn hardened(builder: AmazonS3Builder, bucket: &str, allow_http: bool) -> AmazonS3Builder {
    builder
        .with_bucket_name(bucket)
        .with_allow_http(allow_http)
        .with_config(AmazonS3ConfigKey::Client(ClientConfigKey::AllowInvalidCertificates), "false")
        .with_config(AmazonS3ConfigKey::Client(ClientConfigKey::Timeout), REQUEST_TIMEOUT)
        .with_config(AmazonS3ConfigKey::Client(ClientConfigKey::ConnectTimeout), CONNECT_TIMEOUT)
        .with_retry(retries())
}

/// A missing object is [`BlobError::Missing`]; anything else means the store could not serve
/// the request (down, slow, refusing): an outage, answered 503.
fn unavailable(error: object_store::Error) -> BlobError {
    match error {
        object_store::Error::NotFound { .. } => BlobError::Missing,
        other => BlobError::Unavailable(Outage::Store(other)),
    }
}

/// The endpoint the client will talk to: `AWS_ENDPOINT_URL_S3` wins over `AWS_ENDPOINT_URL`
/// (or `AWS_ENDPOINT`), as in the crate's own build; None for AWS itself.
fn effective_endpoint(builder: &AmazonS3Builder) -> Option<String> {
    [AmazonS3ConfigKey::S3Endpoint, AmazonS3ConfigKey::Endpoint]
        .iter()
        .find_map(|key| builder.get_config_value(key).filter(|v| !v.trim().is_empty()))
}

/// Whether the endpoint is plain http, which is refused unless it is on this machine (the rule of
/// every URL documents travel to).
fn plain_http_to_loopback(endpoint: &str) -> Result<bool, BlobError> {
    crate::config::https_unless_loopback("AWS_ENDPOINT_URL", endpoint).map_err(|e| BlobError::Config(e.0))?;
    Ok(url::Url::parse(endpoint).is_ok_and(|url| url.scheme() == "http"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_only_to_this_machine() {
        assert!(!plain_http_to_loopback("https://s3.eu-west-3.amazonaws.com").unwrap());
        assert!(plain_http_to_loopback("http://127.0.0.1:9000").unwrap());
        assert!(plain_http_to_loopback("http://localhost:9000").unwrap());
        assert!(plain_http_to_loopback("http://[::1]:9000").unwrap());
        for refused in ["http://10.0.0.5:9000", "http://minio.internal", "ftp://127.0.0.1", "nonsense"] {
            assert!(matches!(plain_http_to_loopback(refused), Err(BlobError::Config(_))), "{refused}");
        }
    }

    /// Uploads past the bound wait a second for a turn, then are an outage: a hanging bucket
    /// holds at most that many threads.
    #[tokio::test]
    async fn uploads_past_the_bound_are_an_outage_within_a_second() {
        let blobs = ObjectBlobs::over(Arc::new(object_store::memory::InMemory::new()), "p/");
        let name = "0123456789abcdef0123456789abcdef";
        blobs.put(name, vec![Bytes::from_static(b"sealed")]).await.unwrap();
        assert_eq!(blobs.get(name).await.unwrap(), b"sealed");
        let held = blobs.uploads.clone().acquire_many_owned(UPLOADS_AT_ONCE as u32).await.unwrap();
        let started = std::time::Instant::now();
        let refused = blobs.put(name, vec![Bytes::from_static(b"other")]).await;
        assert!(matches!(refused, Err(BlobError::Unavailable(_))), "{refused:?}");
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        drop(held);
        blobs.put(name, vec![Bytes::from_static(b"other")]).await.unwrap();
    }

    #[test]
    fn certificates_are_checked_whatever_the_environment_says() {
        let key = AmazonS3ConfigKey::Client(ClientConfigKey::AllowInvalidCertificates);
        let from_env = AmazonS3Builder::new().with_config(key, "true");
        let builder = hardened(from_env, "documents", false);
        assert_eq!(builder.get_config_value(&key).as_deref(), Some("false"));
        assert_eq!(builder.get_config_value(&AmazonS3ConfigKey::Bucket).as_deref(), Some("documents"));
    }

    #[test]
    fn the_endpoint_checked_is_the_one_the_client_uses() {
        let builder = AmazonS3Builder::new();
        assert_eq!(effective_endpoint(&builder), None);
        let builder = builder.with_config(AmazonS3ConfigKey::Endpoint, "http://127.0.0.1:9000");
        assert_eq!(effective_endpoint(&builder).as_deref(), Some("http://127.0.0.1:9000"));
        // AWS_ENDPOINT_URL_S3 takes precedence: a plain-http one elsewhere is seen and refused.
        let builder = builder.with_config(AmazonS3ConfigKey::S3Endpoint, "http://minio.internal:9000");
        let endpoint = effective_endpoint(&builder).unwrap();
        assert_eq!(endpoint, "http://minio.internal:9000");
        assert!(matches!(plain_http_to_loopback(&endpoint), Err(BlobError::Config(_))));
    }
}
