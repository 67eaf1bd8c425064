//! Consultations (results): recorded once per document, listed with filters and a keyset cursor,
//! and their encrypted images until retention purges them.

use super::error::{stored, stored_time, RepoError};
use crate::document::FileKind;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use chrono::{DateTime, Utc};
use domain::ids::{CompanyId, ConsultationId, WorkflowId};
use domain::model::Consultation;
use domain::vocabulary::{Decision, ImageSide, Verdict};
use rusqlite::types::Value as SqlValue;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension, Row};

const COLUMNS: &str = "seq, id, external_ref, workflow_id, category, document_type, document_country, verdict, decision, review_status, anomalies, two_d_doc, analyzed_at, created_at";

/// A consultation as SQLite holds it ([`COLUMNS`], in order), before its columns are checked.
struct ConsultationRow {
    /// The position in the company's list, for cursors.
    seq: i64,
    id: String,
    external_ref: Option<String>,
    workflow_id: String,
    category: String,
    document_type: String,
    document_country: Option<String>,
    verdict: String,
    decision: Option<String>,
    review_status: Option<String>,
    anomalies: String,
    two_d_doc: Option<String>,
    analyzed_at: String,
    created_at: String,
}

fn build(r: &Row<'_>) -> rusqlite::Result<ConsultationRow> {
    Ok(ConsultationRow {
        seq: r.get(0)?,
        id: r.get(1)?,
        external_ref: r.get(2)?,
        workflow_id: r.get(3)?,
        category: r.get(4)?,
        document_type: r.get(5)?,
        document_country: r.get(6)?,
        verdict: r.get(7)?,
        decision: r.get(8)?,
        review_status: r.get(9)?,
        anomalies: r.get(10)?,
        two_d_doc: r.get(11)?,
        analyzed_at: r.get(12)?,
        created_at: r.get(13)?,
    })
}

fn to_model(c: &ConsultationRow) -> Result<Consultation, RepoError> {
    let anomalies: Vec<domain::vocabulary::Anomaly> = serde_json::from_str(&c.anomalies)?;
    Ok(Consultation {
        id: stored(&c.id)?,
        external_ref: c.external_ref.clone(),
        workflow_id: stored(&c.workflow_id)?,
        document_category: stored(&c.category)?,
        document_type: stored(&c.document_type)?,
        document_country: c.document_country.clone(),
        verdict: stored(&c.verdict)?,
        decision: c.decision.as_deref().map(stored).transpose()?,
        review_status: c.review_status.as_deref().map(stored).transpose()?,
        anomaly_count: anomalies.len(),
        has_reject_anomaly: anomalies.iter().any(|a| a.severity == domain::vocabulary::Severity::Reject),
        anomalies,
        two_d_doc: c.two_d_doc.as_deref().map(serde_json::from_str).transpose()?,
        analyzed_at: stored_time(&c.analyzed_at)?,
        created_at: stored_time(&c.created_at)?,
    })
}

/// A consultation of the company; another company's id is not found.
pub fn get(c: &Connection, company: &CompanyId, id: &ConsultationId) -> Result<Consultation, RepoError> {
    let row = c
        .query_row(
            &format!("SELECT {COLUMNS} FROM consultations WHERE id = ?1 AND company_id = ?2"),
            [id.as_str(), company.as_str()],
            build,
        )
        .optional()?
        .ok_or(RepoError::NotFound)?;
    to_model(&row)
}

/// The filters of `GET /api/v1/consultations`.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    pub workflow_id: Option<WorkflowId>,
    pub verdict: Option<Verdict>,
    pub decision: Option<Decision>,
    pub external_ref: Option<String>,
    pub created_after: Option<DateTime<Utc>>,
}

/// An opaque position in the list: the sequence number of the last row returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor(pub i64);

impl Cursor {
    pub fn encode(self) -> String {
        URL_SAFE_NO_PAD.encode(format!("c1:{}", self.0))
    }

    pub fn decode(s: &str) -> Option<Cursor> {
        let raw = URL_SAFE_NO_PAD.decode(s).ok()?;
        let text = std::str::from_utf8(&raw).ok()?;
        let seq: i64 = text.strip_prefix("c1:")?.parse().ok()?;
        (seq > 0).then_some(Cursor(seq))
    }
}

