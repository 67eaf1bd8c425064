//! Test helpers: a backend on the local Redis under a random prefix, deleted when dropped (even when
//! the test panics), so tests share one server without ever seeing each other's keys.

use super::{RedisBackend, RedisConfig};

/// `SCEAU_TEST_REDIS_URL`, or the local server.
pub(crate) fn test_url() -> String {
    std::env::var("SCEAU_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned())
}

pub(crate) struct TestRedis {
    pub backend: RedisBackend,
    config: RedisConfig,
}

impl TestRedis {
    /// Fails the test (never skips it) when Redis cannot be reached.
    pub async fn new() -> Self {
        let config = RedisConfig {
            url: test_url(),
            prefix: format!("sceau-test:{}:", domain::ids::random_hex(16)),
        };
        let backend = RedisBackend::new(&config).expect("valid test Redis configuration");
        if let Err(e) = backend.ping().await {
            panic!(
                "these tests need a Redis server at {} (set SCEAU_TEST_REDIS_URL to use another): {e}",
                config.url
            );
        }
        Self { backend, config }
    }

    /// A second handle on the same prefix with its own pool (as another process would have).
    pub fn another_process(&self) -> RedisBackend {
        RedisBackend::new(&self.config).expect("valid test Redis configuration")
    }
}

impl Drop for TestRedis {
    fn drop(&mut self) {
        // Pooled connections belong to the test's runtime, which may be the one blocked here: clean
        // up from a thread with its own runtime and a fresh pool.
        let config = self.config.clone();
        let done = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            runtime.block_on(async {
                let backend = RedisBackend::new(&config).map_err(std::io::Error::other)?;
                backend.clear_prefix().await.map_err(std::io::Error::other)
            })
        })
        .join();
        if !matches!(done, Ok(Ok(_))) {
            eprintln!("could not delete the test keys under {}: {done:?}", self.config.prefix);
        }
    }
}
