//! Workflows: how a company's documents are evaluated, and where their events go. Both modes share
//! them (API.md, Test mode): a test account reads and uses its company's.

use super::error::{stored, stored_time, RepoError};
use super::events;
use crate::telemetry::RequestId;
use ::domain::branding::DisplayName;
use chrono::{DateTime, Utc};
use domain::ids::{CompanyId, ConsultationId, EventId, WorkflowId};
use domain::model::{Workflow, WorkflowDetail, WorkflowRules};
use domain::vocabulary::{Decision, DocumentCategory, Mode, Verdict};
use domain::webhook::{ConsultationOutcome, WebhookEvent};
use rusqlite::{params, Connection, OptionalExtension, Row};

const COLUMNS: &str = "id, name, category, created_at, company_id, webhook_url, rules, default_batch, test_webhook_url";

/// The company whose workflows the account given as `?{n}` uses: its own, or for a test account
/// its company's.
fn workflows_of(n: u8) -> String {
    format!("company_id = (SELECT coalesce(test_of, id) FROM companies WHERE id = ?{n})")
}

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
    test_webhook_url: Option<String>,
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
        test_webhook_url: r.get(8)?,
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
        test_webhook_url: r.test_webhook_url,
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
    let name = checked_name(name)?;
    checked_rules(rules, category)?;
    let id = WorkflowId::generate(now);
    tx.execute(
        "INSERT INTO workflows (id, company_id, name, category, webhook_url, rules, default_batch, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![id.as_str(), company.as_str(), name, category.as_str(), webhook_url, serde_json::to_string(rules)?, default_batch, domain::time::format(now)],
    )?;
    get(tx, company, &id)
}

/// The longest workflow name.
pub const MAX_NAME_CHARS: usize = 200;

fn checked_name(name: &str) -> Result<&str, RepoError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
        return Err(RepoError::Invalid {
            field: "name",
            message: format!("the workflow name must have 1 to {MAX_NAME_CHARS} characters"),
        });
    }
    Ok(name)
}

fn checked_rules(rules: &WorkflowRules, category: DocumentCategory) -> Result<(), RepoError> {
    rules.check(category).map_err(|e| RepoError::Invalid {
        field: "rules",
        message: e.to_string(),
    })
}

/// Renames a workflow of the company, sets its category and replaces its rules (checked for
/// that category). A category's default batch workflow keeps its category: batches deposited
/// without a workflow are found through it.
pub fn update(
    tx: &Connection,
    company: &CompanyId,
    id: &WorkflowId,
    name: &str,
    category: DocumentCategory,
    rules: &WorkflowRules,
) -> Result<WorkflowDetail, RepoError> {
    let current = get(tx, company, id)?;
    let name = checked_name(name)?;
    if category != current.workflow.document_category && is_default_batch(tx, id)? {
        return Err(RepoError::Invalid {
            field: "category",
            message: "the default batch workflow of a category keeps its category".to_owned(),
        });
    }
    checked_rules(rules, category)?;
    tx.execute(
        &format!(
            "UPDATE workflows SET name = ?3, category = ?4, rules = ?5 WHERE id = ?1 AND {}",
            workflows_of(2)
        ),
        params![
            id.as_str(),
            company.as_str(),
            name,
            category.as_str(),
            serde_json::to_string(rules)?
        ],
    )?;
    get(tx, company, id)
}

fn is_default_batch(tx: &Connection, id: &WorkflowId) -> Result<bool, RepoError> {
    Ok(tx.query_row("SELECT default_batch FROM workflows WHERE id = ?1", [id.as_str()], |r| r.get(0))?)
}

/// Names the workflow's journeys otherwise than the company's display name (`None`: its name).
pub fn set_display_name(tx: &Connection, company: &CompanyId, id: &WorkflowId, name: Option<&DisplayName>) -> Result<(), RepoError> {
    get(tx, company, id)?;
    tx.execute(
        &format!("UPDATE workflows SET display_name = ?3 WHERE id = ?1 AND {}", workflows_of(2)),
        params![id.as_str(), company.as_str(), name.map(DisplayName::as_str)],
    )?;
    Ok(())
}

/// Sets (or, with `None`, removes) where the workflow's `verification.*` events go. The caller
/// has checked the destination (`notifier::validate_url`, with the operator's allow-list).
pub fn set_webhook_url(tx: &Connection, company: &CompanyId, id: &WorkflowId, url: Option<&str>) -> Result<WorkflowDetail, RepoError> {
    get(tx, company, id)?;
    tx.execute(
        &format!("UPDATE workflows SET webhook_url = ?3 WHERE id = ?1 AND {}", workflows_of(2)),
        params![id.as_str(), company.as_str(), url],
    )?;
    get(tx, company, id)
}

