//! Versioned schema migrations, applied in order at open; `PRAGMA user_version` records the last.
//! What needs the master key (sealing what earlier versions kept in clear) cannot run at open,
//! where there is no key: SQL moves it aside, [`seal_webhook_secrets`] seals it at start (and
//! [`key_recovery_codes`] keys the recovery codes).

use super::StoreError;
use crate::crypto::envelope::MasterKeys;
use crate::crypto::recovery_codes::{self, RecoveryKeys};
use rusqlite::{params, Connection, OptionalExtension};

/// Each entry is one migration; never edit a released one, append a new one.
pub(super) const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE companies (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    licence TEXT NOT NULL,
    ai_enabled INTEGER NOT NULL DEFAULT 1,
    retention_days INTEGER NOT NULL DEFAULT 30,
    webhook_secret TEXT NOT NULL,
    previous_webhook_secret TEXT,
    previous_secret_until TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE api_keys (
    prefix TEXT PRIMARY KEY,
    hash BLOB NOT NULL,
    company_id TEXT NOT NULL REFERENCES companies(id),
    read_only INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE TABLE workflows (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    company_id TEXT NOT NULL REFERENCES companies(id),
    name TEXT NOT NULL,
    category TEXT NOT NULL,
    webhook_url TEXT,
    rules TEXT NOT NULL DEFAULT '{}',
    default_batch INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE INDEX workflows_by_company ON workflows(company_id, seq);
CREATE TABLE verifications (
    id TEXT PRIMARY KEY,
    company_id TEXT NOT NULL REFERENCES companies(id),
    workflow_id TEXT NOT NULL REFERENCES workflows(id),
    external_ref TEXT,
    token_hash BLOB NOT NULL UNIQUE,
    token_sealed BLOB NOT NULL,
    status TEXT NOT NULL,
    consultation_id TEXT,
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE batches (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    company_id TEXT NOT NULL REFERENCES companies(id),
    external_ref TEXT,
    webhook_url TEXT,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    submitted_at TEXT,
    expires_at TEXT NOT NULL,
    ended_at TEXT,
    completion_event_id TEXT
);
CREATE INDEX batches_by_company ON batches(company_id, seq);
CREATE INDEX batches_open ON batches(company_id, status);
CREATE TABLE batch_items (
    id TEXT PRIMARY KEY,
    batch_id TEXT NOT NULL REFERENCES batches(id),
    company_id TEXT NOT NULL REFERENCES companies(id),
    position INTEGER NOT NULL,
    category TEXT NOT NULL,
    external_ref TEXT,
    agency_postal_code TEXT,
    agency_insee TEXT,
    status TEXT NOT NULL,
    error TEXT,
    consultation_id TEXT,
    front_blob TEXT,
    front_kind TEXT,
    back_blob TEXT,
    back_kind TEXT,
    bytes INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    finished_at TEXT,
    images_released_at TEXT,
    UNIQUE (batch_id, position)
);
CREATE INDEX items_by_company_status ON batch_items(company_id, status);
CREATE TABLE consultations (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    company_id TEXT NOT NULL REFERENCES companies(id),
    workflow_id TEXT NOT NULL,
    external_ref TEXT,
    category TEXT NOT NULL,
    document_type TEXT NOT NULL,
    document_country TEXT,
    verdict TEXT NOT NULL,
    decision TEXT,
    review_status TEXT,
    reviewed_at TEXT,
    anomalies TEXT NOT NULL,
    two_d_doc TEXT,
    analyzed_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    batch_item_id TEXT UNIQUE,
    verification_id TEXT UNIQUE
);
CREATE INDEX consultations_by_company ON consultations(company_id, seq);
CREATE TABLE consultation_images (
    consultation_id TEXT NOT NULL REFERENCES consultations(id),
    side TEXT NOT NULL,
    blob TEXT NOT NULL,
    content_type TEXT NOT NULL,
    created_at TEXT NOT NULL,
    purged_at TEXT,
    PRIMARY KEY (consultation_id, side)
);
CREATE TABLE outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    topic TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE queue_messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    topic TEXT NOT NULL,
    payload BLOB NOT NULL,
    available_at INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    leased_until INTEGER
);
CREATE INDEX queue_ready ON queue_messages(topic, available_at);
CREATE TABLE queue_dead_letters (
    id INTEGER PRIMARY KEY,
    topic TEXT NOT NULL,
    payload BLOB NOT NULL,
    attempts INTEGER NOT NULL,
    dead_at TEXT NOT NULL
);
CREATE TABLE deadlines (
    batch_id TEXT PRIMARY KEY,
    due_at INTEGER NOT NULL
);
CREATE INDEX deadlines_due ON deadlines(due_at);
CREATE TABLE webhook_events (
    id TEXT PRIMARY KEY,
    company_id TEXT NOT NULL REFERENCES companies(id),
    event_type TEXT NOT NULL,
    url TEXT NOT NULL,
    body TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_status_code INTEGER,
    last_error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX webhook_events_by_status ON webhook_events(company_id, status);
CREATE TABLE webhook_attempts (
    event_id TEXT NOT NULL REFERENCES webhook_events(id),
    attempt INTEGER NOT NULL,
    at TEXT NOT NULL,
    status_code INTEGER,
    error TEXT,
    outcome TEXT NOT NULL,
    PRIMARY KEY (event_id, attempt)
);
CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    key_prefix TEXT,
    ip TEXT,
    at TEXT NOT NULL
);
CREATE INDEX audit_by_company ON audit_log(company_id, id);
"#,
    r#"
CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
"#,
    // The checks the engine performed and their outcome, for the certificate.
    r#"
ALTER TABLE consultations ADD COLUMN checks TEXT NOT NULL DEFAULT '[]';
"#,
    // The customer journey: the per-session CSRF token of its pages, when the customer started and
    // submitted, and the encrypted files uploaded so far (one per side; a new upload replaces it).
    r#"
ALTER TABLE verifications ADD COLUMN csrf_token TEXT;
ALTER TABLE verifications ADD COLUMN started_at TEXT;
ALTER TABLE verifications ADD COLUMN submitted_at TEXT;
CREATE TABLE verification_uploads (
    verification_id TEXT NOT NULL REFERENCES verifications(id),
    side TEXT NOT NULL,
    blob TEXT NOT NULL,
    kind TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (verification_id, side)
);
"#,
    // Webhook secrets are sealed with the master key (bound to their company), never kept in clear.
    // The clear columns go; their values wait in `webhook_secrets_to_seal` for the first start with
    // the key (`seal_webhook_secrets`), which seals them and empties it.
    r#"
ALTER TABLE companies ADD COLUMN webhook_secret_sealed BLOB;
ALTER TABLE companies ADD COLUMN previous_webhook_secret_sealed BLOB;
CREATE TABLE webhook_secrets_to_seal (
    company_id TEXT PRIMARY KEY REFERENCES companies(id),
    secret TEXT NOT NULL,
    previous_secret TEXT
);
INSERT INTO webhook_secrets_to_seal (company_id, secret, previous_secret)
    SELECT id, webhook_secret, previous_webhook_secret FROM companies;
ALTER TABLE companies DROP COLUMN webhook_secret;
ALTER TABLE companies DROP COLUMN previous_webhook_secret;
"#,
    // Retention purge decides in SQL what is due: each image carries its company, and the images
    // not purged yet are indexed by company and age, so the purge reads, per company, only what
    // its own retention makes due (see consultations::images_past_retention).
    r#"
ALTER TABLE consultation_images ADD COLUMN company_id TEXT REFERENCES companies(id);
UPDATE consultation_images
    SET company_id = (SELECT company_id FROM consultations WHERE consultations.id = consultation_images.consultation_id);
CREATE INDEX images_to_purge ON consultation_images(company_id, created_at) WHERE purged_at IS NULL;
"#,
    // The company a queued message belongs to and its turn, so the real-time lane is shared
    // fairly among companies (`Topic::shared_by_owners`); NULL and 0 on every other topic.
    r#"
ALTER TABLE outbox ADD COLUMN owner TEXT;
ALTER TABLE queue_messages ADD COLUMN owner TEXT;
ALTER TABLE queue_messages ADD COLUMN turn INTEGER NOT NULL DEFAULT 0;
CREATE INDEX queue_owner_turns ON queue_messages(topic, owner, turn) WHERE owner IS NOT NULL;
"#,
    // The request that deposited a document, and the one whose work emitted an event, carried in
    // jobs and deliveries so one document's log lines share its id (`telemetry::RequestId`).
    r#"
ALTER TABLE batch_items ADD COLUMN request_id TEXT;
ALTER TABLE webhook_events ADD COLUMN request_id TEXT;
"#,
    // A deposit checks two company-wide limits in its transaction: the documents whose images are
    // still held and the bytes waiting for analysis. Each reads an index of only the rows it
    // counts (see batches::deposit), where it scanned every document the company ever deposited.
    r#"
CREATE INDEX items_held ON batch_items(company_id, images_released_at) WHERE images_released_at IS NULL;
CREATE INDEX items_waiting ON batch_items(company_id, status, bytes) WHERE status IN ('pending', 'processing');
"#,
    // The portal (PORTAL.md): a company's members, their invitations and sessions (secrets only as
    // hashes), the sign-in throttle, who settled a review and why, and who did what in the audit log.
    r#"
CREATE TABLE members (
    id TEXT PRIMARY KEY,
    company_id TEXT NOT NULL REFERENCES companies(id),
    email TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL,
    password_hash TEXT,
    lang TEXT,
    totp_secret_sealed BLOB,
    totp_last_step INTEGER,
    recovery_codes TEXT,
    disabled_at TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX members_by_company ON members(company_id, created_at);
CREATE TABLE invitations (
    token_hash BLOB PRIMARY KEY,
    member_id TEXT NOT NULL REFERENCES members(id),
    company_id TEXT NOT NULL REFERENCES companies(id),
    invited_by TEXT,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT
);
CREATE INDEX invitations_by_member ON invitations(member_id);
CREATE TABLE portal_sessions (
    token_hash BLOB PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    member_id TEXT NOT NULL REFERENCES members(id),
    company_id TEXT NOT NULL REFERENCES companies(id),
    csrf_token TEXT NOT NULL,
    second_factor_due INTEGER NOT NULL,
    ip TEXT,
    user_agent TEXT,
    created_at TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    ended_at TEXT
);
CREATE INDEX portal_sessions_by_member ON portal_sessions(member_id) WHERE ended_at IS NULL;
CREATE TABLE sign_in_failures (
    scope TEXT PRIMARY KEY,
    failures INTEGER NOT NULL,
    locked_until TEXT,
    last_failure_at TEXT NOT NULL
);
ALTER TABLE companies ADD COLUMN two_factor_required INTEGER NOT NULL DEFAULT 0;
ALTER TABLE consultations ADD COLUMN reviewed_by TEXT;
ALTER TABLE consultations ADD COLUMN review_comment TEXT;
ALTER TABLE audit_log ADD COLUMN member_id TEXT;
ALTER TABLE audit_log ADD COLUMN actor_email TEXT;
CREATE INDEX reviews_pending ON consultations(company_id, seq) WHERE review_status = 'pending';
CREATE INDEX consultations_by_day ON consultations(company_id, created_at, verdict);
CREATE INDEX journeys_by_day ON consultations(company_id, created_at) WHERE verification_id IS NOT NULL;
CREATE INDEX items_succeeded_by_day ON batch_items(company_id, finished_at) WHERE status = 'succeeded';
"#,
    // The portal's API keys page (PORTAL.md, Developers): who created a key (NULL for the
    // operator's CLI) and when it was last used (written at most once a minute by the API).
    r#"
ALTER TABLE api_keys ADD COLUMN created_by TEXT REFERENCES members(id);
ALTER TABLE api_keys ADD COLUMN last_used_at TEXT;
CREATE INDEX api_keys_by_company ON api_keys(company_id, created_at);
"#,
    // The Diffusion tab of a workflow lists its last deliveries: each `verification.*` event names
    // its workflow (read back from the bodies of the events already sent), and each attempt how
    // long the receiver took.
    r#"
ALTER TABLE webhook_events ADD COLUMN workflow_id TEXT;
UPDATE webhook_events SET workflow_id = json_extract(body, '$.workflowId') WHERE event_type LIKE 'verification.%';
CREATE INDEX webhook_events_by_workflow ON webhook_events(company_id, workflow_id, created_at) WHERE workflow_id IS NOT NULL;
ALTER TABLE webhook_attempts ADD COLUMN duration_ms INTEGER;
"#,
    // The results list (API and portal, `consultations::list`) stays bounded with a company's
    // whole history (`scripts/bench --portal`): each filter an index of its own ending in `seq`,
    // so a filter that matches little is sought, not found by walking every result of the company
    // until a page fills (a rare verdict or a new workflow: 24 ms; an external reference: 42 ms,
    // at 100,000 results). `createdAfter` walks the company's results newest first and reads the
    // date in the index, where the date range read and sorted every result since that date
    // (80 ms from a year back); it replaces `consultations_by_company`, of which it is the prefix,
    // for SQLite to choose it (the two tie on their terms). `items_holding_files` hands the sweeper, every second, only the
    // documents whose deposit files are not deleted yet, where it scanned every document ever
    // deposited.
    r#"
CREATE INDEX consultations_by_verdict ON consultations(company_id, verdict, seq);
CREATE INDEX consultations_by_decision ON consultations(company_id, decision, seq);
CREATE INDEX consultations_by_workflow ON consultations(company_id, workflow_id, seq);
CREATE INDEX consultations_by_external_ref ON consultations(company_id, external_ref, seq);
CREATE INDEX consultations_by_company_time ON consultations(company_id, seq, created_at);
DROP INDEX consultations_by_company;
CREATE INDEX items_holding_files ON batch_items(status) WHERE front_blob IS NOT NULL OR back_blob IS NOT NULL;
"#,
    // `Idempotency-Key` on the API's POSTs (`idempotency`): a key is claimed (no fingerprint yet)
    // before its request runs, then holds the request's fingerprint and its sealed response for
    // 24 h. Keys are scoped to the company and the mode (`live` until test mode).
    r#"
CREATE TABLE idempotency_keys (
    company_id TEXT NOT NULL,
    mode TEXT NOT NULL DEFAULT 'live',
    key TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    fingerprint BLOB,
    status INTEGER,
    content_type TEXT,
    response_sealed BLOB,
    PRIMARY KEY (company_id, mode, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_keys_by_age ON idempotency_keys(created_at_ms);
"#,
    // Test mode (API.md): a company's test data live under its test account, a companies row of its
    // own that `test_of` ties to the company. Every table scoped by company keeps test and live
    // data apart with the scoping it already has, in both directions, and the indexes serve both.
    r#"
ALTER TABLE companies ADD COLUMN test_of TEXT REFERENCES companies(id);
CREATE UNIQUE INDEX companies_test_account ON companies(test_of) WHERE test_of IS NOT NULL;
"#,
    // A deposit's insert maintains one index fewer: every query by company and status reads a
    // partial index of its own (`items_held`, `items_waiting`, `items_succeeded_by_day`). The
    // purge finds the item of a consultation whose images it released by index, not by scanning
    // every item; a deposit, which has no consultation yet, does not touch that index.
    r#"
DROP INDEX items_by_company_status;
CREATE INDEX items_by_consultation ON batch_items(consultation_id) WHERE consultation_id IS NOT NULL;
"#,
    // A deposit's two company-wide limits read one row (`holdings`) instead of counting index
    // entries (up to 400 documents held, as many bytes waiting): triggers keep the row in step with
    // every change of `batch_items`, so no code path can forget it, and the two partial indexes
    // the counts read are dropped (a deposit writes one counter instead of two index entries).
    r#"
CREATE TABLE company_holdings (
    company_id TEXT PRIMARY KEY REFERENCES companies(id),
    held_documents INTEGER NOT NULL,
    waiting_bytes INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO company_holdings (company_id, held_documents, waiting_bytes)
    SELECT company_id,
           sum(images_released_at IS NULL),
           sum(CASE WHEN status IN ('pending', 'processing') THEN bytes ELSE 0 END)
    FROM batch_items GROUP BY company_id;
CREATE TRIGGER holdings_of_new_item AFTER INSERT ON batch_items BEGIN
    INSERT INTO company_holdings (company_id, held_documents, waiting_bytes)
    VALUES (NEW.company_id,
            NEW.images_released_at IS NULL,
            CASE WHEN NEW.status IN ('pending', 'processing') THEN NEW.bytes ELSE 0 END)
    ON CONFLICT (company_id) DO UPDATE SET
        held_documents = held_documents + excluded.held_documents,
        waiting_bytes = waiting_bytes + excluded.waiting_bytes;
END;
CREATE TRIGGER holdings_of_changed_item AFTER UPDATE OF company_id, status, bytes, images_released_at ON batch_items
WHEN (OLD.images_released_at IS NULL) IS NOT (NEW.images_released_at IS NULL)
  OR (OLD.status IN ('pending', 'processing')) IS NOT (NEW.status IN ('pending', 'processing'))
  OR OLD.bytes IS NOT NEW.bytes
  OR OLD.company_id IS NOT NEW.company_id
BEGIN
    UPDATE company_holdings SET
        held_documents = held_documents - (OLD.images_released_at IS NULL),
        waiting_bytes = waiting_bytes - CASE WHEN OLD.status IN ('pending', 'processing') THEN OLD.bytes ELSE 0 END
    WHERE company_id = OLD.company_id;
    INSERT INTO company_holdings (company_id, held_documents, waiting_bytes)
    VALUES (NEW.company_id,
            NEW.images_released_at IS NULL,
            CASE WHEN NEW.status IN ('pending', 'processing') THEN NEW.bytes ELSE 0 END)
    ON CONFLICT (company_id) DO UPDATE SET
        held_documents = held_documents + excluded.held_documents,
        waiting_bytes = waiting_bytes + excluded.waiting_bytes;
END;
CREATE TRIGGER holdings_of_deleted_item AFTER DELETE ON batch_items BEGIN
    UPDATE company_holdings SET
        held_documents = held_documents - (OLD.images_released_at IS NULL),
        waiting_bytes = waiting_bytes - CASE WHEN OLD.status IN ('pending', 'processing') THEN OLD.bytes ELSE 0 END
    WHERE company_id = OLD.company_id;
END;
DROP INDEX items_held;
DROP INDEX items_waiting;
"#,
    // Evidence is never destroyed by a setting: the images of a result waiting for a review stay,
    // whatever the retention. Each image knows whether its result waits (`under_review`), kept in
    // step with `consultations.review_status` by triggers so no path can forget it, and the
    // purge's index holds only the images it may take: a sweep never reads a held one, however
    // many wait. Every table that only grows gets the index its retention deletes by, oldest
    // first (see `recorder::retention`): webhook events once their delivery ended, portal
    // sessions by age, the audit log by time.
    r#"
ALTER TABLE consultation_images ADD COLUMN under_review INTEGER NOT NULL DEFAULT 0;
UPDATE consultation_images SET under_review = 1
    WHERE consultation_id IN (SELECT id FROM consultations WHERE review_status = 'pending');
DROP INDEX images_to_purge;
CREATE INDEX images_to_purge ON consultation_images(company_id, created_at) WHERE purged_at IS NULL AND under_review = 0;
CREATE TRIGGER images_held_at_insert AFTER INSERT ON consultation_images
WHEN (SELECT review_status FROM consultations WHERE id = NEW.consultation_id) IS 'pending'
BEGIN
    UPDATE consultation_images SET under_review = 1 WHERE rowid = NEW.rowid;
END;
CREATE TRIGGER images_follow_their_review AFTER UPDATE OF review_status ON consultations
WHEN (OLD.review_status IS 'pending') IS NOT (NEW.review_status IS 'pending')
BEGIN
    UPDATE consultation_images SET under_review = (NEW.review_status IS 'pending') WHERE consultation_id = NEW.id;
END;
CREATE INDEX webhook_events_ended ON webhook_events(updated_at) WHERE status IN ('delivered', 'dead', 'gone');
CREATE INDEX portal_sessions_by_age ON portal_sessions(created_at);
CREATE INDEX audit_by_time ON audit_log(at);
"#,
    // The retention forgets the sign-in failures past their hour by this (`forget_expired`).
    r#"
CREATE INDEX sign_in_failures_forgotten ON sign_in_failures(last_failure_at);
"#,
    // Test mode can never pass for live: a workflow has a test URL beside its live one, where its
    // test events go, signed with the test account's own secret (`companies::rotate_test_secret`,
    // made when first shown: sealing needs the master key, which a migration has not). A test
    // event of a workflow with no test URL is kept as `not_sent`, which ends its delivery: the
    // retention's index of ended events takes it in.
    r#"
ALTER TABLE workflows ADD COLUMN test_webhook_url TEXT;
DROP INDEX webhook_events_ended;
CREATE INDEX webhook_events_ended ON webhook_events(updated_at) WHERE status IN ('delivered', 'dead', 'gone', 'not_sent');
"#,
    // An e-mail address is no longer reserved by an invitation: each company invites whom it
    // likes, and only an account (a password chosen, not disabled) holds its address, so that an
    // invitation neither tells nor blocks what another company did with it (see
    // `invitations::accept`). SQLite drops a column's UNIQUE only by rebuilding the table.
    r#"
CREATE TABLE members_rebuilt (
    id TEXT PRIMARY KEY,
    company_id TEXT NOT NULL REFERENCES companies(id),
    email TEXT NOT NULL,
    role TEXT NOT NULL,
    password_hash TEXT,
    lang TEXT,
    totp_secret_sealed BLOB,
    totp_last_step INTEGER,
    recovery_codes TEXT,
    disabled_at TEXT,
    created_at TEXT NOT NULL
);
INSERT INTO members_rebuilt (id, company_id, email, role, password_hash, lang, totp_secret_sealed, totp_last_step, recovery_codes, disabled_at, created_at)
    SELECT id, company_id, email, role, password_hash, lang, totp_secret_sealed, totp_last_step, recovery_codes, disabled_at, created_at
    FROM members;
DROP TABLE members;
ALTER TABLE members_rebuilt RENAME TO members;
CREATE INDEX members_by_company ON members(company_id, created_at);
CREATE UNIQUE INDEX members_once_per_company ON members(company_id, email);
CREATE UNIQUE INDEX members_one_account ON members(email) WHERE password_hash IS NOT NULL AND disabled_at IS NULL;
"#,
    // Recovery codes are stored keyed (HMAC under a server key, see `crypto::recovery_codes`),
    // not as their bare SHA-256. SQL has no key: the values stored so far wait in
    // `recovery_codes_unkeyed` for the first start with it (`key_recovery_codes`).
    r#"
ALTER TABLE members ADD COLUMN recovery_codes_unkeyed TEXT;
UPDATE members SET recovery_codes_unkeyed = recovery_codes, recovery_codes = NULL WHERE recovery_codes IS NOT NULL;
"#,
    // API keys hold scopes (`KeyScopes`, wire names separated by a space): `images` reaches a
    // result's images and certificate. A key keeps only what its creator's role may give: those
    // made by a developer or a viewer (roles without the images) lose it; the operator's and the
    // owners' and admins' keep it, so no integration that downloads images breaks.
    r#"
ALTER TABLE api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT 'images';
UPDATE api_keys SET scopes = ''
    WHERE created_by IN (SELECT id FROM members WHERE role IN ('developer', 'viewer'));
"#,
    // Face match: whether the customer of a journey consented to the biometric comparison, and
    // what the comparison concluded for a result (`domain::face_match::FaceMatch` as JSON: the
    // outcome and the similarity, nothing biometric).
    r#"
ALTER TABLE verifications ADD COLUMN biometric_consent INTEGER NOT NULL DEFAULT 0;
ALTER TABLE consultations ADD COLUMN face_match TEXT;
"#,
    // Where a journey's end pages send the customer back (`ReturnUrl`, checked when the session
    // is created and stored as given); NULL when the client gave none.
    r#"
ALTER TABLE verifications ADD COLUMN return_url TEXT;
"#,
    // What a company's journeys show of it (`domain::branding`), on its live row only (a test
    // account reads its company's); the logo as Sceau re-encoded it (PNG) in a table of its own,
    // so reading a company's row never walks a blob's pages. A workflow may name the journey
    // otherwise.
    r#"
ALTER TABLE companies ADD COLUMN display_name TEXT;
ALTER TABLE companies ADD COLUMN accent_color TEXT;
ALTER TABLE companies ADD COLUMN privacy_controller TEXT;
ALTER TABLE companies ADD COLUMN privacy_contact TEXT;
ALTER TABLE companies ADD COLUMN privacy_purpose TEXT;
ALTER TABLE companies ADD COLUMN privacy_policy_url TEXT;
ALTER TABLE workflows ADD COLUMN display_name TEXT;
CREATE TABLE company_logos (
    company_id TEXT PRIMARY KEY REFERENCES companies(id),
    png BLOB NOT NULL
);
"#,
];

/// Brings the schema up to date.
pub fn apply(conn: &mut Connection) -> rusqlite::Result<()> {
    apply_up_to(conn, MIGRATIONS.len())
}

/// Applies the migrations not applied yet among the first `last` (tests build older schemas).
/// A migration may rebuild a table others reference (how SQLite drops a constraint), which needs
/// foreign keys off while the old table goes; the pragma does nothing inside a transaction, so it
/// is set around it, and every key is checked before the commit.
pub(super) fn apply_up_to(conn: &mut Connection, last: usize) -> rusqlite::Result<()> {
    let current: usize = conn.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0))? as usize;
    if current >= last.min(MIGRATIONS.len()) {
        return Ok(());
    }
    let enforced: bool = conn.pragma_query_value(None, "foreign_keys", |r| r.get(0))?;
    conn.pragma_update(None, "foreign_keys", false)?;
    let applied = apply_in_one_transaction(conn, last);
    conn.pragma_update(None, "foreign_keys", enforced)?;
    applied
}

fn apply_in_one_transaction(conn: &mut Connection, last: usize) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let current: usize = tx.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0))? as usize;
    for (i, sql) in MIGRATIONS.iter().enumerate().take(last).skip(current) {
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
    }
    let broken: Option<String> = tx.query_row("PRAGMA foreign_key_check", [], |r| r.get(0)).optional()?;
    if let Some(table) = broken {
        return Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY),
            Some(format!("a migration left a row of {table} without its parent")),
        ));
    }
    tx.commit()
}

