//! The history of a busy company for `scripts/bench --portal` (100,000 consultations over the last
//! 13 months) and `scripts/bench --list` (1,000,000), written in one transaction into the service's
//! database before it starts, through the store's own migrations and insert functions, so the rows
//! are the ones the service writes. Statements are prepared once and the transaction is not
//! flushed on the way: a million results in about half a minute.
//!
//! `cargo bench --bench portal_seed -- <database> <company id> [consultations]` prints one JSON
//! line: the ids the bench needs (a consultation, an external reference, a workflow).

use chrono::{DateTime, Duration, Utc};
use common::store::audit::{self, Actor, AuditEntry};
use common::store::{consultations, migrations, workflows, RepoError};
use domain::analysis::AnalysisReport;
use domain::catalogue::{Anomaly, AnomalyCode};
use domain::ids::{BatchId, BatchItemId, CompanyId, ConsultationId, EventId, VerificationId, WorkflowId};
use domain::model::WorkflowRules;
use domain::team::AuditAction;
use domain::vocabulary::{Decision, DocumentCategory, DocumentType, ReviewStatus, Verdict};
use rusqlite::{params, Connection};

/// Documents per batch, as the API allows at most.
const PER_BATCH: usize = 200;
/// Results waiting for a review: a few hundred, as a busy team leaves them.
const PENDING_REVIEWS: usize = 300;
/// One result in this many is `analyse_impossible`: the rare verdict a filter finds little of.
const RARE_EVERY: usize = 2_000;
/// One non-conforming result in this many is refused outright (about 0.5 % of all results).
const REFUSED_EVERY: u64 = 25;

/// A small deterministic generator: the same history on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn time(t: DateTime<Utc>) -> String {
    domain::time::format(t)
}

fn report(rng: &mut Rng, i: usize, category: DocumentCategory) -> AnalysisReport {
    let verdict = if i % RARE_EVERY == RARE_EVERY / 2 {
        Verdict::AnalyseImpossible
    } else {
        match rng.below(100) {
            0..=54 => Verdict::Conforme,
            55..=79 => Verdict::SansAnomalie,
            80..=91 => Verdict::NonConforme,
            _ => Verdict::Suspect,
        }
    };
    let anomalies = match verdict {
        Verdict::NonConforme | Verdict::Suspect => {
            vec![Anomaly::new(AnomalyCode::ALL[rng.below(AnomalyCode::ALL.len() as u64) as usize])]
        }
        _ => Vec::new(),
    };
    let identity = [DocumentType::CarteIdentite, DocumentType::Passeport, DocumentType::TitreSejour];
    let administrative = [DocumentType::JustificatifDomicile, DocumentType::Facture, DocumentType::Rib];
    let document_type = match (verdict, category) {
        (Verdict::AnalyseImpossible, _) => DocumentType::Inconnu,
        (_, DocumentCategory::Identite) => identity[rng.below(3) as usize],
        _ => administrative[rng.below(3) as usize],
    };
    AnalysisReport {
        verdict,
        document_type,
        document_country: Some("FRA".into()),
        anomalies,
        two_d_doc: None,
        holder_age: None,
        pages: 1,
        checks: vec![],
        face_match: None,
    }
}

/// The decision of the workflows' rules: refused outright only when a reject anomaly leaves no
/// doubt (one non-conforming result in [`REFUSED_EVERY`]), the rest to review, so `refuse` is the
/// rare decision a filter finds little of.
fn decision(rng: &mut Rng, verdict: Verdict) -> Decision {
    match verdict {
        Verdict::Conforme | Verdict::SansAnomalie => Decision::Conforme,
        Verdict::NonConforme if rng.below(REFUSED_EVERY) == 0 => Decision::Refuse,
        Verdict::NonConforme | Verdict::Suspect | Verdict::AnalyseImpossible => Decision::AVerifier,
    }
}

struct Seeded {
    consultation: ConsultationId,
    external_ref: String,
    workflow: WorkflowId,
}