/// Sets (or, with `None`, removes) where the workflow's test events go; checked as
/// [`set_webhook_url`]'s. With none, test events are kept as `not_sent` ([`emit_event`]).
pub fn set_test_webhook_url(tx: &Connection, company: &CompanyId, id: &WorkflowId, url: Option<&str>) -> Result<WorkflowDetail, RepoError> {
    get(tx, company, id)?;
    tx.execute(
        &format!("UPDATE workflows SET test_webhook_url = ?3 WHERE id = ?1 AND {}", workflows_of(2)),
        params![id.as_str(), company.as_str(), url],
    )?;
    get(tx, company, id)
}

/// Records a `verification.*` event of `account` (the workflow's company, or its test account)
/// where its mode sends it: a live event to the workflow's URL (none: nothing, as ever), a test
/// event to its test URL only; a test event with no test URL is kept as `not_sent`, visible in
/// the delivery log, and never reaches the live URL. The event's id when one was recorded.
pub fn emit_event(
    tx: &Connection,
    account: &CompanyId,
    workflow: &WorkflowDetail,
    event: WebhookEvent,
    request_id: Option<&RequestId>,
    now: DateTime<Utc>,
) -> Result<Option<EventId>, RepoError> {
    let mode = super::companies::get(tx, account)?.mode;
    match (workflow.webhook_url_for(mode), mode) {
        (Some(url), _) => events::emit(tx, account, url, event, request_id, now).map(Some),
        (None, Mode::Test) => events::record_not_sent(tx, account, event, request_id, now).map(Some),
        (None, Mode::Live) => Ok(None),
    }
}

/// Queues a `verification.test` event to the workflow's webhook URL: the envelope of
/// `verification.completed`, dummy identifiers, `externalRef` = `TEST`. The operator's command
/// and the portal's test button both send it through here. It checks the live endpoint, signed
/// with the live secret (`livemode: true`): the test URL is tried with a test key's journeys or
/// `simulate`, whose events go there.
pub fn emit_test(tx: &Connection, workflow: &WorkflowDetail, now: DateTime<Utc>) -> Result<EventId, RepoError> {
    let id = &workflow.workflow.id;
    let url = workflow
        .webhook_url
        .as_deref()
        .ok_or_else(|| RepoError::InvalidState(format!("workflow {id} has no webhook URL")))?;
    let dummy = format!("CSL-{}-000000000000", now.format("%Y%m%d"));
    let event = WebhookEvent::VerificationTest(ConsultationOutcome {
        consultation_id: ConsultationId::parse(&dummy).map_err(|e| RepoError::Refused(e.to_string()))?,
        workflow_id: id.clone(),
        external_ref: Some("TEST".into()),
        verdict: Verdict::Conforme,
        decision: Some(Decision::Conforme),
    });
    events::emit(tx, &workflow.company_id, url, event, None, now)
}

