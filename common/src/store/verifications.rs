//! Verification sessions: the link handed to a customer. The token is random (256 bits), stored
//! hashed, and the session's status is computed against its expiry.

use super::error::{stored, stored_time, RepoError};
use crate::document::FileKind;
use crate::messages::{Job, JobSource, JobV1};
use crate::telemetry::RequestId;
use ::domain::branding::{DisplayName, JourneySettings};
use ::domain::return_url::ReturnUrl;
use chrono::{DateTime, Duration, Utc};
use domain::ids::{CompanyId, VerificationId, WorkflowId};
use domain::model::VerificationSession;
use domain::vocabulary::{Decision, DocumentCategory, JourneySide, Mode, ReviewStatus, Verdict, VerificationStatus};
use domain::webhook::{ConsultationOutcome, WebhookEvent};
use rusqlite::{params, Connection, OptionalExtension, Row};

pub fn token_hash(token: &str) -> Vec<u8> {
    ring::digest::digest(&ring::digest::SHA256, token.as_bytes()).as_ref().to_vec()
}

const COLUMNS: &str = "id, workflow_id, external_ref, status, consultation_id, expires_at, created_at, return_url";

/// A session as SQLite holds it ([`COLUMNS`], in order), before its columns are checked.
struct SessionRow {
    id: String,
    workflow_id: String,
    external_ref: Option<String>,
    status: String,
    consultation_id: Option<String>,
    expires_at: String,
    created_at: String,
    return_url: Option<String>,
}

fn raw(r: &Row<'_>) -> rusqlite::Result<SessionRow> {
    Ok(SessionRow {
        id: r.get(0)?,
        workflow_id: r.get(1)?,
        external_ref: r.get(2)?,
        status: r.get(3)?,
        consultation_id: r.get(4)?,
        expires_at: r.get(5)?,
        created_at: r.get(6)?,
        return_url: r.get(7)?,
    })
}

/// The stored status, or `expired` for a session still open past `expires_at`: the one expiry
/// rule of the owner's view and of the journey.
fn current_status(stored_status: &str, expires_at: &str, now: DateTime<Utc>) -> Result<VerificationStatus, RepoError> {
    Ok(domain::journey::current_status(
        stored(stored_status)?,
        stored_time(expires_at)?,
        now,
    ))
}

/// The session as its owner sees it; `url` is rebuilt by the caller from the public base when
/// the caller may see it.
fn build(r: SessionRow, url: Option<String>, now: DateTime<Utc>) -> Result<VerificationSession, RepoError> {
    let status = current_status(&r.status, &r.expires_at, now)?;
    Ok(VerificationSession {
        id: stored(&r.id)?,
        verification_url: url,
        external_ref: r.external_ref,
        return_url: r.return_url.map(ReturnUrl::stored),
        workflow_id: stored(&r.workflow_id)?,
        expires_at: stored_time(&r.expires_at)?,
        status,
        consultation_id: r.consultation_id.as_deref().map(stored).transpose()?,
        created_at: stored_time(&r.created_at)?,
    })
}

pub struct NewSession<'a> {
    pub company: &'a CompanyId,
    pub workflow_id: &'a WorkflowId,
    pub external_ref: Option<&'a str>,
    pub return_url: Option<&'a ReturnUrl>,
    pub expires_in_minutes: i64,
    pub token: &'a str,
    /// The token sealed by the master key, so the link can be shown again.
    pub token_sealed: Vec<u8>,
    pub url: String,
}

pub fn create(tx: &Connection, id: &VerificationId, n: NewSession<'_>, now: DateTime<Utc>) -> Result<VerificationSession, RepoError> {
    super::workflows::get(tx, n.company, n.workflow_id)?;
    let expires = now + Duration::minutes(n.expires_in_minutes);
    tx.execute(
        "INSERT INTO verifications (id, company_id, workflow_id, external_ref, token_hash, token_sealed, status, expires_at, created_at, return_url) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'created', ?7, ?8, ?9)",
        params![id.as_str(), n.company.as_str(), n.workflow_id.as_str(), n.external_ref, token_hash(n.token), n.token_sealed, domain::time::format(expires), domain::time::format(now), n.return_url.map(ReturnUrl::as_str)],
    )?;
    let row = tx.query_row(&format!("SELECT {COLUMNS} FROM verifications WHERE id = ?1"), [id.as_str()], raw)?;
    build(row, Some(n.url), now)
}