fn seed(tx: &Connection, company: &CompanyId, total: usize, now: DateTime<Utc>) -> Result<Seeded, RepoError> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let start = now - Duration::days(395);
    let step = Duration::days(395).num_milliseconds() / total as i64;
    let rules = WorkflowRules::default();
    let journeys: Vec<_> = [
        ("Ouverture de compte", DocumentCategory::Identite),
        ("Renouvellement KYC", DocumentCategory::Identite),
        ("Justificatifs de domicile", DocumentCategory::Administratif),
    ]
    .into_iter()
    .map(|(name, category)| {
        Ok((
            workflows::create(
                tx,
                company,
                name,
                category,
                Some("https://hooks.example.com/sceau"),
                &rules,
                false,
                start,
            )?,
            category,
        ))
    })
    .collect::<Result<_, RepoError>>()?;
    let batch_workflow = workflows::default_batch(tx, company, DocumentCategory::Identite)?;
    // The pending reviews: a few hundred among the `a_verifier` results, spread over the history.
    let pending_every = total / PENDING_REVIEWS;
    let mut batch: Option<(BatchId, usize)> = None;
    let mut seeded = None;
    for i in 0..total {
        let at = start + Duration::milliseconds(step * i as i64);
        let id = ConsultationId::generate(at);
        let external_ref = format!("CLI-{i:06}");
        // Seven in ten from batches, the rest from customer journeys.
        let from_batch = rng.below(10) < 7;
        let (workflow, category) = if from_batch {
            (batch_workflow.clone(), DocumentCategory::Identite)
        } else {
            let (w, category) = &journeys[rng.below(3) as usize];
            (w.workflow.id.clone(), *category)
        };
        let report = report(&mut rng, i, category);
        let decision = decision(&mut rng, report.verdict);
        let review = (decision == Decision::AVerifier).then(|| {
            if i % pending_every < 40 && rng.below(2) == 0 {
                ReviewStatus::Pending
            } else if rng.below(4) == 0 {
                ReviewStatus::Rejected
            } else {
                ReviewStatus::Accepted
            }
        });
        let (mut item, mut verification) = (None, None);
        if from_batch {
            let (batch_id, position) = match batch.take() {
                Some((b, n)) if n < PER_BATCH => (b, n),
                _ => {
                    let b = BatchId::generate(at);
                    let ended = time(at + Duration::minutes(20));
                    tx.prepare_cached(
                        "INSERT INTO batches (id, company_id, external_ref, status, created_at, submitted_at, expires_at, ended_at)
                         VALUES (?1, ?2, ?3, 'ended', ?4, ?4, ?5, ?6)",
                    )?
                    .execute(params![
                        b.as_str(),
                        company.as_str(),
                        format!("LOT-{i:06}"),
                        time(at),
                        time(at + Duration::hours(24)),
                        ended
                    ])?;
                    (b, 0)
                }
            };
            // Settled long ago: its deposit files are gone, as the sweeper leaves them.
            let item_id = BatchItemId::generate(at);
            tx.prepare_cached(
                "INSERT INTO batch_items (id, batch_id, company_id, position, category, external_ref, status, consultation_id, front_blob, front_kind, bytes, created_at, finished_at, images_released_at)
                 VALUES (?1, ?2, ?3, ?4, 'identite', ?5, 'succeeded', ?6, NULL, 'png', 100000, ?7, ?7, ?7)",
            )?
            .execute(
                params![item_id.as_str(), batch_id.as_str(), company.as_str(), position as i64, external_ref, id.as_str(), time(at)],
            )?;
            batch = Some((batch_id, position + 1));
            item = Some(item_id);
        } else {
            let v = VerificationId::generate(at);
            tx.prepare_cached(
                "INSERT INTO verifications (id, company_id, workflow_id, external_ref, token_hash, token_sealed, status, consultation_id, expires_at, created_at, started_at, submitted_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, x'00', 'completed', ?6, ?7, ?8, ?8, ?8)",
            )?
            .execute(
                params![v.as_str(), company.as_str(), workflow.as_str(), external_ref, domain::ids::random_hex(64), id.as_str(), time(at + Duration::days(7)), time(at)],
            )?;
            verification = Some(v);
        }
        consultations::insert(
            tx,
            &consultations::NewConsultation {
                id: &id,
                company,
                workflow_id: &workflow,
                external_ref: Some(&external_ref),
                category,
                report: &report,
                decision: Some(decision),
                review_status: review,
                batch_item_id: item.as_ref().map(BatchItemId::as_str),
                verification_id: verification.as_ref().map(VerificationId::as_str),
                analyzed_at: at,
                now: at,
            },
        )?;
        if let Some(status) = review.filter(|r| *r != ReviewStatus::Pending) {
            tx.prepare_cached(
                "UPDATE consultations SET review_status = ?2, reviewed_at = ?3, reviewed_by = 'relecteur@bench.example', review_comment = 'Vu' WHERE id = ?1",
            )?
            .execute(
                params![id.as_str(), status.as_str(), time(at + Duration::hours(2))],
            )?;
        }
        if i == total / 2 {
            seeded = Some(Seeded {
                consultation: id.clone(),
                external_ref: external_ref.clone(),
                workflow: journeys[0].0.workflow.id.clone(),
            });
        }
    }
    // The deliveries of the last weeks (a few dead), and a few hundred audited actions.
    for i in 0..400 {
        let at = now - Duration::minutes(90 * i);
        let (w, _) = &journeys[i as usize % 3];
        let status = if i % 25 == 0 { "dead" } else { "delivered" };
        let event = EventId::generate(at);
        let body = format!(
            r#"{{"eventId":"{event}","type":"verification.completed","workflowId":"{}"}}"#,
            w.workflow.id
        );
        tx.execute(
            "INSERT INTO webhook_events (id, company_id, event_type, url, body, status, attempts, last_status_code, created_at, updated_at, workflow_id)
             VALUES (?1, ?2, 'verification.completed', 'https://hooks.example.com/sceau', ?3, ?4, 1, 200, ?5, ?5, ?6)",
            params![event.as_str(), company.as_str(), body, status, time(at), w.workflow.id.as_str()],
        )?;
        let actor = Actor::ApiKey {
            prefix: "sk_live_bench".into(),
        };
        let action = [
            AuditAction::ImageViewed,
            AuditAction::CertificateDownloaded,
            AuditAction::ImageDownloaded,
        ][i as usize % 3];
        audit::record(
            tx,
            company,
            &AuditEntry::new(action, format!("CSL-{i}"), &actor, Some("192.0.2.7".into()), at),
        )?;
    }
    seeded.ok_or(RepoError::NotFound)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let [database, company, rest @ ..] = args.as_slice() else {
        return Err("usage: portal_seed <database> <company id> [consultations]".into());
    };
    let total: usize = rest.first().map_or(Ok(100_000), |n| n.parse())?;
    let company: CompanyId = company.parse()?;
    let mut conn = Connection::open(database)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    migrations::apply(&mut conn)?;
    // A seed, not the service's writes: nothing to flush before the one commit, and the indexes
    // of a million rows kept in memory while they grow (the defaults spill them after 2 MB).
    conn.pragma_update(None, "synchronous", "OFF")?;
    conn.pragma_update(None, "cache_size", -1_048_576)?;
    conn.set_prepared_statement_cache_capacity(32);
    let began = std::time::Instant::now();
    let tx = conn.transaction()?;
    let seeded = seed(&tx, &company, total, Utc::now())?;
    // No ANALYZE: the service never gathers statistics, so its plans are the ones measured.
    tx.commit()?;
    println!(
        "{}",
        serde_json::json!({
            "consultations": total,
            "seconds": began.elapsed().as_secs_f64(),
            "consultation": seeded.consultation.as_str(),
            "externalRef": seeded.external_ref,
            "workflow": seeded.workflow.as_str(),
        })
    );
    Ok(())
}