/// One page, most recent first, and the cursor of the next page if there is one. Keyset on
/// `seq`: constant cost per page, stable while new results arrive.
pub fn list(
    c: &Connection,
    company: &CompanyId,
    filter: &Filter,
    cursor: Option<Cursor>,
    limit: u32,
) -> Result<(Vec<Consultation>, Option<Cursor>), RepoError> {
    let (sql, args) = list_query(company, filter, cursor, limit);
    // Cached: one text per combination of filters, a handful in use, parsed once each.
    let mut stmt = c.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(args), build)?.collect::<Result<Vec<_>, _>>()?;
    into_page(rows, limit)
}

/// A page from rows read one beyond `limit`: the extra row, when there is one, says another page
/// follows, and the cursor to it is the last row kept.
fn into_page(mut rows: Vec<ConsultationRow>, limit: u32) -> Result<(Vec<Consultation>, Option<Cursor>), RepoError> {
    let next = if rows.len() > limit as usize {
        rows.truncate(limit as usize);
        rows.last().map(|row| Cursor(row.seq))
    } else {
        None
    };
    let page = rows.iter().map(to_model).collect::<Result<Vec<_>, _>>()?;
    Ok((page, next))
}

/// How far a result's `created_at` may fall behind one recorded before it (a smaller `seq`):
/// the time is read before the transaction waits for the writer, a few milliseconds, seconds
/// under a burst. Far beyond both, and a `createdAfter` page walks the results of this span
/// before its date at most.
const CREATED_DISORDER: chrono::TimeDelta = chrono::TimeDelta::minutes(10);

/// The SQL of [`list`] and its arguments: one more row than the page, to know if another follows.
fn list_query(company: &CompanyId, filter: &Filter, cursor: Option<Cursor>, limit: u32) -> (String, Vec<SqlValue>) {
    let mut sql = format!("SELECT {COLUMNS} FROM consultations WHERE company_id = ?");
    let mut args: Vec<SqlValue> = vec![company.to_string().into()];
    let mut add = |clause: &str, v: SqlValue| {
        sql.push_str(clause);
        args.push(v);
    };
    if let Some(Cursor(seq)) = cursor {
        add(" AND seq < ?", seq.into());
    }
    if let Some(w) = &filter.workflow_id {
        add(" AND workflow_id = ?", w.to_string().into());
    }
    if let Some(v) = filter.verdict {
        add(" AND verdict = ?", v.as_str().to_owned().into());
    }
    if let Some(d) = filter.decision {
        add(" AND decision = ?", d.as_str().to_owned().into());
    }
    if let Some(r) = &filter.external_ref {
        add(" AND external_ref = ?", r.clone().into());
    }
    if let Some(t) = filter.created_after {
        // `+`: not a range on `consultations_by_day` (every result since then, read and sorted)
        // but a check on the date `consultations_by_company_time` holds beside `seq`, the page
        // filling from the newest results down.
        add(" AND +created_at > ?", domain::time::format(t).into());
        // And a floor under that walk, or a date that matches fewer results than a page walks
        // the company's whole history to find no more (0.25 s at a million): the last result
        // recorded [`CREATED_DISORDER`] before the date, sought in `consultations_by_day` in
        // O(log n) (its entries carry `seq`, the rowid). No later result is older than it by
        // more than that margin, so nothing the date matches lies below it.
        if let Some(floor) = t.checked_sub_signed(CREATED_DISORDER) {
            add(
                " AND seq > coalesce((SELECT seq FROM consultations INDEXED BY consultations_by_day
                   WHERE company_id = ?1 AND created_at <= ? ORDER BY created_at DESC LIMIT 1), 0)",
                domain::time::format(floor).into(),
            );
        }
    }
    add(" ORDER BY seq DESC LIMIT ?", (i64::from(limit) + 1).into());
    (sql, args)
}

