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

/// Time allowed for one request to the store, and for connecting: a store that hangs makes a
/// deposit answer 503 rather than hold its connection.
const REQUEST_TIMEOUT: &str = "30s";
const CONNECT_TIMEOUT: &str = "5s";

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
        let store = builder
            .with_bucket_name(bucket)
            .with_allow_http(allow_http)
            .with_config(AmazonS3ConfigKey::Client(ClientConfigKey::Timeout), REQUEST_TIMEOUT)
            .with_config(AmazonS3ConfigKey::Client(ClientConfigKey::ConnectTimeout), CONNECT_TIMEOUT)
            .with_retry(retries())
            .build()
            .map_err(|e| BlobError::Config(format!("SCEAU_BLOB_URL: {e}")))?;
        Ok(Self {
            store: Arc::new(store),
            prefix: prefix.to_owned(),
        })
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

    pub(super) async fn put(&self, name: &str, parts: Vec<Bytes>) -> Result<(), BlobError> {
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

/// A missing object is [`BlobError::Missing`]; anything else means the store could not serve
/// the request (down, slow, refusing): an outage, answered 503.
fn unavailable(error: object_store::Error) -> BlobError {
    match error {
        object_store::Error::NotFound { .. } => BlobError::Missing,
        other => BlobError::Unavailable(other.to_string()),
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
