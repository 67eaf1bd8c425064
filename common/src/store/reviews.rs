//! Human review of doubtful results: one operation for the portal and `sceau admin review`.
//! Settling a pending review records who settled it, when and why, writes the audit row and
//! emits `verification.reviewed` to the workflow's webhook URL. The verdict never changes.

use super::audit::{self, Acting};
use super::error::{stored_time, RepoError};
use super::{consultations, workflows};
use chrono::{DateTime, Utc};
use domain::ids::{CompanyId, ConsultationId};
use domain::model::Consultation;
use domain::team::AuditAction;
use domain::vocabulary::ReviewStatus;
use domain::webhook::{ConsultationOutcome, Review, WebhookEvent};
use rusqlite::{params, Connection, OptionalExtension};

/// The longest comment kept with a decision, in characters.
pub const COMMENT_MAX: usize = 2000;

/// What the reviewer decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Accept,
    Reject,
}

/// A decision and its comment, checked: a rejection says why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settlement {
    decision: Decision,
    comment: Option<String>,
}

impl Settlement {
    /// The comment trimmed (blank is none); refused when a rejection has none or it is too long.
    pub fn new(decision: Decision, comment: Option<&str>) -> Result<Self, RepoError> {
        let comment = comment.map(str::trim).filter(|c| !c.is_empty());
        if decision == Decision::Reject && comment.is_none() {
            return Err(RepoError::Invalid {
                field: "comment",
                message: "a comment is required to reject a review".into(),
            });
        }
        if comment.is_some_and(|c| c.chars().count() > COMMENT_MAX) {
            return Err(RepoError::Invalid {
                field: "comment",
                message: format!("the comment is longer than {COMMENT_MAX} characters"),
            });
        }
        Ok(Self {
            decision,
            comment: comment.map(str::to_owned),
        })
    }

    pub fn decision(&self) -> Decision {
        self.decision
    }
}

/// What a settled review keeps: who, when, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settled {
    /// The member's e-mail, or `operator`; none for reviews settled before it was kept.
    pub by: Option<String>,
    pub at: DateTime<Utc>,
    pub comment: Option<String>,
}

/// Settles the pending review of `id` (within `company` when given: the portal's scope; the
/// operator's CLI gives none). Returns the settled consultation and the event id when one was
/// emitted. Refused with `InvalidState` when the review is not pending.
pub fn settle(
    tx: &Connection,
    company: Option<&CompanyId>,
    id: &ConsultationId,
    settlement: &Settlement,
    acting: &Acting,
    now: DateTime<Utc>,
) -> Result<(Consultation, Option<String>), RepoError> {
    let accepted = settlement.decision == Decision::Accept;
    let entry = acting.entry(AuditAction::ReviewSettled, id.as_str(), now);
    let note = consultations::ReviewNote {
        accepted,
        by: &entry.actor,
        comment: settlement.comment.as_deref(),
    };
    let (company, consultation) = consultations::settle_review(tx, company, id, &note, now)?;
    audit::record(tx, &company, &entry)?;
    let workflow = workflows::get(tx, &company, &consultation.workflow_id)?;
    let event = WebhookEvent::VerificationReviewed {
        consultation: ConsultationOutcome::of(&consultation),
        review: Review {
            status: if accepted { ReviewStatus::Accepted } else { ReviewStatus::Rejected },
            reviewed_at: now,
        },
    };
    let event = workflows::emit_event(tx, &company, &workflow, event, None, now)?;
    Ok((consultation, event.map(|id| id.to_string())))
}

