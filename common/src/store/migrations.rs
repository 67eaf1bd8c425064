//! Versioned schema migrations, applied in order at open; `PRAGMA user_version` records the last.

use rusqlite::Connection;

/// Each entry is one migration; never edit a released one, append a new one.
const MIGRATIONS: &[&str] = &[
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
];

/// Brings the schema up to date.
pub fn apply(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let current: usize = tx.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0))? as usize;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current) {
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
    }
    tx.commit()
}