/// A session of the company with its sealed token; the caller rebuilds `verificationUrl` if the
/// key and the session's status allow it.
pub fn get(
    c: &Connection,
    company: &CompanyId,
    id: &VerificationId,
    now: DateTime<Utc>,
) -> Result<(VerificationSession, Vec<u8>), RepoError> {
    let (row, sealed) = c
        .query_row(
            &format!("SELECT {COLUMNS}, token_sealed FROM verifications WHERE id = ?1 AND company_id = ?2"),
            [id.as_str(), company.as_str()],
            |r| Ok((raw(r)?, r.get::<_, Vec<u8>>(8)?)),
        )
        .optional()?
        .ok_or(RepoError::NotFound)?;
    Ok((build(row, None, now)?, sealed))
}

/// The associated data binding a sealed journey token to its session.
pub fn token_context(id: &VerificationId) -> String {
    format!("verification={id}")
}

/// What the journey pages and the session endpoints need of a session.
#[derive(Debug, Clone)]
pub struct Journey {
    pub id: VerificationId,
    pub company_id: CompanyId,
    pub category: DocumentCategory,
    /// Computed against the expiry, like [`get`].
    pub status: VerificationStatus,
    /// Set when the customer first opens the link; `None` before.
    pub csrf_token: Option<String>,
    /// Sides uploaded so far; filled by [`journey_page`] and [`open_journey`] only, for the page.
    pub uploaded: Vec<JourneySide>,
    /// A session of test mode, which its pages say plainly.
    pub mode: Mode,
    /// Where the end pages send the customer back, if the client said.
    pub return_url: Option<ReturnUrl>,
    /// Whom the customer is dealing with, as every page says.
    pub company: JourneyCompany,
}

/// The company behind a journey, as its pages present it.
#[derive(Debug, Clone)]
pub struct JourneyCompany {
    /// The company's own name, when it set no display name.
    pub name: String,
    /// The workflow's name for its journeys, which wins over the company's display name.
    pub workflow_display_name: Option<DisplayName>,
    pub settings: JourneySettings,
    /// Days its results' images are kept: the privacy notice says so.
    pub retention_days: u32,
}

impl JourneyCompany {
    /// The name on every page: the workflow's, else the company's display name, else its name.
    pub fn display_name(&self) -> &str {
        self.workflow_display_name
            .as_ref()
            .or(self.settings.display_name.as_ref())
            .map_or(self.name.as_str(), DisplayName::as_str)
    }
}

impl Journey {
    /// Whether files may still be uploaded and the journey submitted.
    pub fn is_open(&self) -> bool {
        domain::journey::is_open(self.status)
    }
}

/// The associated data binding a journey's uploaded files to their session.
pub fn upload_context(company: &CompanyId, id: &VerificationId) -> String {
    format!("company={company};verification={id}")
}

fn journey_where(c: &Connection, clause: &str, key: &dyn rusqlite::ToSql, now: DateTime<Utc>) -> Result<Option<Journey>, RepoError> {
    let row = c
        .query_row(
            &format!(
                "SELECT v.id, v.company_id, w.category, v.status, v.expires_at, v.csrf_token, co.test_of IS NOT NULL AS test,
                        v.return_url, w.display_name AS workflow_display_name, live.name AS company_name, co.retention_days,
                        live.display_name, live.accent_color, EXISTS (SELECT 1 FROM company_logos l WHERE l.company_id = live.id) AS has_logo, live.privacy_controller,
                        live.privacy_contact, live.privacy_purpose, live.privacy_policy_url
                 FROM verifications v JOIN workflows w ON w.id = v.workflow_id JOIN companies co ON co.id = v.company_id
                 JOIN companies live ON live.id = coalesce(co.test_of, co.id)
                 WHERE {clause}"
            ),
            [key],
            |r| Ok((JourneyRow::read(r)?, super::branding::settings(r)?)),
        )
        .optional()?;
    let Some((row, settings)) = row else {
        return Ok(None);
    };
    let status = current_status(&row.status, &row.expires_at, now)?;
    Ok(Some(Journey {
        id: stored(&row.id)?,
        company_id: stored(&row.company_id)?,
        category: stored(&row.category)?,
        status,
        csrf_token: row.csrf_token,
        uploaded: Vec::new(),
        mode: if row.test { Mode::Test } else { Mode::Live },
        return_url: row.return_url.map(ReturnUrl::stored),
        company: JourneyCompany {
            name: row.company_name,
            workflow_display_name: row.workflow_display_name.map(DisplayName::stored),
            settings,
            retention_days: row.retention_days,
        },
    }))
}

/// A journey's row as SQLite holds it, read by column name.
struct JourneyRow {
    id: String,
    company_id: String,
    category: String,
    status: String,
    expires_at: String,
    csrf_token: Option<String>,
    test: bool,
    return_url: Option<String>,
    workflow_display_name: Option<String>,
    company_name: String,
    retention_days: u32,
}