/// A workflow of the company; another company's id is not found.
pub fn get(c: &Connection, company: &CompanyId, id: &WorkflowId) -> Result<WorkflowDetail, RepoError> {
    let row = c
        .query_row(
            &format!("SELECT {COLUMNS} FROM workflows WHERE id = ?1 AND {}", workflows_of(2)),
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
    let mut stmt = c.prepare(&format!(
        "SELECT {COLUMNS} FROM workflows WHERE {} ORDER BY seq DESC",
        workflows_of(1)
    ))?;
    let rows = stmt.query_map([company.as_str()], raw)?.collect::<Result<Vec<_>, _>>()?;
    rows.into_iter().map(build).collect()
}

/// The default batch workflow of a category, created with the company.
pub fn default_batch(c: &Connection, company: &CompanyId, category: DocumentCategory) -> Result<WorkflowId, RepoError> {
    let id: String = c
        .query_row(
            &format!(
                "SELECT id FROM workflows WHERE {} AND category = ?2 AND default_batch = 1 ORDER BY seq LIMIT 1",
                workflows_of(1)
            ),
            [company.as_str(), category.as_str()],
            |r| r.get(0),
        )
        .optional()?
        .ok_or(RepoError::NotFound)?;
    stored(&id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::{DeliveryAttempt, DeliveryOutcome};
    use crate::store::test_support::{company, memory};
    use domain::webhook::{DeliveryStatus, EventType};

    fn rules(json: &str) -> WorkflowRules {
        serde_json::from_str(json).expect("rules")
    }

    #[test]
    fn rules_and_names_are_checked_on_create_and_update() {
        let c = memory();
        let (a, now) = (company(&c), Utc::now());
        let bad = rules(r#"{"minAge":300}"#);
        let refused = create(&c, &a, "KYC", DocumentCategory::Identite, None, &bad, false, now);
        assert!(matches!(refused, Err(RepoError::Invalid { field: "rules", .. })), "{refused:?}");
        let wf = create(
            &c,
            &a,
            " KYC ",
            DocumentCategory::Identite,
            None,
            &rules(r#"{"minAge":18}"#),
            false,
            now,
        )
        .unwrap();
        assert_eq!((wf.workflow.name.as_str(), wf.rules.min_age), ("KYC", Some(18)));

        let id = wf.workflow.id.clone();
        let types = rules(r#"{"acceptedDocumentTypes":["facture"]}"#);
        assert!(matches!(
            update(&c, &a, &id, "KYC", DocumentCategory::Identite, &types),
            Err(RepoError::Invalid { field: "rules", .. })
        ));
        assert!(matches!(
            update(&c, &a, &id, "  ", DocumentCategory::Identite, &WorkflowRules::default()),
            Err(RepoError::Invalid { field: "name", .. })
        ));
        assert_eq!(get(&c, &a, &id).unwrap(), wf, "a refused update writes nothing");
        let fra = rules(r#"{"minAge":21,"acceptedCountries":["FRA"],"systematicReview":true}"#);
        let updated = update(&c, &a, &id, "Onboarding", DocumentCategory::Identite, &fra).unwrap();
        assert_eq!((updated.workflow.name.as_str(), &updated.rules), ("Onboarding", &fra));

        // A new category: the rules are checked against it.
        let invoices = rules(r#"{"acceptedDocumentTypes":["facture"]}"#);
        assert!(matches!(
            update(&c, &a, &id, "Justificatifs", DocumentCategory::Identite, &invoices),
            Err(RepoError::Invalid { field: "rules", .. })
        ));
        let moved = update(&c, &a, &id, "Justificatifs", DocumentCategory::Administratif, &invoices).unwrap();
        assert_eq!(moved.workflow.document_category, DocumentCategory::Administratif);
        assert_eq!(moved.rules, invoices);
    }

    #[test]
    fn a_default_batch_workflow_keeps_its_category() {
        let c = memory();
        let a = company(&c);
        let id = default_batch(&c, &a, DocumentCategory::Identite).unwrap();
        let refused = update(&c, &a, &id, "Lots", DocumentCategory::Administratif, &WorkflowRules::default());
        assert!(matches!(refused, Err(RepoError::Invalid { field: "category", .. })), "{refused:?}");
        let renamed = update(&c, &a, &id, "Lots", DocumentCategory::Identite, &WorkflowRules::default()).unwrap();
        assert_eq!(renamed.workflow.name, "Lots");
        assert_eq!(default_batch(&c, &a, DocumentCategory::Identite).unwrap(), id);
    }

    #[test]
    fn another_company_cannot_change_a_workflow() {
        let c = memory();
        let (a, b, now) = (company(&c), company(&c), Utc::now());
        let wf = create(
            &c,
            &a,
            "KYC",
            DocumentCategory::Identite,
            None,
            &WorkflowRules::default(),
            false,
            now,
        )
        .unwrap();
        let id = &wf.workflow.id;
        assert!(matches!(
            update(&c, &b, id, "Mine", DocumentCategory::Identite, &WorkflowRules::default()),
            Err(RepoError::NotFound)
        ));
        assert!(matches!(
            set_webhook_url(&c, &b, id, Some("https://b.example/hook")),
            Err(RepoError::NotFound)
        ));
        let set = set_webhook_url(&c, &a, id, Some("https://a.example/hook")).unwrap();
        assert_eq!(set.webhook_url.as_deref(), Some("https://a.example/hook"));
        assert_eq!(set_webhook_url(&c, &a, id, None).unwrap().webhook_url, None);
    }

    #[test]
    fn each_mode_s_events_go_to_its_own_url_and_a_test_event_without_one_is_kept_unsent() {
        let c = memory();
        let (live, now) = (company(&c), Utc::now());
        let test = crate::store::companies::account(&c, &live, Mode::Test, now).unwrap();
        let wf = create(
            &c,
            &live,
            "KYC",
            DocumentCategory::Identite,
            Some("https://live.example/hook"),
            &WorkflowRules::default(),
            false,
            now,
        )
        .unwrap();
        let event = || {
            WebhookEvent::VerificationTest(ConsultationOutcome {
                consultation_id: ConsultationId::parse("CSL-20260101-000000000000").unwrap(),
                workflow_id: wf.workflow.id.clone(),
                external_ref: None,
                verdict: Verdict::Conforme,
                decision: None,
            })
        };
        let row = |id: &EventId| -> (String, String, Option<String>) {
            c.query_row(
                "SELECT url, status, last_error FROM webhook_events WHERE id = ?1",
                [id.as_str()],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap()
        };
        let queued = || -> i64 { c.query_row("SELECT COUNT(*) FROM outbox", [], |r| r.get(0)).unwrap() };

        let live_event = emit_event(&c, &live, &wf, event(), None, now).unwrap().expect("a live event");
        assert_eq!(row(&live_event).0, "https://live.example/hook");
        assert_eq!(queued(), 1);
        let unsent = emit_event(&c, &test, &wf, event(), None, now).unwrap().expect("kept");
        assert_eq!(row(&unsent), (String::new(), "not_sent".into(), Some(events::NO_TEST_URL.into())));
        assert_eq!(queued(), 1, "a test event without a test URL is never queued");
        assert!(matches!(events::replay(&c, &unsent, now), Err(RepoError::InvalidState(_))));

        let wf = set_test_webhook_url(&c, &live, &wf.workflow.id, Some("https://test.example/hook")).unwrap();
        let test_event = emit_event(&c, &test, &wf, event(), None, now).unwrap().expect("a test event");
        assert_eq!(row(&test_event).0, "https://test.example/hook");
        assert_eq!(queued(), 2);
        let wf = set_webhook_url(&c, &live, &wf.workflow.id, None).unwrap();
        assert_eq!(
            emit_event(&c, &live, &wf, event(), None, now).unwrap(),
            None,
            "no live URL: nothing, as ever"
        );
    }

    #[test]
    fn test_events_are_listed_with_their_attempts_under_their_workflow() {
        let c = memory();
        let (a, b, now) = (company(&c), company(&c), Utc::now());
        let wf = create(
            &c,
            &a,
            "KYC",
            DocumentCategory::Identite,
            None,
            &WorkflowRules::default(),
            false,
            now,
        )
        .unwrap();
        let other = create(
            &c,
            &a,
            "Other",
            DocumentCategory::Identite,
            None,
            &WorkflowRules::default(),
            false,
            now,
        )
        .unwrap();
        assert!(
            matches!(emit_test(&c, &wf, now), Err(RepoError::InvalidState(_))),
            "no URL, no event"
        );
        let wf = set_webhook_url(&c, &a, &wf.workflow.id, Some("https://a.example/hook")).unwrap();
        let other = set_webhook_url(&c, &a, &other.workflow.id, Some("https://a.example/other")).unwrap();
        let event = emit_test(&c, &wf, now).unwrap();
        emit_test(&c, &other, now).unwrap();

        let listed = events::deliveries(&c, &a, &wf.workflow.id).unwrap();
        assert_eq!(listed.len(), 1, "only this workflow's event: {listed:?}");
        assert_eq!(
            (&listed[0].event_id, listed[0].event, listed[0].attempt.as_ref()),
            (&event, EventType::VerificationTest, None)
        );
        assert!(events::deliveries(&c, &b, &wf.workflow.id).unwrap().is_empty(), "scoped by company");

        for (attempt, outcome, code) in [(1, DeliveryOutcome::Retrying, 500), (2, DeliveryOutcome::Dead, 500)] {
            events::record_attempt(
                &c,
                &DeliveryAttempt {
                    event_id: event.clone(),
                    attempt,
                    at: now,
                    status_code: Some(code),
                    error: None,
                    outcome,
                    duration_ms: Some(12),
                },
            )
            .unwrap();
        }
        let listed = events::deliveries(&c, &a, &wf.workflow.id).unwrap();
        let attempts: Vec<_> = listed
            .iter()
            .map(|d| d.attempt.as_ref().map(|a| (a.attempt, a.status_code, a.duration_ms)))
            .collect();
        assert_eq!(attempts, [Some((2, Some(500), Some(12))), Some((1, Some(500), Some(12)))]);
        assert_eq!(listed[0].status, DeliveryStatus::Dead);

        assert!(
            matches!(events::replay_of(&c, &b, &wf.workflow.id, &event, now), Err(RepoError::NotFound)),
            "another company's event"
        );
        assert!(
            matches!(events::replay_of(&c, &a, &other.workflow.id, &event, now), Err(RepoError::NotFound)),
            "another workflow's event"
        );
        events::replay_of(&c, &a, &wf.workflow.id, &event, now).unwrap();
        let listed = events::deliveries(&c, &a, &wf.workflow.id).unwrap();
        assert_eq!(
            (listed.len(), listed[0].status, listed[0].attempt.as_ref()),
            (1, DeliveryStatus::Pending, None)
        );
    }
}
