//! What a company holds in the service, as a deposit's limits see it: its documents whose images
//! are still kept and the bytes of its documents waiting for analysis. One row per company,
//! kept in step with every change of `batch_items` by the triggers of the migration that created
//! `company_holdings`: a deposit reads one row, whatever the company holds.

use super::error::RepoError;
use domain::ids::CompanyId;
use rusqlite::{Connection, OptionalExtension};

/// A company's holdings; zero for a company that never deposited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Holdings {
    /// Batch documents whose images are not purged yet (`images_released_at IS NULL`), for
    /// [`domain::batch::MAX_NON_PURGED_DOCUMENTS`].
    pub held_documents: i64,
    /// Bytes of the batch documents pending or under analysis, for the volume limit.
    pub waiting_bytes: i64,
}

pub(super) const HOLDINGS: &str = "SELECT held_documents, waiting_bytes FROM company_holdings WHERE company_id = ?1";

/// The company's holdings as of this transaction.
pub fn of(c: &Connection, company: &CompanyId) -> Result<Holdings, RepoError> {
    let row = c
        .prepare_cached(HOLDINGS)?
        .query_row([company.as_str()], |r| {
            Ok(Holdings {
                held_documents: r.get(0)?,
                waiting_bytes: r.get(1)?,
            })
        })
        .optional()?;
    Ok(row.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::batches::{self, WINDOW};
    use crate::store::test_support::{company, consultation_of, identity_item, memory};
    use crate::store::{consultations, migrations};
    use chrono::Utc;
    use domain::ids::{BatchItemId, ConsultationId};
    use domain::vocabulary::{ItemError, ItemStatus};

    /// The holdings counted from the rows themselves, as the deposit did before the counters.
    fn recounted(c: &Connection, company: &CompanyId) -> Holdings {
        c.query_row(
            "SELECT count(*) FILTER (WHERE images_released_at IS NULL),
                    coalesce(sum(bytes) FILTER (WHERE status IN ('pending', 'processing')), 0)
             FROM batch_items WHERE company_id = ?1",
            [company.as_str()],
            |r| {
                Ok(Holdings {
                    held_documents: r.get(0)?,
                    waiting_bytes: r.get(1)?,
                })
            },
        )
        .unwrap()
    }

    fn deposited(c: &Connection, company: &CompanyId, batch: &domain::ids::BatchId, bytes: i64) -> BatchItemId {
        let item = crate::store::batches::NewItem {
            bytes,
            ..identity_item("blob")
        };
        batches::deposit(c, company, batch, &item, u64::MAX, Utc::now()).unwrap();
        item.id
    }

    /// Every way a batch document changes moves the counters as a recount would: deposit,
    /// taken by a worker, put back, settled (with or without a consultation), canceled with its
    /// batch, its files released, its consultation's images purged; another company's documents
    /// never count.
    #[test]
    fn the_counters_follow_every_change_of_a_document() {
        let conn = memory();
        let (acme, other) = (company(&conn), company(&conn));
        let now = Utc::now();
        let check = |step: &str| {
            for co in [&acme, &other] {
                assert_eq!(of(&conn, co).unwrap(), recounted(&conn, co), "{step}");
            }
        };
        assert_eq!(of(&conn, &acme).unwrap(), Holdings::default(), "nothing deposited yet");

        let batch = batches::create(&conn, &acme, None, None, WINDOW, now).unwrap().id;
        let items: Vec<_> = (1..=4).map(|n| deposited(&conn, &acme, &batch, n * 1000)).collect();
        let foreign = batches::create(&conn, &other, None, None, WINDOW, now).unwrap().id;
        deposited(&conn, &other, &foreign, 77);
        check("deposited");
        assert_eq!(
            of(&conn, &acme).unwrap(),
            Holdings {
                held_documents: 4,
                waiting_bytes: 10_000
            }
        );

        batches::submit(&conn, &acme, &batch, WINDOW, now).unwrap();
        batches::mark_processing(&conn, &items[0]).unwrap();
        batches::mark_processing(&conn, &items[1]).unwrap();
        check("taken by workers");
        conn.execute("UPDATE batch_items SET status = 'pending' WHERE id = ?1", [items[1].as_str()])
            .unwrap();
        check("put back");

        let consultation = ConsultationId::generate(now);
        assert!(batches::settle_item(&conn, &items[0], ItemStatus::Succeeded, None, Some(&consultation), now).unwrap());
        consultation_of(&conn, &acme, consultation.clone(), Some(&items[0]), "image-blob", now).unwrap();
        assert!(batches::settle_item(
            &conn,
            &items[1],
            ItemStatus::Errored,
            Some(ItemError::UnreadableDocument),
            None,
            now
        )
        .unwrap());
        check("settled");
        assert_eq!(of(&conn, &acme).unwrap().waiting_bytes, 7000, "3000 + 4000 still pending");

        batches::cancel(&conn, &acme, &batch, None, now).unwrap();
        check("canceled");
        assert_eq!(of(&conn, &acme).unwrap().waiting_bytes, 0);

        for item in &items {
            batches::files_released(&conn, item.as_str(), now).unwrap();
        }
        check("files released");
        assert_eq!(of(&conn, &acme).unwrap().held_documents, 1, "the analysed one keeps its image");
        consultations::mark_purged(&conn, consultation.as_str(), "recto", now).unwrap();
        check("images purged");
        assert_eq!(of(&conn, &acme).unwrap(), Holdings::default());
        assert_eq!(
            of(&conn, &other).unwrap(),
            Holdings {
                held_documents: 1,
                waiting_bytes: 77
            }
        );

        conn.execute("DELETE FROM batch_items WHERE company_id = ?1", [other.as_str()])
            .unwrap();
        check("deleted");
    }

    /// A database from before the counters gets them from its rows when it is migrated.
    #[test]
    fn the_migration_counts_what_companies_already_hold() {
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        let created = migrations::MIGRATIONS
            .iter()
            .position(|m| m.contains("CREATE TABLE company_holdings"))
            .unwrap();
        migrations::apply_up_to(&mut conn, created).unwrap();
        // The row alone, as that version wrote it: today's `companies::create` writes today's schema.
        let acme = domain::ids::CompanyId::generate(Utc::now());
        conn.execute(
            "INSERT INTO companies (id, name, licence, created_at) VALUES (?1, 'Acme', 'group', '2026-01-01T00:00:00Z')",
            [acme.as_str()],
        )
        .unwrap();
        let batch = batches::create(&conn, &acme, None, None, WINDOW, Utc::now()).unwrap().id;
        for bytes in [500, 700] {
            let item = identity_item("blob");
            conn.execute(
                "INSERT INTO batch_items (id, batch_id, company_id, position, category, status, front_blob, front_kind, bytes, created_at)
                 VALUES (?1, ?2, ?3, ?4, 'identite', 'pending', 'blob', 'png', ?4, '2026-01-01T00:00:00Z')",
                rusqlite::params![item.id.as_str(), batch.as_str(), acme.as_str(), bytes],
            )
            .unwrap();
        }
        migrations::apply(&mut conn).unwrap();
        assert_eq!(
            of(&conn, &acme).unwrap(),
            Holdings {
                held_documents: 2,
                waiting_bytes: 1200
            }
        );
    }
}