impl JourneyRow {
    fn read(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get("id")?,
            company_id: r.get("company_id")?,
            category: r.get("category")?,
            status: r.get("status")?,
            expires_at: r.get("expires_at")?,
            csrf_token: r.get("csrf_token")?,
            test: r.get("test")?,
            return_url: r.get("return_url")?,
            workflow_display_name: r.get("workflow_display_name")?,
            company_name: r.get("company_name")?,
            retention_days: r.get("retention_days")?,
        })
    }
}

/// The journey behind a link, if any (read only: status polls and session endpoints).
pub fn journey(c: &Connection, token: &str, now: DateTime<Utc>) -> Result<Option<Journey>, RepoError> {
    journey_where(c, "v.token_hash = ?1", &token_hash(token), now)
}

/// The journey behind a link with the sides uploaded so far: what its page shows (read only, so an
/// unknown link costs no write).
pub fn journey_page(c: &Connection, token: &str, now: DateTime<Utc>) -> Result<Option<Journey>, RepoError> {
    let Some(mut journey) = journey(c, token, now)? else {
        return Ok(None);
    };
    let mut stmt = c.prepare("SELECT side FROM verification_uploads WHERE verification_id = ?1 ORDER BY side")?;
    journey.uploaded = stmt
        .query_map([journey.id.as_str()], |r| r.get::<_, String>(0))?
        .map(|side| stored(&side?))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(journey))
}

/// Whether opening the page must write: an open session not yet started, or without its CSRF token.
pub fn needs_opening(journey: &Journey) -> bool {
    journey.is_open() && (journey.status == VerificationStatus::Created || journey.csrf_token.is_none())
}

/// The customer opened the link: an open session becomes `started` and gets the CSRF token its
/// pages carry (once; reloading the page keeps it).
pub fn open_journey(tx: &Connection, token: &str, now: DateTime<Utc>) -> Result<Option<Journey>, RepoError> {
    let Some(mut journey) = journey_page(tx, token, now)? else {
        return Ok(None);
    };
    if !needs_opening(&journey) {
        return Ok(Some(journey));
    }
    if journey.status == VerificationStatus::Created {
        tx.execute(
            "UPDATE verifications SET status = 'started', started_at = ?2 WHERE id = ?1 AND status = 'created'",
            params![journey.id.as_str(), domain::time::format(now)],
        )?;
        journey.status = VerificationStatus::Started;
    }
    if journey.csrf_token.is_none() {
        let csrf = domain::ids::random_base62(32);
        tx.execute(
            "UPDATE verifications SET csrf_token = ?2 WHERE id = ?1 AND csrf_token IS NULL",
            params![journey.id.as_str(), csrf],
        )?;
        journey.csrf_token = Some(csrf);
    }
    Ok(Some(journey))
}

fn open_or_refuse(tx: &Connection, id: &VerificationId, now: DateTime<Utc>) -> Result<Journey, RepoError> {
    let journey = journey_where(tx, "v.id = ?1", &id.as_str(), now)?.ok_or(RepoError::NotFound)?;
    match journey.status {
        VerificationStatus::Created | VerificationStatus::Started => Ok(journey),
        VerificationStatus::Expired => Err(RepoError::InvalidState("this verification link has expired".into())),
        VerificationStatus::Submitted | VerificationStatus::Completed => {
            Err(RepoError::InvalidState("this verification link has already been used".into()))
        }
    }
}

/// One uploaded file of a journey.
pub struct NewUpload<'a> {
    pub side: JourneySide,
    pub blob: &'a str,
    pub kind: FileKind,
    pub bytes: i64,
}

/// Records an uploaded file while the session is open; returns the blob it replaces, which the
/// caller deletes. A closed session refuses (`invalid_state`): the link is single use.
pub fn record_upload(
    tx: &Connection,
    id: &VerificationId,
    upload: &NewUpload<'_>,
    now: DateTime<Utc>,
) -> Result<Option<String>, RepoError> {
    let journey = open_or_refuse(tx, id, now)?;
    if !upload.side.belongs_to(journey.category) {
        return Err(RepoError::Invalid {
            field: "side",
            message: format!("{} is not a file of this journey.", upload.side),
        });
    }
    let previous: Option<String> = tx
        .query_row(
            "SELECT blob FROM verification_uploads WHERE verification_id = ?1 AND side = ?2",
            params![id.as_str(), upload.side.as_str()],
            |r| r.get(0),
        )
        .optional()?;
    tx.execute(
        "INSERT OR REPLACE INTO verification_uploads (verification_id, side, blob, kind, bytes, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![id.as_str(), upload.side.as_str(), upload.blob, upload.kind.as_str(), upload.bytes, domain::time::format(now)],
    )?;
    tx.execute(
        "UPDATE verifications SET status = 'started', started_at = coalesce(started_at, ?2) WHERE id = ?1 AND status = 'created'",
        params![id.as_str(), domain::time::format(now)],
    )?;
    Ok(previous)
}

