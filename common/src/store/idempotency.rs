//! Idempotency keys (`API.md`, Idempotency): for 24 h a POST of the API carrying an
//! `Idempotency-Key` is remembered with the fingerprint of its request and its response, so a
//! client's retry replays the answer instead of doing the work twice. A key is claimed before its
//! request runs, which is how a concurrent duplicate is told that the first is still in flight.

use super::error::RepoError;
use chrono::{DateTime, Duration, Utc};
use domain::ids::CompanyId;
use domain::vocabulary::Mode;
use rusqlite::{params, Connection, OptionalExtension};

/// How long a key and its response are remembered.
pub const REMEMBERED: Duration = Duration::hours(24);
/// A claim older than this never finished (its process died): the key may be claimed again.
/// Longer than any request may last (`SCEAU_REQUEST_TIMEOUT_SECONDS` is at most 5 minutes).
pub const ABANDONED_AFTER: Duration = Duration::minutes(10);

/// Whose key: keys of different companies and modes never meet. (A test key's account is
/// already not its company's; the mode is kept too, to read the table without knowing that.)
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    pub company: &'a CompanyId,
    pub mode: Mode,
    pub key: &'a str,
}

/// The response remembered for a key, with the fingerprint of the request that earned it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remembered {
    /// SHA-256 of the request's method, path and body.
    pub fingerprint: Vec<u8>,
    pub status: u16,
    pub content_type: Option<String>,
    /// The response body, sealed with the service's master keys: a response may carry a journey's
    /// link, which is as good as a password.
    pub sealed_body: Vec<u8>,
}

/// What claiming a key found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The key was free (or forgotten); it is now held by the caller's request.
    Claimed,
    /// Another request with this key has not answered yet.
    InFlight,
    /// The key answered before: replay it, if the request is the same.
    Answered(Remembered),
}

/// A key's row as stored: the response columns are empty while its request is in flight.
struct KeyRow {
    fingerprint: Option<Vec<u8>>,
    status: Option<u16>,
    content_type: Option<String>,
    response_sealed: Option<Vec<u8>>,
}

/// Claims `scope`'s key for a request starting `now`, forgetting first this key if past its time.
/// The other keys past theirs are the sweeper's ([`forget_expired`]): a request's transaction
/// deletes one row at most, however many expired since the last claim.
pub fn claim(tx: &Connection, scope: Scope<'_>, now: DateTime<Utc>) -> Result<Claim, RepoError> {
    let now_ms = now.timestamp_millis();
    tx.prepare_cached(
        "DELETE FROM idempotency_keys WHERE company_id = ?1 AND mode = ?2 AND key = ?3
            AND (created_at_ms < ?4 OR (fingerprint IS NULL AND created_at_ms < ?5))",
    )?
    .execute(params![
        scope.company.as_str(),
        scope.mode.as_str(),
        scope.key,
        now_ms - REMEMBERED.num_milliseconds(),
        now_ms - ABANDONED_AFTER.num_milliseconds()
    ])?;
    let found = tx
        .query_row(
            "SELECT fingerprint, status, content_type, response_sealed FROM idempotency_keys
             WHERE company_id = ?1 AND mode = ?3 AND key = ?2",
            params![scope.company.as_str(), scope.key, scope.mode.as_str()],
            |r| {
                Ok(KeyRow {
                    fingerprint: r.get(0)?,
                    status: r.get(1)?,
                    content_type: r.get(2)?,
                    response_sealed: r.get(3)?,
                })
            },
        )
        .optional()?;
    match found.map(|row| (row.fingerprint, row.status, row.content_type, row.response_sealed)) {
        None => {
            tx.execute(
                "INSERT INTO idempotency_keys (company_id, mode, key, created_at_ms) VALUES (?1, ?4, ?2, ?3)",
                params![scope.company.as_str(), scope.key, now_ms, scope.mode.as_str()],
            )?;
            Ok(Claim::Claimed)
        }
        Some((Some(fingerprint), Some(status), content_type, Some(sealed_body))) => Ok(Claim::Answered(Remembered {
            fingerprint,
            status,
            content_type,
            sealed_body,
        })),
        Some(_) => Ok(Claim::InFlight),
    }
}

/// Remembers the response to the request that holds `scope`'s key.
pub fn answer(tx: &Connection, scope: Scope<'_>, response: &Remembered) -> Result<(), RepoError> {
    tx.execute(
        "UPDATE idempotency_keys SET fingerprint = ?4, status = ?5, content_type = ?6, response_sealed = ?7
         WHERE company_id = ?1 AND mode = ?3 AND key = ?2",
        params![
            scope.company.as_str(),
            scope.key,
            scope.mode.as_str(),
            response.fingerprint,
            response.status,
            response.content_type,
            response.sealed_body
        ],
    )?;
    Ok(())
}

/// Lets `scope`'s key go without remembering anything: the request failed in a way worth retrying
/// (a bug, a full disk, a rate limit), or was refused before it was read whole.
pub fn release(tx: &Connection, scope: Scope<'_>) -> Result<(), RepoError> {
    tx.execute(
        "DELETE FROM idempotency_keys WHERE company_id = ?1 AND mode = ?3 AND key = ?2 AND fingerprint IS NULL",
        params![scope.company.as_str(), scope.key, scope.mode.as_str()],
    )?;
    Ok(())
}