/// A consultation about to be recorded.
pub struct NewConsultation<'a> {
    pub id: &'a ConsultationId,
    pub company: &'a CompanyId,
    pub workflow_id: &'a WorkflowId,
    pub external_ref: Option<&'a str>,
    pub category: domain::vocabulary::DocumentCategory,
    pub report: &'a domain::analysis::AnalysisReport,
    pub decision: Option<Decision>,
    pub review_status: Option<domain::vocabulary::ReviewStatus>,
    pub batch_item_id: Option<&'a str>,
    pub verification_id: Option<&'a str>,
    pub analyzed_at: DateTime<Utc>,
    pub now: DateTime<Utc>,
}

pub fn insert(tx: &Connection, n: &NewConsultation<'_>) -> Result<(), RepoError> {
    // Cached: the writer records results one after another, and a seed by the million.
    tx.prepare_cached(
        "INSERT INTO consultations (id, company_id, workflow_id, external_ref, category, document_type, document_country, verdict, decision, review_status, anomalies, two_d_doc, analyzed_at, created_at, batch_item_id, verification_id, checks, face_match)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
    )?
    .execute(params![
            n.id.as_str(), n.company.as_str(), n.workflow_id.as_str(), n.external_ref, n.category.as_str(), n.report.document_type.as_str(), n.report.document_country,
            n.report.verdict.as_str(), n.decision.map(|d| d.as_str()), n.review_status.map(|r| r.as_str()),
            serde_json::to_string(&n.report.anomalies)?, n.report.two_d_doc.as_ref().map(serde_json::to_string).transpose()?,
            domain::time::format(n.analyzed_at), domain::time::format(n.now), n.batch_item_id, n.verification_id,
            serde_json::to_string(&n.report.checks)?, n.report.face_match.as_ref().map(serde_json::to_string).transpose()?
        ],
    )?;
    Ok(())
}

/// The checks performed on a consultation of `company` (empty for results recorded before they were kept).
pub fn checks(conn: &Connection, company: &CompanyId, id: &ConsultationId) -> Result<Vec<domain::analysis::CheckOutcome>, RepoError> {
    let text: Option<String> = conn
        .query_row(
            "SELECT checks FROM consultations WHERE id = ?1 AND company_id = ?2",
            params![id.as_str(), company.as_str()],
            |r| r.get(0),
        )
        .optional()?;
    Ok(match text {
        Some(text) => serde_json::from_str(&text)?,
        None => Vec::new(),
    })
}

/// What the face comparison of a consultation of `company` concluded; `None` without a selfie.
pub fn face_match(
    conn: &Connection,
    company: &CompanyId,
    id: &ConsultationId,
) -> Result<Option<domain::face_match::FaceComparison>, RepoError> {
    let text: Option<Option<String>> = conn
        .query_row(
            "SELECT face_match FROM consultations WHERE id = ?1 AND company_id = ?2",
            params![id.as_str(), company.as_str()],
            |r| r.get(0),
        )
        .optional()?;
    Ok(text.flatten().map(|text| serde_json::from_str(&text)).transpose()?)
}

pub fn add_image(tx: &Connection, id: &ConsultationId, image: &ImageFile, now: DateTime<Utc>) -> Result<(), RepoError> {
    // The image carries its consultation's company, for the retention purge's index.
    let added = tx.execute(
        "INSERT INTO consultation_images (consultation_id, side, blob, content_type, created_at, company_id)
         SELECT ?1, ?2, ?3, ?4, ?5, company_id FROM consultations WHERE id = ?1",
        params![
            id.as_str(),
            image.side.as_str(),
            image.blob,
            image.kind.content_type(),
            domain::time::format(now)
        ],
    )?;
    if added == 0 {
        return Err(RepoError::NotFound);
    }
    Ok(())
}

/// One encrypted file of a consultation's, or one it is copied from: which image it is, its
/// blob, and its type (stored as its MIME type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageFile {
    pub side: ImageSide,
    pub blob: String,
    pub kind: FileKind,
}

/// Where an image stands.
pub enum ImageRef {
    Stored { blob: String, kind: FileKind },
    Purged,
}

/// The file kind of a stored MIME type; another one means the database was altered.
fn stored_kind(content_type: &str) -> Result<FileKind, RepoError> {
    FileKind::from_content_type(content_type).ok_or_else(|| {
        RepoError::Store(super::StoreError::Corrupt(format!(
            "unexpected stored content type {content_type:?}"
        )))
    })
}