/// How long a submitted journey's job may wait for a worker before it is reported expired.
const JOURNEY_JOB_WINDOW_HOURS: i64 = 24;

/// Closes the journey to uploads (`submitted`) and queues its one job on the real-time lane, in
/// the same transaction: a 2xx means the job exists.
/// `biometric_consent` is the customer's answer to the consent the page asks before the selfie.
pub fn submit(
    tx: &Connection,
    id: &VerificationId,
    biometric_consent: bool,
    request_id: Option<&RequestId>,
    now: DateTime<Utc>,
) -> Result<(), RepoError> {
    let journey = open_or_refuse(tx, id, now)?;
    let mut stmt = tx.prepare("SELECT side, blob FROM verification_uploads WHERE verification_id = ?1")?;
    let files: Vec<(JourneySide, String)> = stmt
        .query_map([id.as_str()], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?
        .map(|row| {
            let (side, blob) = row?;
            Ok((stored(&side)?, blob))
        })
        .collect::<Result<_, RepoError>>()?;
    let blob = |side: JourneySide| files.iter().find(|(s, _)| *s == side).map(|(_, b)| b.clone());
    for file in JourneySide::of(journey.category) {
        let side = file.side;
        if file.required && blob(side).is_none() {
            return Err(RepoError::Invalid {
                field: side.as_str(),
                message: format!("the {side} file is required before submitting."),
            });
        }
    }
    let changed = tx.execute(
        "UPDATE verifications SET status = 'submitted', submitted_at = ?2, biometric_consent = ?3 WHERE id = ?1 AND status IN ('created', 'started')",
        params![id.as_str(), domain::time::format(now), biometric_consent],
    )?;
    if changed != 1 {
        return Err(RepoError::InvalidState("this verification link has already been used".into()));
    }
    // The main file (front or document) is required, so checked present above.
    let front = blob(JourneySide::main(journey.category))
        .ok_or_else(|| RepoError::Store(super::StoreError::Corrupt(format!("journey {id} has no main file"))))?;
    let job = Job::V1(JobV1 {
        company_id: journey.company_id.clone(),
        source: JobSource::Verification {
            verification_id: id.clone(),
        },
        category: journey.category,
        front_blob: front,
        back_blob: blob(JourneySide::Back),
        selfie_blob: blob(JourneySide::Selfie),
        blob_context: upload_context(&journey.company_id, id),
        deadline: now + Duration::hours(JOURNEY_JOB_WINDOW_HOURS),
        request_id: request_id.cloned(),
        mode: journey.mode,
        biometric_consent,
    });
    super::outbox::push(tx, &job)
}

/// Records the analysis of a journey: the consultation with the workflow's decision, the session
/// completed, and `verification.completed` to the workflow's webhook URL (if it has one). Returns
/// `None` when the session already has its result (a redelivered job changes nothing).
pub fn record_result(
    tx: &Connection,
    id: &VerificationId,
    consultation_id: &domain::ids::ConsultationId,
    report: &domain::analysis::AnalysisReport,
    analyzed_at: DateTime<Utc>,
    request_id: Option<&RequestId>,
    now: DateTime<Utc>,
) -> Result<Option<domain::model::Consultation>, RepoError> {
    let result = JourneyResult { report, decision: None };
    record(tx, id, consultation_id, result, analyzed_at, request_id, now)
}

/// A journey's result to record: the report, and the decision when it is not the workflow's to
/// make (a simulated one).
struct JourneyResult<'a> {
    report: &'a domain::analysis::AnalysisReport,
    decision: Option<Decision>,
}

/// Test mode: completes a created or started session of a test account with a made-up result
/// (`common::test_mode`) and the decision asked for, or the workflow's; recorded and announced as
/// a real journey's result is. Another account's session, or a live one, is not found.
pub fn simulate(
    tx: &Connection,
    account: &CompanyId,
    id: &VerificationId,
    verdict: Verdict,
    decision: Option<Decision>,
    request_id: Option<&RequestId>,
    now: DateTime<Utc>,
) -> Result<domain::model::Consultation, RepoError> {
    if super::companies::get(tx, account)?.mode != Mode::Test {
        return Err(RepoError::NotFound);
    }
    let (session, _) = get(tx, account, id, now)?;
    // A submitted session's files are being analysed: its own result is on its way.
    if !domain::journey::is_open(session.status) {
        return Err(RepoError::InvalidState(format!(
            "the session is {}: only a created or started session can be simulated",
            session.status
        )));
    }
    let category = super::workflows::get(tx, account, &session.workflow_id)?.workflow.document_category;
    let report = domain::test_mode::report(verdict, category);
    let consultation_id = domain::ids::ConsultationId::generate(now);
    let result = JourneyResult { report: &report, decision };
    record(tx, id, &consultation_id, result, now, request_id, now)?
        .ok_or_else(|| RepoError::InvalidState("the session already has its result".into()))
}

