//! Workflows: how a company's documents are evaluated, and where their events go.

use super::error::{stored, stored_time, RepoError};
use crate::domain::DocumentCategory;
use crate::ids::{CompanyId, WorkflowId};
use crate::model::{Workflow, WorkflowDetail, WorkflowRules};
use chrono::{DateTime, Utc};
use rusqlite::{params, Connection, OptionalExtension, Row};

const COLUMNS: &str = "id, name, category, created_at, company_id, webhook_url, rules, default_batch";

/// A workflow as SQLite holds it ([`COLUMNS`], in order), before its columns are checked.
struct WorkflowRow {
    id: String,
    name: String,
    category: String,
    created_at: String,
    company_id: String,
    webhook_url: Option<String>,
    rules: String,
    default_batch: bool,
}

fn raw(r: &Row<'_>) -> rusqlite::Result<WorkflowRow> {
    Ok(WorkflowRow {
        id: r.get(0)?,
        name: r.get(1)?,
        category: r.get(2)?,
        created_at: r.get(3)?,
        company_id: r.get(4)?,
        webhook_url: r.get(5)?,
        rules: r.get(6)?,
        default_batch: r.get(7)?,
    })
}

fn build(r: WorkflowRow) -> Result<WorkflowDetail, RepoError> {
    Ok(WorkflowDetail {
        workflow: Workflow {
            id: stored(&r.id)?,
            name: r.name,
            document_category: stored(&r.category)?,
            created_at: stored_time(&r.created_at)?,
        },
        company_id: stored(&r.company_id)?,
        webhook_url: r.webhook_url,
        rules: serde_json::from_str(&r.rules)?,
        default_batch: r.default_batch,
    })
}

#[allow(clippy::too_many_arguments)]
pub fn create(
    tx: &Connection,
    company: &CompanyId,
    name: &str,
    category: DocumentCategory,
    webhook_url: Option<&str>,
    rules: &WorkflowRules,
    default_batch: bool,
    now: DateTime<Utc>,
) -> Result<WorkflowDetail, RepoError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 {
        return Err(RepoError::Invalid {
            field: "name",
            message: "the workflow name must have 1 to 200 characters".into(),
        });
    }
    let id = WorkflowId::generate(now);
    tx.execute(
        "INSERT INTO workflows (id, company_id, name, category, webhook_url, rules, default_batch, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![id.as_str(), company.as_str(), name, category.as_str(), webhook_url, serde_json::to_string(rules)?, default_batch, crate::time::format(now)],
    )?;
    get(tx, company, &id)
}

/// A workflow of the company; another company's id is not found.
pub fn get(c: &Connection, company: &CompanyId, id: &WorkflowId) -> Result<WorkflowDetail, RepoError> {
    let row = c
        .query_row(
            &format!("SELECT {COLUMNS} FROM workflows WHERE id = ?1 AND company_id = ?2"),
            [id.as_str(), company.as_str()],
            raw,
        )
        .optional()?
        .ok_or(RepoError::NotFound)?;
    build(row)
}

/// A workflow by id alone, for operator commands.
pub fn get_any(c: &Connection, id: &WorkflowId) -> Result<WorkflowDetail, RepoError> {
    let row = c
        .query_row(&format!("SELECT {COLUMNS} FROM workflows WHERE id = ?1"), [id.as_str()], raw)
        .optional()?
        .ok_or(RepoError::NotFound)?;
    build(row)
}

/// The company's workflows, most recent first.
pub fn list(c: &Connection, company: &CompanyId) -> Result<Vec<WorkflowDetail>, RepoError> {
    let mut stmt = c.prepare(&format!("SELECT {COLUMNS} FROM workflows WHERE company_id = ?1 ORDER BY seq DESC"))?;
    let rows = stmt.query_map([company.as_str()], raw)?.collect::<Result<Vec<_>, _>>()?;
    rows.into_iter().map(build).collect()
}

/// The default batch workflow of a category, created with the company.
pub fn default_batch(c: &Connection, company: &CompanyId, category: DocumentCategory) -> Result<WorkflowId, RepoError> {
    let id: String = c
        .query_row(
            "SELECT id FROM workflows WHERE company_id = ?1 AND category = ?2 AND default_batch = 1 ORDER BY seq LIMIT 1",
            [company.as_str(), category.as_str()],
            |r| r.get(0),
        )
        .optional()?
        .ok_or(RepoError::NotFound)?;
    stored(&id)
}