/// Forgets up to `limit` keys past their [`REMEMBERED`] time at `now`, oldest first (by
/// `idempotency_keys_by_age`); how many it forgot. One bounded transaction each call.
pub fn forget_expired(tx: &Connection, now: DateTime<Utc>, limit: u32) -> Result<usize, RepoError> {
    let cut = now.timestamp_millis() - REMEMBERED.num_milliseconds();
    Ok(tx
        .prepare_cached(
            "DELETE FROM idempotency_keys WHERE (company_id, mode, key) IN
                (SELECT company_id, mode, key FROM idempotency_keys WHERE created_at_ms < ?1 ORDER BY created_at_ms LIMIT ?2)",
        )?
        .execute(params![cut, limit])?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::TempStore;

    fn remembered(fingerprint: &[u8]) -> Remembered {
        Remembered {
            fingerprint: fingerprint.to_vec(),
            status: 201,
            content_type: Some("application/json".into()),
            sealed_body: b"sealed".to_vec(),
        }
    }

    #[tokio::test]
    async fn a_key_is_claimed_once_answered_then_forgotten_after_a_day() {
        let store = TempStore::new("idempotency");
        let company = CompanyId::generate(Utc::now());
        let other = CompanyId::generate(Utc::now());
        let t0 = Utc::now();
        let claims = {
            let (company, other) = (company.clone(), other.clone());
            store
                .write(move |tx| -> Result<_, RepoError> {
                    let scope = Scope {
                        company: &company,
                        mode: Mode::Live,
                        key: "k-1",
                    };
                    let first = claim(tx, scope, t0)?;
                    let again = claim(tx, scope, t0 + Duration::seconds(1))?;
                    let elsewhere = claim(
                        tx,
                        Scope {
                            company: &other,
                            mode: Mode::Live,
                            key: "k-1",
                        },
                        t0,
                    )?;
                    Ok((first, again, elsewhere))
                })
                .await
                .unwrap()
        };
        assert_eq!(claims, (Claim::Claimed, Claim::InFlight, Claim::Claimed));
        let company2 = company.clone();
        let later = store
            .write(move |tx| -> Result<_, RepoError> {
                let scope = Scope {
                    company: &company2,
                    mode: Mode::Live,
                    key: "k-1",
                };
                answer(tx, scope, &remembered(b"f1"))?;
                let replay = claim(tx, scope, t0 + Duration::hours(23))?;
                let forgotten = claim(tx, scope, t0 + Duration::hours(25))?;
                Ok((replay, forgotten))
            })
            .await
            .unwrap();
        assert_eq!(later, (Claim::Answered(remembered(b"f1")), Claim::Claimed));
    }

    #[tokio::test]
    async fn a_released_or_abandoned_claim_frees_the_key() {
        let store = TempStore::new("idempotency");
        let company = CompanyId::generate(Utc::now());
        let t0 = Utc::now();
        let claims = store
            .write(move |tx| -> Result<_, RepoError> {
                let scope = Scope {
                    company: &company,
                    mode: Mode::Live,
                    key: "k-2",
                };
                claim(tx, scope, t0)?;
                release(tx, scope)?;
                let after_release = claim(tx, scope, t0)?;
                let still_running = claim(tx, scope, t0 + Duration::minutes(9))?;
                let abandoned = claim(tx, scope, t0 + Duration::minutes(11))?;
                Ok((after_release, still_running, abandoned))
            })
            .await
            .unwrap();
        assert_eq!(claims, (Claim::Claimed, Claim::InFlight, Claim::Claimed));
    }

    #[tokio::test]
    async fn the_sweeper_forgets_expired_keys_in_bounded_batches_and_a_claim_only_its_own() {
        let store = TempStore::new("idempotency");
        let company = CompanyId::generate(Utc::now());
        let t0 = Utc::now();
        let (claimed_late, left, rounds, kept) = store
            .write(move |tx| -> Result<_, RepoError> {
                let scope = |key| Scope {
                    company: &company,
                    mode: Mode::Live,
                    key,
                };
                for key in ["old-1", "old-2", "old-3"] {
                    claim(tx, scope(key), t0)?;
                    answer(tx, scope(key), &remembered(b"f"))?;
                }
                claim(tx, scope("fresh"), t0 + Duration::hours(20))?;
                let later = t0 + Duration::hours(25);
                // A claim at `later` deletes its own expired key, no other.
                let claimed_late = claim(tx, scope("old-1"), later)?;
                let left: i64 = tx.query_row("SELECT count(*) FROM idempotency_keys", [], |r| r.get(0))?;
                let rounds: Vec<usize> = (0..3).map(|_| forget_expired(tx, later, 1)).collect::<Result<_, _>>()?;
                let mut kept = tx.prepare("SELECT key FROM idempotency_keys ORDER BY key")?;
                let kept: Vec<String> = kept.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
                Ok((claimed_late, left, rounds, kept))
            })
            .await
            .unwrap();
        assert_eq!(claimed_late, Claim::Claimed);
        assert_eq!(left, 4, "the claim left the other expired keys to the sweeper");
        assert_eq!(rounds, [1, 1, 0], "one per call at most, until none is expired");
        assert_eq!(kept, ["fresh", "old-1"], "the fresh key and the one claimed again stay");
    }
}