fn record(
    tx: &Connection,
    id: &VerificationId,
    consultation_id: &domain::ids::ConsultationId,
    result: JourneyResult<'_>,
    analyzed_at: DateTime<Utc>,
    request_id: Option<&RequestId>,
    now: DateTime<Utc>,
) -> Result<Option<domain::model::Consultation>, RepoError> {
    let report = result.report;
    let row: Option<(String, String, Option<String>, String)> = tx
        .query_row(
            "SELECT company_id, workflow_id, external_ref, status FROM verifications WHERE id = ?1",
            [id.as_str()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?;
    let (company, workflow_id, external_ref, status) = row.ok_or(RepoError::NotFound)?;
    if status == VerificationStatus::Completed.as_str() {
        return Ok(None);
    }
    let company: CompanyId = stored(&company)?;
    let workflow = super::workflows::get(tx, &company, &stored(&workflow_id)?)?;
    let (decision, review_status) = match result.decision {
        Some(decision) => (decision, (decision == Decision::AVerifier).then_some(ReviewStatus::Pending)),
        None => domain::decision::decide(report, &workflow.rules),
    };
    super::consultations::insert(
        tx,
        &super::consultations::NewConsultation {
            id: consultation_id,
            company: &company,
            workflow_id: &workflow.workflow.id,
            external_ref: external_ref.as_deref(),
            category: workflow.workflow.document_category,
            report,
            decision: Some(decision),
            review_status,
            batch_item_id: None,
            verification_id: Some(id.as_str()),
            analyzed_at,
            now,
        },
    )?;
    tx.execute(
        "UPDATE verifications SET status = 'completed', consultation_id = ?2 WHERE id = ?1",
        params![id.as_str(), consultation_id.as_str()],
    )?;
    let consultation = super::consultations::get(tx, &company, consultation_id)?;
    let event = WebhookEvent::VerificationCompleted(ConsultationOutcome::of(&consultation));
    super::workflows::emit_event(tx, &company, &workflow, event, request_id, now)?;
    Ok(Some(consultation))
}

/// One uploaded file, as the recorder copies it into a consultation image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadedFile {
    pub side: JourneySide,
    pub blob: String,
    pub kind: FileKind,
}

/// What the recorder needs before recording a journey's result.
#[derive(Debug, Clone)]
pub struct UploadsForResult {
    pub company_id: CompanyId,
    /// The result is already recorded (a redelivered job).
    pub completed: bool,
    pub files: Vec<UploadedFile>,
}

/// The session's company, whether it is completed, and its uploaded files; `None` for an unknown
/// session.
pub fn uploads_for_result(c: &Connection, id: &VerificationId) -> Result<Option<UploadsForResult>, RepoError> {
    let row: Option<(String, String)> = c
        .query_row("SELECT company_id, status FROM verifications WHERE id = ?1", [id.as_str()], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    let Some((company, status)) = row else {
        return Ok(None);
    };
    let mut stmt = c.prepare("SELECT side, blob, kind FROM verification_uploads WHERE verification_id = ?1 ORDER BY side")?;
    let rows = stmt
        .query_map([id.as_str()], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut files = Vec::with_capacity(rows.len());
    for (side, blob, kind) in rows {
        files.push(UploadedFile {
            side: stored(&side)?,
            blob,
            kind: stored(&kind)?,
        });
    }
    Ok(Some(UploadsForResult {
        company_id: stored(&company)?,
        completed: status == VerificationStatus::Completed.as_str(),
        files,
    }))
}

/// One upload whose file may be deleted, and its row forgotten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleasableUpload {
    pub verification_id: String,
    pub side: JourneySide,
    pub blob: String,
}

/// Uploads no longer needed: those of completed sessions (their
/// consultation has its own copies, written in the same transaction as the completion), and, once
/// the company's retention has passed since the upload, those of sessions that can no longer
/// complete: expired before submission, or submitted and past the job's window without a result.
pub fn releasable_uploads(c: &Connection, now: DateTime<Utc>, limit: u32) -> Result<Vec<ReleasableUpload>, RepoError> {
    let now_text = domain::time::format(now);
    let window_start = domain::time::format(now - Duration::hours(JOURNEY_JOB_WINDOW_HOURS));
    // Timestamps are `domain::time::format` text, so the retention deadline is computed in the same
    // format and compared as text; filtering in SQL keeps `limit` from starving due rows.
    let mut stmt = c.prepare(
        "SELECT u.verification_id, u.side, u.blob FROM verification_uploads u
         JOIN verifications v ON v.id = u.verification_id JOIN companies co ON co.id = v.company_id
         WHERE v.status = 'completed'
            OR (strftime('%Y-%m-%dT%H:%M:%fZ', u.created_at, '+' || co.retention_days || ' days') <= ?1
                AND ((v.status IN ('created', 'started') AND v.expires_at <= ?1)
                     OR (v.status = 'submitted' AND v.submitted_at <= ?2)))
         ORDER BY u.created_at LIMIT ?3",
    )?;
    let rows = stmt
        .query_map(params![now_text, window_start, limit], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?))
        })?
        .map(|row| {
            let (verification_id, side, blob) = row?;
            Ok(ReleasableUpload {
                verification_id,
                side: stored(&side)?,
                blob,
            })
        })
        .collect::<Result<Vec<_>, RepoError>>()?;
    Ok(rows)
}

