//! Fixtures of the store's own tests (and of the modules built on it): a store in a directory of
//! its own, removed with it, and a deposit ready to record.

use super::batches::NewItem;
use super::Store;
use domain::ids::BatchItemId;
use domain::vocabulary::DocumentCategory;
use std::ops::Deref;
use std::path::PathBuf;

/// A fresh store in a temporary directory, deleted on drop.
pub struct TempStore {
    store: Store,
    dir: PathBuf,
}

impl TempStore {
    pub fn new(label: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("sceau-{label}-{}", domain::ids::random_hex(8)));
        let store = Store::open(&dir.join("db.sqlite")).expect("open a test store");
        Self { store, dir }
    }

    /// The directory that holds the database and its log files.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// A handle on the store, for what takes one by value.
    pub fn handle(&self) -> Store {
        self.store.clone()
    }
}

impl Deref for TempStore {
    type Target = Store;

    fn deref(&self) -> &Store {
        &self.store
    }
}

impl Drop for TempStore {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// An identity document of 10 bytes whose front file is `blob`.
pub fn identity_item(blob: &str) -> NewItem {
    NewItem {
        id: BatchItemId::generate(chrono::Utc::now()),
        category: DocumentCategory::Identite,
        external_ref: None,
        agency_postal_code: None,
        agency_insee: None,
        front_blob: blob.to_owned(),
        front_kind: crate::document::FileKind::Png,
        back_blob: None,
        back_kind: None,
        bytes: 10,
        request_id: None,
    }
}

/// A consultation of `company` recorded at `at`, with a front image stored in `blob`, as the
/// recorder makes them.
pub fn consultation_with_image(
    tx: &rusqlite::Connection,
    company: &domain::ids::CompanyId,
    blob: &str,
    at: chrono::DateTime<chrono::Utc>,
) -> Result<domain::ids::ConsultationId, super::RepoError> {
    consultation_of(tx, company, domain::ids::ConsultationId::generate(at), None, blob, at)
}

/// [`consultation_with_image`] under a chosen id, for the batch document `item` when given.
pub fn consultation_of(
    tx: &rusqlite::Connection,
    company: &domain::ids::CompanyId,
    id: domain::ids::ConsultationId,
    item: Option<&BatchItemId>,
    blob: &str,
    at: chrono::DateTime<chrono::Utc>,
) -> Result<domain::ids::ConsultationId, super::RepoError> {
    use super::{consultations, workflows};
    let report = domain::analysis::AnalysisReport {
        verdict: domain::vocabulary::Verdict::AnalyseImpossible,
        document_type: domain::vocabulary::DocumentType::Inconnu,
        document_country: None,
        anomalies: vec![],
        two_d_doc: None,
        holder_age: None,
        pages: 1,
        checks: vec![],
        face_match: None,
    };
    let workflow_id = workflows::default_batch(tx, company, DocumentCategory::Identite)?;
    consultations::insert(
        tx,
        &consultations::NewConsultation {
            id: &id,
            company,
            workflow_id: &workflow_id,
            external_ref: None,
            category: DocumentCategory::Identite,
            report: &report,
            decision: None,
            review_status: None,
            batch_item_id: item.map(BatchItemId::as_str),
            verification_id: None,
            analyzed_at: at,
            now: at,
        },
    )?;
    let image = consultations::ImageFile {
        side: domain::vocabulary::ImageSide::Recto,
        blob: blob.to_owned(),
        kind: crate::document::FileKind::Png,
    };
    consultations::add_image(tx, &id, &image, at)?;
    Ok(id)
}

/// Puts a batch in `status` directly, for tests of what happens to a batch in that state.
pub fn set_batch_status(
    tx: &rusqlite::Connection,
    id: &domain::ids::BatchId,
    status: domain::vocabulary::BatchStatus,
) -> Result<(), super::RepoError> {
    tx.execute("UPDATE batches SET status = ?2 WHERE id = ?1", [id.as_str(), status.as_str()])?;
    Ok(())
}

/// The payloads waiting on `topic` of the embedded queue, as text.
pub fn queued(c: &rusqlite::Connection, topic: crate::queue::Topic) -> Result<Vec<String>, super::RepoError> {
    let mut stmt = c.prepare("SELECT payload FROM queue_messages WHERE topic = ?1 ORDER BY id")?;
    let payloads = stmt
        .query_map([topic.as_str()], |r| r.get::<_, Vec<u8>>(0))?
        .map(|payload| Ok(String::from_utf8_lossy(&payload?).into_owned()))
        .collect::<Result<Vec<_>, super::RepoError>>()?;
    Ok(payloads)
}

/// Makes every insert into `table` fail until [`allow_inserts`]: a failure injected inside the
/// transactions under test, after whatever they did outside the database.
pub fn refuse_inserts(tx: &rusqlite::Connection, table: &str) -> Result<(), super::RepoError> {
    tx.execute_batch(&format!(
        "CREATE TRIGGER refuse_{table} BEFORE INSERT ON {table} BEGIN SELECT RAISE(ABORT, 'injected failure'); END;"
    ))?;
    Ok(())
}

/// Undoes [`refuse_inserts`].
pub fn allow_inserts(tx: &rusqlite::Connection, table: &str) -> Result<(), super::RepoError> {
    tx.execute_batch(&format!("DROP TRIGGER refuse_{table};"))?;
    Ok(())
}

/// A migrated database in memory, for tests of what runs inside one transaction.
pub fn memory() -> rusqlite::Connection {
    let mut conn = rusqlite::Connection::open_in_memory().expect("open an in-memory database");
    super::migrations::apply(&mut conn).expect("migrate");
    conn
}

/// A company with the group licence, in `c`.
pub fn company(c: &rusqlite::Connection) -> domain::ids::CompanyId {
    let keys = crate::crypto::envelope::MasterKeys::ephemeral();
    super::companies::create(c, "Acme", domain::vocabulary::Licence::Group, &keys, chrono::Utc::now())
        .expect("create a company")
        .company
        .id
}