/// Who settled the review of a consultation of the company, when and why; none while it is
/// pending or when none was asked.
pub fn settled(c: &Connection, company: &CompanyId, id: &ConsultationId) -> Result<Option<Settled>, RepoError> {
    let row: Option<(Option<String>, Option<String>, Option<String>)> = c
        .query_row(
            "SELECT reviewed_at, reviewed_by, review_comment FROM consultations
             WHERE id = ?1 AND company_id = ?2 AND review_status IN ('accepted', 'rejected')",
            params![id.as_str(), company.as_str()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    row.and_then(|(at, by, comment)| at.map(|at| (at, by, comment)))
        .map(|(at, by, comment)| {
            Ok(Settled {
                by,
                at: stored_time(&at)?,
                comment,
            })
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{company, consultation_with_image, memory};

    fn pending(c: &Connection, company: &CompanyId, blob: &str) -> ConsultationId {
        let id = consultation_with_image(c, company, blob, Utc::now()).unwrap();
        c.execute("UPDATE consultations SET review_status = 'pending' WHERE id = ?1", [id.as_str()])
            .unwrap();
        id
    }

    fn audit_rows(c: &Connection, company: &CompanyId) -> Vec<(String, String, Option<String>)> {
        let mut stmt = c
            .prepare("SELECT action, target, actor_email FROM audit_log WHERE company_id = ?1 ORDER BY id")
            .unwrap();
        let rows = stmt
            .query_map([company.as_str()], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap();
        rows.collect::<Result<_, _>>().unwrap()
    }

    #[test]
    fn a_rejection_needs_a_comment_and_blank_is_none() {
        assert!(matches!(
            Settlement::new(Decision::Reject, Some("   ")),
            Err(RepoError::Invalid { field: "comment", .. })
        ));
        assert!(Settlement::new(Decision::Reject, None).is_err());
        assert!(Settlement::new(Decision::Accept, Some(&"x".repeat(COMMENT_MAX + 1))).is_err());
        let accept = Settlement::new(Decision::Accept, Some("  ")).unwrap();
        assert_eq!(accept.comment, None);
        let reject = Settlement::new(Decision::Reject, Some(" photo floue ")).unwrap();
        assert_eq!(reject.comment.as_deref(), Some("photo floue"));
    }

    #[test]
    fn settling_records_who_when_and_why_with_its_audit_row_once() {
        let c = memory();
        let co = company(&c);
        let id = pending(&c, &co, "b1");
        let acting = Acting {
            actor: audit::Actor::Member {
                id: domain::ids::MemberId::generate(Utc::now()),
                email: "rev@example.fr".parse().unwrap(),
            },
            ip: Some("127.0.0.1".into()),
        };
        let now = Utc::now();
        let accept = Settlement::new(Decision::Accept, Some("vu au guichet")).unwrap();
        assert!(settled(&c, &co, &id).unwrap().is_none(), "pending: nothing settled yet");
        let (consultation, event) = settle(&c, Some(&co), &id, &accept, &acting, now).unwrap();
        assert_eq!(consultation.review_status, Some(ReviewStatus::Accepted));
        assert_eq!(event, None, "no webhook URL on the default workflow");
        let kept = settled(&c, &co, &id).unwrap().expect("settled");
        assert_eq!(kept.by.as_deref(), Some("rev@example.fr"));
        assert_eq!(kept.comment.as_deref(), Some("vu au guichet"));
        assert_eq!(domain::time::format(kept.at), domain::time::format(now));
        assert_eq!(
            audit_rows(&c, &co),
            [("review.settle".to_owned(), id.to_string(), Some("rev@example.fr".to_owned()))]
        );

        // Not pending any more: refused, nothing more written.
        let again = settle(&c, Some(&co), &id, &accept, &Acting::operator(), now);
        assert!(matches!(again, Err(RepoError::InvalidState(_))), "{again:?}");
        assert_eq!(audit_rows(&c, &co).len(), 1);
    }

    #[test]
    fn another_company_cannot_settle_and_the_operator_is_named() {
        let c = memory();
        let (a, b) = (company(&c), company(&c));
        let id = pending(&c, &a, "b1");
        let reject = Settlement::new(Decision::Reject, Some("illisible")).unwrap();
        let other = settle(&c, Some(&b), &id, &reject, &Acting::operator(), Utc::now());
        assert!(matches!(other, Err(RepoError::NotFound)), "{other:?}");
        let (consultation, _) = settle(&c, None, &id, &reject, &Acting::operator(), Utc::now()).unwrap();
        assert_eq!(consultation.review_status, Some(ReviewStatus::Rejected));
        assert_eq!(settled(&c, &a, &id).unwrap().unwrap().by.as_deref(), Some("operator"));
        assert!(settled(&c, &b, &id).unwrap().is_none(), "scoped to the company");
    }

    #[test]
    fn the_queue_is_oldest_first_in_keyset_pages_on_its_index() {
        let c = memory();
        let (a, b) = (company(&c), company(&c));
        let ids: Vec<ConsultationId> = (0..5).map(|n| pending(&c, &a, &format!("a{n}"))).collect();
        pending(&c, &b, "b0");
        consultation_with_image(&c, &a, "settled", Utc::now()).unwrap();
        let (first, next) = consultations::pending_page(&c, &a, None, 3).unwrap();
        assert_eq!(first.iter().map(|c| c.id.clone()).collect::<Vec<_>>(), ids[..3]);
        let (second, last) = consultations::pending_page(&c, &a, next, 3).unwrap();
        assert_eq!(second.iter().map(|c| c.id.clone()).collect::<Vec<_>>(), ids[3..]);
        assert_eq!(last, None);

        let plan: Vec<String> = c
            .prepare(&format!("EXPLAIN QUERY PLAN SELECT id {}", consultations::PENDING_PAGE))
            .unwrap()
            .query_map(params![a.as_str(), 0, 10], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(plan.len(), 1, "{plan:?}");
        assert!(
            plan[0].starts_with("SEARCH consultations USING INDEX reviews_pending (company_id=? AND seq>?)"),
            "{plan:?}"
        );
    }
}