/// Forgets an upload whose blob was deleted. Idempotent; a row that points to another blob stays.
pub fn upload_released(tx: &Connection, verification_id: &str, side: JourneySide, blob: &str) -> Result<(), RepoError> {
    tx.execute(
        "DELETE FROM verification_uploads WHERE verification_id = ?1 AND side = ?2 AND blob = ?3",
        params![verification_id, side.as_str(), blob],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::TempStore;
    use domain::analysis::AnalysisReport;
    use domain::ids::ConsultationId;
    use domain::model::WorkflowRules;
    use domain::vocabulary::{Decision, DocumentCategory, ImageSide, Licence, ReviewStatus, Verdict};

    #[tokio::test]
    async fn a_journey_opens_takes_files_and_submits_once_into_one_realtime_job() {
        let store = TempStore::new("jrn");
        let outcome = store
            .write(|tx| {
                let now = Utc::now();
                let (company, workflow) = setup(tx, now)?;
                let id = VerificationId::generate(now);
                let new = NewSession {
                    company: &company,
                    workflow_id: &workflow,
                    external_ref: None,
                    return_url: None,
                    expires_in_minutes: 60,
                    token: "tok",
                    token_sealed: vec![1],
                    url: String::new(),
                };
                create(tx, &id, new, now)?;
                let opened = open_journey(tx, "tok", now)?.unwrap();
                let reopened = open_journey(tx, "tok", now)?.unwrap();
                let upload = |side: &'static str, blob: &'static str| NewUpload {
                    side: side.parse().unwrap(),
                    blob,
                    kind: FileKind::Jpeg,
                    bytes: 3,
                };
                let missing_selfie = submit(tx, &id, false, None, now).err().map(|e| e.to_string());
                assert_eq!(record_upload(tx, &id, &upload("front", "b1"), now)?, None);
                assert_eq!(record_upload(tx, &id, &upload("front", "b2"), now)?.as_deref(), Some("b1"));
                let wrong_side = record_upload(tx, &id, &upload("document", "b3"), now).is_err();
                record_upload(tx, &id, &upload("selfie", "b4"), now)?;
                submit(tx, &id, false, None, now)?;
                let again = submit(tx, &id, false, None, now).err().map(|e| e.to_string());
                let late_upload = record_upload(tx, &id, &upload("back", "b5"), now).is_err();
                let jobs: Vec<String> = tx
                    .prepare("SELECT payload FROM outbox WHERE topic = 'jobs.realtime'")?
                    .query_map([], |r| r.get(0))?
                    .collect::<Result<_, _>>()?;
                let owner: Option<String> = tx.query_row("SELECT owner FROM outbox WHERE topic = 'jobs.realtime'", [], |r| r.get(0))?;
                assert_eq!(owner.as_deref(), Some(company.as_str()), "the lane is shared by company");
                let (session, _) = get(tx, &company, &id, now)?;
                Ok::<_, RepoError>((
                    opened,
                    reopened,
                    missing_selfie,
                    wrong_side,
                    again,
                    late_upload,
                    jobs,
                    session.status,
                ))
            })
            .await
            .unwrap();
        let (opened, reopened, missing_selfie, wrong_side, again, late_upload, jobs, status) = outcome;
        assert_eq!(opened.status, VerificationStatus::Started);
        assert!(opened.csrf_token.as_ref().is_some_and(|t| t.len() == 32));
        assert_eq!(opened.csrf_token, reopened.csrf_token, "a reload keeps the CSRF token");
        assert!(missing_selfie.unwrap().contains("front"));
        assert!(wrong_side);
        assert!(again.unwrap().contains("already been used"));
        assert!(late_upload, "single use: no upload after submit");
        assert_eq!(jobs.len(), 1, "one job on the real-time lane");
        assert!(
            jobs[0].contains("\"front_blob\":\"b2\"") && jobs[0].contains("\"selfie_blob\":\"b4\""),
            "{}",
            jobs[0]
        );
        assert_eq!(status, VerificationStatus::Submitted);
    }

    #[tokio::test]
    async fn a_journey_result_is_recorded_once_with_its_decision_and_event() {
        let store = TempStore::new("vrf");
        let recorded = store
            .write(|tx| {
                let now = Utc::now();
                let company =
                    super::super::companies::create(tx, "Acme", Licence::Group, &crate::crypto::envelope::MasterKeys::ephemeral(), now)?
                        .company
                        .id;
                let rules = WorkflowRules {
                    min_age: Some(18),
                    ..Default::default()
                };
                let wf = super::super::workflows::create(
                    tx,
                    &company,
                    "KYC",
                    DocumentCategory::Identite,
                    Some("https://hooks.example.com/x"),
                    &rules,
                    false,
                    now,
                )?;
                let id = VerificationId::generate(now);
                let new = NewSession {
                    company: &company,
                    workflow_id: &wf.workflow.id,
                    external_ref: Some("d-1"),
                    return_url: None,
                    expires_in_minutes: 60,
                    token: "tok",
                    token_sealed: vec![1],
                    url: String::new(),
                };
                create(tx, &id, new, now)?;
                let report = AnalysisReport {
                    verdict: Verdict::Conforme,
                    document_type: domain::vocabulary::DocumentType::Passeport,
                    document_country: Some("FRA".into()),
                    anomalies: vec![],
                    two_d_doc: None,
                    holder_age: Some(16),
                    pages: 1,
                    checks: vec![],
                    face_match: None,
                };
                let first = record_result(tx, &id, &ConsultationId::generate(now), &report, now, None, now)?;
                let again = record_result(tx, &id, &ConsultationId::generate(now), &report, now, None, now)?;
                let events: i64 = tx.query_row(
                    "SELECT count(*) FROM webhook_events WHERE event_type = 'verification.completed'",
                    [],
                    |r| r.get(0),
                )?;
                let (session, _) = get(tx, &company, &id, now)?;
                Ok::<_, RepoError>((first, again.is_none(), events, session.status))
            })
            .await
            .unwrap();
        let (first, second_ignored, events, status) = recorded;
        let first = first.unwrap();
        assert_eq!(first.verdict, Verdict::Conforme, "the verdict is the engine's");
        assert_eq!(first.decision, Some(Decision::Refuse), "minAge applies to the decision");
        assert_eq!(first.review_status, None::<ReviewStatus>);
        assert!(second_ignored);
        assert_eq!(events, 1);
        assert_eq!(status, VerificationStatus::Completed);
    }

    /// A company with an identity workflow, in a fresh store.
    fn setup(tx: &Connection, now: DateTime<Utc>) -> Result<(CompanyId, WorkflowId), RepoError> {
        let company = super::super::companies::create(tx, "Acme", Licence::Group, &crate::crypto::envelope::MasterKeys::ephemeral(), now)?
            .company
            .id;
        let wf = super::super::workflows::create(
            tx,
            &company,
            "KYC",
            DocumentCategory::Identite,
            None,
            &WorkflowRules::default(),
            false,
            now,
        )?;
        Ok((company, wf.workflow.id))
    }

    fn session(
        tx: &Connection,
        company: &CompanyId,
        wf: &WorkflowId,
        token: &str,
        now: DateTime<Utc>,
    ) -> Result<VerificationId, RepoError> {
        let id = VerificationId::generate(now);
        let new = NewSession {
            company,
            workflow_id: wf,
            external_ref: None,
            return_url: None,
            expires_in_minutes: 60,
            token,
            token_sealed: vec![1],
            url: String::new(),
        };
        create(tx, &id, new, now)?;
        Ok(id)
    }

    fn upload<'a>(side: &'a str, blob: &'a str) -> NewUpload<'a> {
        NewUpload {
            side: side.parse().unwrap(),
            blob,
            kind: FileKind::Jpeg,
            bytes: 3,
        }
    }

    fn report() -> AnalysisReport {
        AnalysisReport {
            verdict: Verdict::Conforme,
            document_type: domain::vocabulary::DocumentType::Passeport,
            document_country: Some("FRA".into()),
            anomalies: vec![],
            two_d_doc: None,
            holder_age: None,
            pages: 1,
            checks: vec![],
            face_match: None,
        }
    }

    #[tokio::test]
    async fn uploads_for_result_lists_the_files_and_knows_a_completed_session() {
        let store = TempStore::new("ufr");
        let (unknown, before, after, company) = store
            .write(|tx| {
                let now = Utc::now();
                let (company, wf) = setup(tx, now)?;
                let id = session(tx, &company, &wf, "tok", now)?;
                record_upload(tx, &id, &upload("front", "b1"), now)?;
                record_upload(tx, &id, &upload("selfie", "b2"), now)?;
                submit(tx, &id, false, None, now)?;
                let unknown = uploads_for_result(tx, &VerificationId::generate(now))?;
                let before = uploads_for_result(tx, &id)?;
                record_result(tx, &id, &ConsultationId::generate(now), &report(), now, None, now)?;
                let after = uploads_for_result(tx, &id)?;
                Ok::<_, RepoError>((unknown.is_none(), before, after, company))
            })
            .await
            .unwrap();
        assert!(unknown);
        let before = before.unwrap();
        assert_eq!(before.company_id, company);
        assert!(!before.completed);
        let sides: Vec<_> = before
            .files
            .iter()
            .map(|f| (f.side.as_str(), f.side.image_side(), f.blob.as_str()))
            .collect();
        assert_eq!(sides, vec![("front", ImageSide::Recto, "b1"), ("selfie", ImageSide::Selfie, "b2")]);
        assert!(after.unwrap().completed);
    }

    #[tokio::test]
    async fn uploads_are_released_when_completed_or_past_retention_once_they_cannot_complete() {
        let store = TempStore::new("rel");
        let outcome = store
            .write(|tx| {
                let now = Utc::now();
                let (company, wf) = setup(tx, now)?;
                let done = session(tx, &company, &wf, "t1", now)?;
                record_upload(tx, &done, &upload("front", "done-front"), now)?;
                record_upload(tx, &done, &upload("selfie", "done-selfie"), now)?;
                submit(tx, &done, false, None, now)?;
                record_result(tx, &done, &ConsultationId::generate(now), &report(), now, None, now)?;
                let expired = session(tx, &company, &wf, "t2", now)?;
                record_upload(tx, &expired, &upload("front", "expired-front"), now)?;
                tx.execute(
                    "UPDATE verifications SET expires_at = ?2 WHERE id = ?1",
                    params![expired.as_str(), domain::time::format(now - Duration::minutes(1))],
                )?;
                let waiting = session(tx, &company, &wf, "t3", now)?;
                record_upload(tx, &waiting, &upload("front", "waiting-front"), now)?;
                record_upload(tx, &waiting, &upload("selfie", "waiting-selfie"), now)?;
                submit(tx, &waiting, false, None, now)?;
                let open = session(tx, &company, &wf, "t4", now)?;
                record_upload(tx, &open, &upload("front", "open-front"), now)?;

                let blobs = |rows: Vec<ReleasableUpload>| {
                    let mut b: Vec<String> = rows.into_iter().map(|upload| upload.blob).collect();
                    b.sort();
                    b
                };
                let within_retention = blobs(releasable_uploads(tx, now, 100)?);
                super::super::companies::set(tx, &company, None, Some(0))?;
                let no_retention = blobs(releasable_uploads(tx, now, 100)?);
                tx.execute(
                    "UPDATE verifications SET submitted_at = ?2 WHERE id = ?1",
                    params![
                        waiting.as_str(),
                        domain::time::format(now - Duration::hours(JOURNEY_JOB_WINDOW_HOURS + 1))
                    ],
                )?;
                let window_over = blobs(releasable_uploads(tx, now, 100)?);
                let limited = releasable_uploads(tx, now, 1)?.len();

                upload_released(tx, done.as_str(), JourneySide::Front, "done-front")?;
                upload_released(tx, done.as_str(), JourneySide::Front, "done-front")?;
                upload_released(tx, done.as_str(), JourneySide::Selfie, "another-blob")?;
                let after_release = blobs(releasable_uploads(tx, now, 100)?);
                Ok::<_, RepoError>((within_retention, no_retention, window_over, limited, after_release))
            })
            .await
            .unwrap();
        let (within_retention, no_retention, window_over, limited, after_release) = outcome;
        assert_eq!(within_retention, vec!["done-front", "done-selfie"], "only the completed session's");
        assert_eq!(
            no_retention,
            vec!["done-front", "done-selfie", "expired-front"],
            "a submitted job in its window and an open session keep their files"
        );
        assert_eq!(
            window_over,
            vec!["done-front", "done-selfie", "expired-front", "waiting-front", "waiting-selfie"]
        );
        assert_eq!(limited, 1);
        assert_eq!(
            after_release,
            vec!["done-selfie", "expired-front", "waiting-front", "waiting-selfie"],
            "released once; a row with another blob stays"
        );
    }
}