/// Seals the webhook secrets an earlier version stored in clear (moved aside by the migration
/// above), and forgets the clear values; returns how many companies it sealed. Idempotent: every
/// start with the key runs it, and it finds nothing once done.
pub fn seal_webhook_secrets(tx: &Connection, keys: &MasterKeys) -> rusqlite::Result<usize> {
    let pending: Vec<(String, String, Option<String>)> = tx
        .prepare("SELECT company_id, secret, previous_secret FROM webhook_secrets_to_seal")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    for (company, secret, previous) in &pending {
        let seal = |s: &String| super::companies::seal_secret(keys, company, s);
        tx.execute(
            "UPDATE companies SET webhook_secret_sealed = ?2, previous_webhook_secret_sealed = ?3 WHERE id = ?1",
            params![company, seal(secret), previous.as_ref().map(seal)],
        )?;
    }
    tx.execute("DELETE FROM webhook_secrets_to_seal", [])?;
    Ok(pending.len())
}

/// Keys the recovery codes an earlier version stored as bare SHA-256 (moved aside by the migration
/// above): each becomes `HMAC(key, SHA-256(code))`, what new codes are stored as, so members keep
/// the codes they printed. Returns how many members it keyed; idempotent like the sealing.
pub fn key_recovery_codes(tx: &Connection, keys: &MasterKeys) -> Result<usize, StoreError> {
    let pending: Vec<(String, String)> = tx
        .prepare("SELECT id, recovery_codes_unkeyed FROM members WHERE recovery_codes_unkeyed IS NOT NULL")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let recovery = RecoveryKeys::of(keys);
    for (member, unkeyed) in &pending {
        let corrupt = || StoreError::Corrupt(format!("unexpected stored recovery codes of {member}"));
        let codes: Vec<String> = serde_json::from_str(unkeyed).map_err(|_| corrupt())?;
        let keyed = codes
            .iter()
            .map(|c| unhex(c).map(|sha| hex(&recovery_codes::rekey(&recovery, &sha))).ok_or_else(corrupt))
            .collect::<Result<Vec<_>, _>>()?;
        let keyed = serde_json::to_string(&keyed).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        tx.execute(
            "UPDATE members SET recovery_codes = ?2, recovery_codes_unkeyed = NULL WHERE id = ?1",
            params![member, keyed],
        )?;
    }
    Ok(pending.len())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{companies, RepoError, Store};
    use domain::ids::CompanyId;
    use std::sync::Arc;

    /// How many migrations come before the one whose SQL holds `marker` (merge-proof numbering).
    fn before(marker: &str) -> usize {
        MIGRATIONS.iter().position(|sql| sql.contains(marker)).expect("the migration")
    }

    const CLEAR: &str = "whsec_Q2xlYXJTZWNyZXRPZkFuRWFybGllclZlcnNpb24xMjM=";
    const CLEAR_PREVIOUS: &str = "whsec_UHJldmlvdXNTZWNyZXRTdGlsbEluUm90YXRpb24xMjM=";

    /// A database as the version before sealing left it: one company whose current and previous
    /// webhook secrets are in clear, a rotation in progress.
    fn database_with_clear_secrets(path: &std::path::Path, company: &CompanyId) {
        let mut conn = Connection::open(path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        apply_up_to(&mut conn, before("CREATE TABLE webhook_secrets_to_seal")).unwrap();
        let until = domain::time::format(chrono::Utc::now() + chrono::Duration::hours(12));
        conn.execute(
            "INSERT INTO companies (id, name, licence, webhook_secret, previous_webhook_secret, previous_secret_until, created_at)
             VALUES (?1, 'Acme', 'group', ?2, ?3, ?4, '2025-01-01T00:00:00.000Z')",
            params![company.as_str(), CLEAR, CLEAR_PREVIOUS, until],
        )
        .unwrap();
    }

    fn files_hold(path: &std::path::Path, needle: &str) -> bool {
        let wal = path.with_extension("sqlite-wal");
        [path.to_owned(), wal]
            .iter()
            .filter_map(|p| std::fs::read(p).ok())
            .any(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
    }

    #[tokio::test]
    async fn secrets_kept_in_clear_are_sealed_at_start_and_leave_no_trace_in_the_files() {
        let dir = std::env::temp_dir().join(format!("sceau-seal-{}", domain::ids::random_hex(8)));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("db.sqlite");
        let (company, other) = (CompanyId::generate(chrono::Utc::now()), CompanyId::generate(chrono::Utc::now()));
        database_with_clear_secrets(&path, &company);
        assert!(files_hold(&path, &CLEAR[6..]), "the fixture holds the secret in clear");

        let store = Store::open(&path).unwrap();
        let keys = Arc::new(MasterKeys::ephemeral());
        assert_eq!(store.apply_keyed_migrations(keys.clone()).await.unwrap(), 1);
        assert_eq!(store.apply_keyed_migrations(keys.clone()).await.unwrap(), 0, "done once");

        let (id, k) = (company.clone(), keys.clone());
        let secrets = store
            .read(move |c| companies::signing_secrets(c, &id, &k, chrono::Utc::now()))
            .await
            .unwrap();
        assert_eq!(secrets, vec![CLEAR.to_owned(), CLEAR_PREVIOUS.to_owned()]);
        for secret in [CLEAR, CLEAR_PREVIOUS] {
            assert!(!files_hold(&path, &secret[6..]), "{secret} is still in the database files");
        }

        // Bound to its company: the sealed secret copied to another company does not open.
        let (from, to, k) = (company.clone(), other.clone(), keys.clone());
        let copied = store
            .write(move |tx| {
                tx.execute(
                    "INSERT INTO companies (id, name, licence, webhook_secret_sealed, created_at)
                     SELECT ?2, 'Other', licence, webhook_secret_sealed, created_at FROM companies WHERE id = ?1",
                    params![from.as_str(), to.as_str()],
                )?;
                companies::signing_secrets(tx, &to, &k, chrono::Utc::now())
            })
            .await;
        assert!(matches!(copied, Err(RepoError::Store(_))), "{copied:?}");
        let _ = std::fs::remove_dir_all(dir);
    }

    fn columns(conn: &Connection, table: &str) -> Vec<String> {
        let mut names: Vec<String> = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        names.sort();
        names
    }

    /// The rebuild that lets several companies invite one address keeps every column and row of
    /// `members`, and the rows that point at a member still do (foreign keys on again after it).
    #[test]
    fn members_rebuilt_keep_their_columns_rows_and_references() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        apply_up_to(&mut conn, before("CREATE TABLE members_rebuilt")).unwrap();
        let kept = columns(&conn, "members");
        conn.execute_batch(
            "INSERT INTO companies (id, name, licence, created_at) VALUES ('CMP-1', 'Acme', 'group', 'x');
             INSERT INTO members (id, company_id, email, role, password_hash, created_at)
                 VALUES ('MBR-1', 'CMP-1', 'a@example.fr', 'owner', '$argon2id$x', '2025-01-01T00:00:00.000Z');
             INSERT INTO invitations (token_hash, member_id, company_id, created_at, expires_at)
                 VALUES (x'01', 'MBR-1', 'CMP-1', 'x', 'x');",
        )
        .unwrap();
        apply(&mut conn).unwrap();
        let mut now_columns = columns(&conn, "members");
        now_columns.retain(|c| c != "recovery_codes_unkeyed");
        assert_eq!(now_columns, kept, "a column added before the rebuild must be added to it");
        let enforced: bool = conn.pragma_query_value(None, "foreign_keys", |r| r.get(0)).unwrap();
        assert!(enforced, "foreign keys are enforced again");
        let refused = conn.execute(
            "INSERT INTO invitations (token_hash, member_id, company_id, created_at, expires_at) VALUES (x'02', 'MBR-9', 'CMP-1', 'x', 'x')",
            [],
        );
        assert!(refused.is_err(), "invitations still reference members");
        conn.execute(
            "INSERT INTO members (id, company_id, email, role, created_at) VALUES ('MBR-2', 'CMP-2', 'a@example.fr', 'viewer', 'x')",
            [],
        )
        .expect_err("members still reference companies");
        conn.execute_batch(
            "INSERT INTO companies (id, name, licence, created_at) VALUES ('CMP-2', 'Other', 'group', 'x');
             INSERT INTO members (id, company_id, email, role, created_at) VALUES ('MBR-2', 'CMP-2', 'a@example.fr', 'viewer', 'x');",
        )
        .expect("another company may invite an address that has an account");
        conn.execute("UPDATE members SET password_hash = 'h' WHERE id = 'MBR-2'", [])
            .expect_err("but not make a second account of it");
    }

    /// Recovery codes an earlier version stored as bare SHA-256 are set aside by SQL, keyed at the
    /// first start with the key, and then match their codes as new ones do.
    #[tokio::test]
    async fn recovery_codes_stored_unkeyed_are_keyed_at_start_and_still_match() {
        let dir = std::env::temp_dir().join(format!("sceau-recovery-{}", domain::ids::random_hex(8)));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("db.sqlite");
        let code = "0a1b2-c3d4e";
        let legacy = hex(ring::digest::digest(&ring::digest::SHA256, b"0a1b2c3d4e").as_ref());
        {
            let mut conn = Connection::open(&path).unwrap();
            apply_up_to(&mut conn, before("ADD COLUMN recovery_codes_unkeyed")).unwrap();
            conn.execute_batch(&format!(
                "INSERT INTO companies (id, name, licence, created_at) VALUES ('CMP-1', 'Acme', 'group', 'x');
                 INSERT INTO members (id, company_id, email, role, password_hash, recovery_codes, created_at)
                     VALUES ('MBR-20250101-0123456789ab', 'CMP-1', 'a@example.fr', 'owner', 'h', '[\"{legacy}\"]', '2025-01-01T00:00:00.000Z');"
            ))
            .unwrap();
        }
        let store = Store::open(&path).unwrap();
        let keys = Arc::new(MasterKeys::ephemeral());
        assert_eq!(store.apply_keyed_migrations(keys.clone()).await.unwrap(), 1);
        assert_eq!(store.apply_keyed_migrations(keys.clone()).await.unwrap(), 0, "done once");
        assert!(!files_hold(&path, &legacy), "the bare SHA-256 is gone from the files");
        let member: domain::ids::MemberId = "MBR-20250101-0123456789ab".parse().unwrap();
        let candidates = recovery_codes::candidates(&RecoveryKeys::of(&keys), code);
        let spent = store
            .write(move |tx| crate::store::members::use_recovery_code(tx, &member, &candidates))
            .await
            .unwrap();
        assert!(spent, "the code printed before the upgrade still works");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn images_recorded_before_the_purge_index_carry_their_company_after_it() {
        let mut conn = Connection::open_in_memory().unwrap();
        apply_up_to(&mut conn, before("CREATE INDEX images_to_purge")).unwrap();
        conn.execute_batch(
            "INSERT INTO companies (id, name, licence, created_at) VALUES ('CMP-1', 'Acme', 'group', 'x');
             INSERT INTO consultations (id, company_id, workflow_id, category, document_type, verdict, anomalies, analyzed_at, created_at)
                 VALUES ('CNS-1', 'CMP-1', 'WF-1', 'identite', 'cni', 'valide', '[]', 'x', 'x');
             INSERT INTO consultation_images (consultation_id, side, blob, content_type, created_at)
                 VALUES ('CNS-1', 'recto', 'b', 'image/png', 'x');",
        )
        .unwrap();
        apply(&mut conn).unwrap();
        let company: String = conn
            .query_row(
                "SELECT company_id FROM consultation_images WHERE consultation_id = 'CNS-1'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(company, "CMP-1");
    }

    #[test]
    fn keys_made_by_a_role_without_images_lose_them_and_the_others_keep_them() {
        let mut conn = Connection::open_in_memory().unwrap();
        apply_up_to(&mut conn, before("ADD COLUMN scopes")).unwrap();
        conn.execute_batch(
            "INSERT INTO companies (id, name, licence, created_at) VALUES ('CMP-1', 'Acme', 'group', 'x');
             INSERT INTO members (id, company_id, email, role, created_at) VALUES
                 ('MBR-dev', 'CMP-1', 'dev@example.fr', 'developer', 'x'),
                 ('MBR-own', 'CMP-1', 'own@example.fr', 'owner', 'x');
             INSERT INTO api_keys (prefix, hash, company_id, read_only, created_at, created_by) VALUES
                 ('sk_live_dev00000', x'00', 'CMP-1', 0, 'x', 'MBR-dev'),
                 ('sk_live_own00000', x'00', 'CMP-1', 0, 'x', 'MBR-own'),
                 ('sk_live_cli00000', x'00', 'CMP-1', 0, 'x', NULL);",
        )
        .unwrap();
        apply(&mut conn).unwrap();
        let scopes: Vec<(String, String)> = conn
            .prepare("SELECT prefix, scopes FROM api_keys ORDER BY prefix")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let expected = [
            ("sk_live_cli00000", "images"),
            ("sk_live_dev00000", ""),
            ("sk_live_own00000", "images"),
        ];
        assert_eq!(scopes, expected.map(|(p, s)| (p.to_owned(), s.to_owned())));
    }
}