/// The image of a side, if the consultation has one (scoped to the company).
pub fn image(c: &Connection, company: &CompanyId, id: &ConsultationId, side: ImageSide) -> Result<Option<ImageRef>, RepoError> {
    let row: Option<(String, String, Option<String>)> = c
        .query_row(
            "SELECT i.blob, i.content_type, i.purged_at FROM consultation_images i JOIN consultations c ON c.id = i.consultation_id
             WHERE i.consultation_id = ?1 AND c.company_id = ?2 AND i.side = ?3",
            params![id.as_str(), company.as_str(), side.as_str()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    row.map(|(blob, content_type, purged)| {
        Ok(if purged.is_some() {
            ImageRef::Purged
        } else {
            ImageRef::Stored {
                blob,
                kind: stored_kind(&content_type)?,
            }
        })
    })
    .transpose()
}

/// The associated data binding a consultation image to its company, consultation and side.
pub fn image_context(company: &CompanyId, id: &ConsultationId, side: ImageSide) -> String {
    format!("company={company};consultation={id};side={side}")
}

/// Which images are due, decided in SQL: per company (the outer loop, a CROSS JOIN so SQLite
/// keeps that order), its retention gives a cut-off, and the `images_to_purge` index hands out
/// only that company's images not purged yet, not held by a review and older than it. Images not
/// due are never read, however many a company with a long retention keeps or a review holds.
/// A retention of 0 days makes an image due as soon as its result is settled.
const DUE_IMAGES: &str = "SELECT i.consultation_id, i.side, i.blob FROM companies co CROSS JOIN consultation_images i
     WHERE i.company_id = co.id AND i.purged_at IS NULL AND i.under_review = 0
       AND i.created_at <= strftime('%Y-%m-%dT%H:%M:%fZ', ?1, '-' || co.retention_days || ' days')
     LIMIT ?2";

/// How many images a retention of `days` would purge in the company and its test account (which
/// share the setting): those not purged yet, older than the cut-off, whose result is settled.
const IMPACT: &str = "SELECT count(*) FROM companies co CROSS JOIN consultation_images i
     WHERE (co.id = ?1 OR co.test_of = ?1) AND i.company_id = co.id AND i.purged_at IS NULL AND i.under_review = 0
       AND i.created_at <= strftime('%Y-%m-%dT%H:%M:%fZ', ?2, '-' || ?3 || ' days')";

/// The images a retention of `days` would purge at `now` (the portal asks before lowering it).
pub fn purged_by_retention(c: &Connection, company: &CompanyId, days: u32, now: DateTime<Utc>) -> Result<u64, RepoError> {
    let count: i64 = c
        .prepare_cached(IMPACT)?
        .query_row(params![company.as_str(), domain::time::format(now), days], |r| r.get(0))?;
    // A count is never negative.
    Ok(count.unsigned_abs())
}

/// An image whose company's retention has passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueImage {
    pub consultation_id: String,
    pub side: String,
    pub blob: String,
}

/// Up to `limit` images past their company's retention, not yet purged.
pub fn images_past_retention(c: &Connection, now: DateTime<Utc>, limit: u32) -> Result<Vec<DueImage>, RepoError> {
    let mut stmt = c.prepare_cached(DUE_IMAGES)?;
    let rows = stmt.query_map(params![domain::time::format(now), limit], |r| {
        Ok(DueImage {
            consultation_id: r.get(0)?,
            side: r.get(1)?,
            blob: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Marks an image purged; once all of a batch document's images are, it stops counting.
pub fn mark_purged(tx: &Connection, id: &str, side: &str, now: DateTime<Utc>) -> Result<(), RepoError> {
    let at = domain::time::format(now);
    tx.prepare_cached("UPDATE consultation_images SET purged_at = ?3 WHERE consultation_id = ?1 AND side = ?2")?
        .execute(params![id, side, at])?;
    tx.prepare_cached(RELEASE_ITEM)?.execute(params![id, at])?;
    Ok(())
}

/// Marks a sweep's batch of deleted images purged, in the caller's one transaction.
pub fn mark_all_purged(tx: &Connection, images: &[DueImage], now: DateTime<Utc>) -> Result<(), RepoError> {
    for image in images {
        mark_purged(tx, &image.consultation_id, &image.side, now)?;
    }
    Ok(())
}

/// The batch document of a consultation whose images are all purged stops counting; found by
/// the partial index `items_by_consultation`.
const RELEASE_ITEM: &str = "UPDATE batch_items SET images_released_at = ?2 WHERE consultation_id = ?1 AND images_released_at IS NULL
     AND NOT EXISTS (SELECT 1 FROM consultation_images WHERE consultation_id = ?1 AND purged_at IS NULL)";

/// Who settled a review and why, as `reviews::settle` records it.
pub struct ReviewNote<'a> {
    pub accepted: bool,
    /// The member's e-mail, or `operator`.
    pub by: &'a str,
    pub comment: Option<&'a str>,
}

/// Settles a pending review of a consultation (of `company` when given: another company's is
/// not found); the verdict never changes.
pub fn settle_review(
    tx: &Connection,
    company: Option<&CompanyId>,
    id: &ConsultationId,
    note: &ReviewNote<'_>,
    now: DateTime<Utc>,
) -> Result<(CompanyId, Consultation), RepoError> {
    let owner: String = tx
        .query_row("SELECT company_id FROM consultations WHERE id = ?1", [id.as_str()], |r| r.get(0))
        .optional()?
        .ok_or(RepoError::NotFound)?;
    let owner: CompanyId = stored(&owner)?;
    if company.is_some_and(|c| *c != owner) {
        return Err(RepoError::NotFound);
    }
    let current = get(tx, &owner, id)?;
    if current.review_status != Some(domain::vocabulary::ReviewStatus::Pending) {
        return Err(RepoError::InvalidState(format!("consultation {id} has no pending review")));
    }
    let status = if note.accepted { "accepted" } else { "rejected" };
    tx.execute(
        "UPDATE consultations SET review_status = ?2, reviewed_at = ?3, reviewed_by = ?4, review_comment = ?5 WHERE id = ?1",
        params![id.as_str(), status, domain::time::format(now), note.by, note.comment],
    )?;
    Ok((owner.clone(), get(tx, &owner, id)?))
}

/// One page of the company's results waiting for a review, oldest first, and the cursor of the
/// next page: keyset on `seq` over the partial index `reviews_pending`.
pub fn pending_page(
    c: &Connection,
    company: &CompanyId,
    after: Option<Cursor>,
    limit: u32,
) -> Result<(Vec<Consultation>, Option<Cursor>), RepoError> {
    let mut stmt = c.prepare_cached(&format!("SELECT {COLUMNS} {PENDING_PAGE}"))?;
    let rows = stmt
        .query_map(
            params![company.as_str(), after.map_or(0, |Cursor(seq)| seq), i64::from(limit) + 1],
            build,
        )?
        .collect::<Result<Vec<_>, _>>()?;
    into_page(rows, limit)
}

pub(crate) const PENDING_PAGE: &str = "FROM consultations INDEXED BY reviews_pending
     WHERE company_id = ?1 AND review_status = 'pending' AND seq > ?2 ORDER BY seq LIMIT ?3";

/// Every image a consultation of the company has, in side order, stored or purged.
pub fn images(c: &Connection, company: &CompanyId, id: &ConsultationId) -> Result<Vec<(ImageSide, ImageRef)>, RepoError> {
    let mut images = Vec::new();
    for &side in ImageSide::ALL {
        if let Some(image) = image(c, company, id, side)? {
            images.push((side, image));
        }
    }
    Ok(images)
}

/// Consultations waiting for a human review, oldest first; test mode's never (nobody reviews a
/// made-up result).
pub fn pending_reviews(c: &Connection, company: Option<&CompanyId>, limit: u32) -> Result<Vec<Consultation>, RepoError> {
    let mut stmt = c.prepare(&format!(
        "SELECT {COLUMNS} FROM consultations WHERE review_status = 'pending' AND (?1 IS NULL OR company_id = ?1)
         AND company_id NOT IN (SELECT id FROM companies WHERE test_of IS NOT NULL) ORDER BY seq LIMIT ?2"
    ))?;
    let rows = stmt
        .query_map(params![company.map(|c| c.as_str()), limit], build)?
        .collect::<Result<Vec<_>, _>>()?;
    rows.iter().map(to_model).collect()
}

/// A consultation by id alone, for operator commands.
pub fn get_any(c: &Connection, id: &ConsultationId) -> Result<(CompanyId, Consultation), RepoError> {
    let company: String = c
        .query_row("SELECT company_id FROM consultations WHERE id = ?1", [id.as_str()], |r| r.get(0))
        .optional()?
        .ok_or(RepoError::NotFound)?;
    let company: CompanyId = stored(&company)?;
    let consultation = get(c, &company, id)?;
    Ok((company, consultation))
}

#[cfg(test)]
mod tests {
    use super::Cursor;
    use super::*;
    use crate::crypto::envelope::MasterKeys;
    use crate::store::companies;
    use crate::store::test_support::{consultation_with_image, TempStore};
    use chrono::Duration;
    use domain::vocabulary::Licence;

    /// Company A keeps images ten years and holds 2,000 of them, 400 days old: none is due. Company
    /// B keeps them one day; its one image, two days old, is due and must be the first purged,
    /// whatever A holds.
    fn mixed_retentions(tx: &Connection, now: DateTime<Utc>) -> Result<(), RepoError> {
        let keys = MasterKeys::ephemeral();
        let a = companies::create(tx, "A", Licence::Group, &keys, now)?.company.id;
        let b = companies::create(tx, "B", Licence::Group, &keys, now)?.company.id;
        companies::set(tx, &a, None, Some(3650))?;
        companies::set(tx, &b, None, Some(1))?;
        for n in 0..2_000 {
            consultation_with_image(tx, &a, &format!("a-{n}"), now - Duration::days(400))?;
        }
        consultation_with_image(tx, &b, "b-due", now - Duration::days(2))?;
        consultation_with_image(tx, &b, "b-kept", now - Duration::hours(12))?;
        Ok(())
    }

    #[tokio::test]
    async fn a_long_retention_with_many_old_images_never_delays_another_company_purge() {
        let store = TempStore::new("purge");
        let now = Utc::now();
        store.write(move |tx| mixed_retentions(tx, now)).await.unwrap();
        let due = store.read(move |c| images_past_retention(c, now, 200)).await.unwrap();
        let blobs: Vec<&str> = due.iter().map(|image| image.blob.as_str()).collect();
        assert_eq!(blobs, vec!["b-due"], "the first sweep purges B's due image, and only it");

        let later = now + Duration::days(3651 - 400);
        let due = store.read(move |c| images_past_retention(c, later, 150)).await.unwrap();
        assert_eq!(due.len(), 150, "once A's images are due, they go in bounded chunks");
    }

    /// Retention 0 in a company holding three results: one settled without review, one whose
    /// review waits (its second image added while it waits), one whose review was settled.
    #[tokio::test]
    async fn a_result_waiting_for_review_keeps_its_images_whatever_the_retention() {
        let store = TempStore::new("purge-held");
        let now = Utc::now();
        let (company, waiting) = store
            .write(move |tx| {
                let company = crate::store::test_support::company(tx);
                companies::set(tx, &company, None, Some(0))?;
                consultation_with_image(tx, &company, "settled", now - Duration::days(400))?;
                let waiting = consultation_with_image(tx, &company, "waiting-recto", now - Duration::days(400))?;
                let reviewed = consultation_with_image(tx, &company, "reviewed", now - Duration::days(400))?;
                for id in [&waiting, &reviewed] {
                    tx.execute("UPDATE consultations SET review_status = 'pending' WHERE id = ?1", [id.as_str()])?;
                }
                let verso = ImageFile {
                    side: ImageSide::Verso,
                    blob: "waiting-verso".into(),
                    kind: crate::document::FileKind::Png,
                };
                add_image(tx, &waiting, &verso, now - Duration::days(400))?;
                tx.execute(
                    "UPDATE consultations SET review_status = 'accepted' WHERE id = ?1",
                    [reviewed.as_str()],
                )?;
                Ok::<_, RepoError>((company, waiting))
            })
            .await
            .unwrap();
        let due = |at: DateTime<Utc>| {
            let store = store.handle();
            async move {
                let mut blobs: Vec<String> = store
                    .read(move |c| images_past_retention(c, at, 200))
                    .await
                    .unwrap()
                    .into_iter()
                    .map(|image| image.blob)
                    .collect();
                blobs.sort();
                blobs
            }
        };
        assert_eq!(due(now).await, ["reviewed", "settled"], "the waiting result's images are held");
        assert_eq!(due(now + Duration::days(4000)).await, ["reviewed", "settled"], "held however old");
        let co = company.clone();
        let impact = store
            .read(move |c| {
                Ok::<_, RepoError>((
                    purged_by_retention(c, &co, 0, now)?,
                    purged_by_retention(c, &co, 399, now)?,
                    purged_by_retention(c, &co, 401, now)?,
                ))
            })
            .await
            .unwrap();
        assert_eq!(impact, (2, 2, 0), "the impact counts what the sweep would take, never held images");

        store
            .write(move |tx| {
                tx.execute(
                    "UPDATE consultations SET review_status = 'rejected' WHERE id = ?1",
                    [waiting.as_str()],
                )?;
                Ok::<_, RepoError>(())
            })
            .await
            .unwrap();
        assert_eq!(
            due(now).await,
            ["reviewed", "settled", "waiting-recto", "waiting-verso"],
            "once settled, retention 0 purges them"
        );
    }

    #[test]
    fn each_filter_of_the_list_seeks_an_index_in_page_order() {
        let conn = crate::store::test_support::memory();
        let company = CompanyId::generate(Utc::now());
        let plan = |filter: Filter| -> Vec<String> {
            let (sql, args) = list_query(&company, &filter, Some(Cursor(1_000)), 25);
            let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
            let rows = stmt.query_map(params_from_iter(args), |r| r.get::<_, String>(3)).unwrap();
            rows.collect::<Result<_, _>>().unwrap()
        };
        let workflow = WorkflowId::generate(Utc::now());
        let cases = [
            (Filter::default(), "consultations_by_company_time (company_id=? AND seq<?)"),
            (
                Filter {
                    verdict: Some(Verdict::Suspect),
                    ..Filter::default()
                },
                "consultations_by_verdict (company_id=? AND verdict=? AND seq<?)",
            ),
            (
                Filter {
                    decision: Some(Decision::AVerifier),
                    ..Filter::default()
                },
                "consultations_by_decision (company_id=? AND decision=? AND seq<?)",
            ),
            (
                Filter {
                    workflow_id: Some(workflow),
                    ..Filter::default()
                },
                "consultations_by_workflow (company_id=? AND workflow_id=? AND seq<?)",
            ),
            (
                Filter {
                    external_ref: Some("r".into()),
                    ..Filter::default()
                },
                "consultations_by_external_ref (company_id=? AND external_ref=? AND seq<?)",
            ),
        ];
        for (filter, index) in cases {
            let plan = plan(filter.clone());
            assert_eq!(plan.len(), 1, "no sort of what the filter matched: {filter:?} {plan:?}");
            assert!(
                plan[0].starts_with("SEARCH consultations USING INDEX") && plan[0].ends_with(index),
                "{filter:?}: {plan:?}"
            );
        }
        // `createdAfter`: the company's results newest first down to a floor, itself one seek in
        // the dates' index; without the floor (`seq<?` alone), a date matching less than a page
        // walks the company's whole history.
        let plan = plan(Filter {
            created_after: Some(Utc::now()),
            ..Filter::default()
        });
        let expected = [
            "SEARCH consultations USING INDEX consultations_by_company_time (company_id=? AND seq>? AND seq<?)",
            "SCALAR SUBQUERY 1",
            "SEARCH consultations USING COVERING INDEX consultations_by_day (company_id=? AND created_at<?)",
        ];
        let mut sorted = plan.clone();
        sorted.sort();
        let mut wanted = expected.to_vec();
        wanted.sort();
        assert_eq!(sorted, wanted, "createdAfter: {plan:?}");
    }

    /// Results recorded out of date order by less than [`CREATED_DISORDER`] (a time read before
    /// the transaction queued) are all found by `createdAfter`, and only they, page by page.
    #[tokio::test]
    async fn created_after_finds_every_later_result_even_slightly_out_of_order() {
        let store = TempStore::new("created-after");
        let now = Utc::now();
        let company = store
            .write(move |tx| {
                let company = companies::create(tx, "A", Licence::Group, &MasterKeys::ephemeral(), now)?
                    .company
                    .id;
                // In recording order; the fourth one's time is a minute before the third's.
                for minutes in [-600, -120, -61, -62, -30, -1] {
                    consultation_with_image(tx, &company, &format!("m{minutes}"), now + Duration::minutes(minutes))?;
                }
                Ok::<_, RepoError>(company)
            })
            .await
            .unwrap();
        let store = &store;
        let found = |after: DateTime<Utc>, limit: u32| {
            let company = company.clone();
            async move {
                let mut ages = Vec::new();
                let mut cursor = None;
                loop {
                    let filter = Filter {
                        created_after: Some(after),
                        ..Filter::default()
                    };
                    let (company, at) = (company.clone(), cursor);
                    let (page, next) = store.read(move |c| list(c, &company, &filter, at, limit)).await.unwrap();
                    ages.extend(page.iter().map(|r| (now - r.created_at).num_minutes()));
                    match next {
                        Some(next) => cursor = Some(next),
                        None => return ages,
                    }
                }
            }
        };
        assert_eq!(found(now - Duration::seconds(61 * 60 + 30), 25).await, [1, 30, 61]);
        assert_eq!(found(now - Duration::seconds(61 * 60 + 30), 1).await, [1, 30, 61], "page by page");
        assert_eq!(found(now - Duration::minutes(90), 2).await, [1, 30, 62, 61]);
        assert_eq!(found(now - Duration::days(1000), 25).await, [1, 30, 62, 61, 120, 600]);
        assert!(found(now + Duration::days(1), 25).await.is_empty());
    }

    #[tokio::test]
    async fn the_purge_query_seeks_the_index_per_company() {
        let store = TempStore::new("purge-plan");
        let plan = store
            .read(|c| {
                let mut stmt = c.prepare(&format!("EXPLAIN QUERY PLAN {DUE_IMAGES}"))?;
                let rows = stmt.query_map(params!["2025-01-01T00:00:00.000Z", 200], |r| r.get::<_, String>(3))?;
                Ok::<_, RepoError>(rows.collect::<Result<Vec<_>, _>>()?)
            })
            .await
            .unwrap();
        assert_eq!(plan.len(), 2, "{plan:?}");
        assert!(plan[0].starts_with("SCAN co"), "companies outside: {plan:?}");
        assert!(
            plan[1].starts_with("SEARCH i USING INDEX images_to_purge (company_id=? AND created_at<?)"),
            "images sought by company and age: {plan:?}"
        );
    }

    /// Releasing a purged consultation's batch document seeks it by consultation: before
    /// `items_by_consultation`, each purged image scanned every batch document.
    #[tokio::test]
    async fn a_purged_item_is_found_by_its_consultation() {
        let store = TempStore::new("release-plan");
        let plan = store
            .read(|c| {
                let mut stmt = c.prepare(&format!("EXPLAIN QUERY PLAN {RELEASE_ITEM}"))?;
                let rows = stmt.query_map(params!["CSL-1", "2025-01-01T00:00:00.000Z"], |r| r.get::<_, String>(3))?;
                Ok::<_, RepoError>(rows.collect::<Result<Vec<_>, _>>()?)
            })
            .await
            .unwrap();
        assert_eq!(
            plan.first().map(String::as_str),
            Some("SEARCH batch_items USING INDEX items_by_consultation (consultation_id=?)"),
            "{plan:?}"
        );
    }

    #[test]
    fn cursor_round_trips_and_rejects_garbage() {
        let c = Cursor(42);
        assert_eq!(Cursor::decode(&c.encode()), Some(c));
        for bad in ["", "abc", "YzE6LTE", "!!!!"] {
            assert_eq!(Cursor::decode(bad), None, "{bad}");
        }
    }
}
