//! A named lease in Redis, so that exactly one process at a time does a singleton job (the deadline
//! reaper) across all workers. Taken with `SET NX PX`; renewed and released only by its holder
//! (compare-and-act Lua scripts), so a holder whose lease expired can never extend or delete the
//! lease of the process that took over.

use super::{BackendError, RedisBackend};
use std::sync::LazyLock;
use std::time::Duration;

static RENEW: LazyLock<::redis::Script> = LazyLock::new(|| {
    ::redis::Script::new(
        r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
",
    )
});

static RELEASE: LazyLock<::redis::Script> = LazyLock::new(|| {
    ::redis::Script::new(
        r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
",
    )
});

/// A lease this process holds (until its TTL runs out unless renewed).
#[derive(Debug)]
pub struct Lease {
    backend: RedisBackend,
    name: String,
    key: String,
    holder: String,
    ttl: Duration,
}

fn ttl_millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl Lease {
    /// Takes the lease `name` for `holder` if nobody holds it; `None` when another holder has it
    /// (including this same holder id: ids must be unique per process, see [`Lease::unique_holder_id`]).
    pub async fn try_acquire(backend: &RedisBackend, name: &str, holder: &str, ttl: Duration) -> Result<Option<Lease>, BackendError> {
        let key = backend.lease_key(name);
        let mut conn = backend.conn().await?;
        let set: Option<String> = ::redis::cmd("SET")
            .arg(&key)
            .arg(holder)
            .arg("NX")
            .arg("PX")
            .arg(ttl_millis(ttl))
            .query_async(&mut conn)
            .await?;
        Ok(set.map(|_| Lease {
            backend: backend.clone(),
            name: name.to_owned(),
            key,
            holder: holder.to_owned(),
            ttl,
        }))
    }

    /// Extends the lease by its TTL from now. False when it is no longer ours (it expired, and maybe
    /// another process took it): the caller must stop the work the lease guarded, at once.
    /// Renew well within the TTL (e.g. every third of it).
    pub async fn renew(&self) -> Result<bool, BackendError> {
        let mut conn = self.backend.conn().await?;
        let renewed: i64 = RENEW
            .key(&self.key)
            .arg(&self.holder)
            .arg(ttl_millis(self.ttl))
            .invoke_async(&mut conn)
            .await?;
        Ok(renewed == 1)
    }

    /// Gives the lease up so another process can take it at once; false if it was no longer ours
    /// (then nothing is deleted).
    pub async fn release(self) -> Result<bool, BackendError> {
        let mut conn = self.backend.conn().await?;
        let deleted: i64 = RELEASE.key(&self.key).arg(&self.holder).invoke_async(&mut conn).await?;
        Ok(deleted == 1)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn holder(&self) -> &str {
        &self.holder
    }

    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Who holds the lease `name` now (for `ops status`).
    pub async fn holder_of(backend: &RedisBackend, name: &str) -> Result<Option<String>, BackendError> {
        let mut conn = backend.conn().await?;
        Ok(::redis::cmd("GET").arg(backend.lease_key(name)).query_async(&mut conn).await?)
    }

    /// `<role>-<pid>-<random>`: distinct for every process, even two with the same pid on two hosts.
    pub fn unique_holder_id(role: &str) -> String {
        format!("{role}-{}-{}", std::process::id(), domain::ids::random_hex(12))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redis::test_support::TestRedis;

    #[tokio::test]
    async fn only_one_holder_at_a_time_and_release_frees_it() {
        let t = TestRedis::new().await;
        let other = t.another_process();
        let a = Lease::try_acquire(&t.backend, "reaper", "a", Duration::from_secs(30))
            .await
            .unwrap()
            .expect("free lease");
        assert!(Lease::try_acquire(&other, "reaper", "b", Duration::from_secs(30))
            .await
            .unwrap()
            .is_none());
        assert!(Lease::try_acquire(&t.backend, "reaper", "a", Duration::from_secs(30))
            .await
            .unwrap()
            .is_none());
        assert_eq!(Lease::holder_of(&other, "reaper").await.unwrap().as_deref(), Some("a"));
        // Another name is another lease.
        assert!(Lease::try_acquire(&other, "other", "b", Duration::from_secs(30))
            .await
            .unwrap()
            .is_some());

        assert!(a.renew().await.unwrap());
        assert!(a.release().await.unwrap());
        assert_eq!(Lease::holder_of(&other, "reaper").await.unwrap(), None);
        let b = Lease::try_acquire(&other, "reaper", "b", Duration::from_secs(30)).await.unwrap();
        assert_eq!(b.expect("released lease is free").holder(), "b");
    }

    #[tokio::test]
    async fn renew_keeps_it_and_expiry_hands_it_over_without_the_old_holder_touching_it() {
        let t = TestRedis::new().await;
        let other = t.another_process();
        let ttl = Duration::from_millis(300);
        let a = Lease::try_acquire(&t.backend, "reaper", "a", ttl)
            .await
            .unwrap()
            .expect("free lease");
        // Renewed every 100 ms, it outlives its TTL several times over.
        for _ in 0..8 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert!(a.renew().await.unwrap());
            assert!(Lease::try_acquire(&other, "reaper", "b", ttl).await.unwrap().is_none());
        }
        // Not renewed, it expires and someone else takes it.
        tokio::time::sleep(ttl + Duration::from_millis(200)).await;
        assert_eq!(Lease::holder_of(&other, "reaper").await.unwrap(), None, "expired after its ttl");
        let b = Lease::try_acquire(&other, "reaper", "b", Duration::from_secs(30))
            .await
            .unwrap()
            .expect("expired lease is free");
        // The former holder can neither extend nor release the new holder's lease.
        assert!(!a.renew().await.unwrap());
        assert!(!a.release().await.unwrap());
        assert_eq!(Lease::holder_of(&t.backend, "reaper").await.unwrap().as_deref(), Some("b"));
        assert!(b.renew().await.unwrap());
        assert!(b.release().await.unwrap());
    }

    #[test]
    fn holder_ids_differ() {
        assert_ne!(Lease::unique_holder_id("worker"), Lease::unique_holder_id("worker"));
        assert_eq!(ttl_millis(Duration::ZERO), 1);
    }
}
