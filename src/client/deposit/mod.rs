//! `sceau client deposit DIR --category …`: every file of a folder deposited as a batch document,
//! in batches of at most 200 opened one at a time, resumable after an interruption from a state
//! file, every POST under an idempotency key; then a report of each file's item status, verdict,
//! decision and consultation, as CSV or JSON.
//!
//! The steps: list the folder (`files`), open or resume the state (`state`), deposit (`upload`),
//! read the outcome, waiting for it with `--wait` (`wait`), write the report (`report`); the bars
//! (`progress`) show it, and `retry` mends what a retry can.

mod files;
mod progress;
mod report;
mod retry;
mod state;
mod upload;
mod wait;

use super::api::{Answer, Api, ClientError};
use crate::output;
use files::FilesError;
use progress::Progress;
use report::Row;
use state::{Outcome, State, StateError};
use std::collections::HashMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct DepositArgs {
    /// The folder: each regular file directly in it (hidden ones aside) is one document, its name
    /// the document's externalRef.
    dir: PathBuf,
    /// The documents' category.
    #[arg(long, value_enum)]
    category: Category,
    /// Wait until every batch is processed, and report each document's verdict and decision.
    #[arg(long)]
    wait: bool,
    /// Write the report there instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The report as a JSON array instead of CSV.
    #[arg(long)]
    json: bool,
    /// The state file that makes the run resumable (default: DIR/.sceau-deposit.jsonl).
    #[arg(long)]
    state: Option<PathBuf>,
    /// How long to wait while a limit of the company holds (400 non-purged documents, 3 open
    /// batches) before giving up, e.g. 90s, 10m, 1h.
    #[arg(long, default_value = "10m", value_parser = parse_duration)]
    quota_wait: Duration,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Category {
    Identite,
    Administratif,
}

impl Category {
    fn as_str(self) -> &'static str {
        match self {
            Category::Identite => "identite",
            Category::Administratif => "administratif",
        }
    }
}

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum DepositError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error(transparent)]
    Files(#[from] FilesError),
    #[error(transparent)]
    State(#[from] StateError),
    #[error("{what}: no answer to use after {tries} tries (last: {last})")]
    GaveUp { what: String, tries: u32, last: String },
    #[error("{what}: the service answered {status} {body}")]
    Refused { what: String, status: u16, body: String },
    #[error("{what}: {why}")]
    Unexpected { what: String, why: String },
    #[error("gave up after {}: {why} ({code})", show_duration(*.waited))]
    LimitWait { why: String, code: String, waited: Duration },
    #[error("{source}; the run can be resumed: run the same command again (state in {state})")]
    Resumable { source: Box<DepositError>, state: PathBuf },
    #[error("cannot write the report to {path}: {why}")]
    Report { path: String, why: String },
}

impl DepositError {
    fn refused(what: &str, answer: &Answer) -> DepositError {
        DepositError::Refused {
            what: what.to_owned(),
            status: answer.status,
            body: answer.body.to_string(),
        }
    }
}

pub async fn run(args: DepositArgs) -> ExitCode {
    match execute(args).await {
        Ok(code) => code,
        Err(e) => output::fail(&e.to_string()),
    }
}

async fn execute(args: DepositArgs) -> Result<ExitCode, DepositError> {
    let started = Instant::now();
    let state_path = args.state.clone().unwrap_or_else(|| args.dir.join(state::DEFAULT_NAME));
    let skipped: Vec<PathBuf> = std::iter::once(state_path.clone()).chain(args.out.clone()).collect();
    let names = files::list(&args.dir, &skipped)?;
    let api = Api::from_env()?;
    let mut state = State::open(&state_path, args.category.as_str(), &names)?;
    let resumable = |source: DepositError| DepositError::Resumable {
        source: Box::new(source),
        state: state_path.clone(),
    };
    let mut progress = Progress::new(names.len(), state.settled());
    if state.resumed {
        progress.note(&format!(
            "resuming run {} ({}): {} of {} files already done",
            state.header.run,
            state.path().display(),
            state.settled(),
            names.len()
        ));
    }
    let deposited = upload::Upload::new(&api, &args.dir, &mut state, &progress, args.quota_wait)
        .run()
        .await;
    deposited.map_err(resumable)?;
    progress.deposits_done();

    let batch_ids: Vec<String> = state.batches.iter().filter(|b| b.deposited > 0).map(|b| b.id.clone()).collect();
    let (batches, findings) = if args.wait {
        let batches = wait::until_over(&api, &batch_ids, &mut progress).await.map_err(resumable)?;
        let analysed = batches.iter().flat_map(|b| &b.items).filter_map(|i| i.consultation_id.clone());
        let findings = wait::findings(&api, analysed.collect()).await.map_err(resumable)?;
        (batches, findings)
    } else {
        (wait::read(&api, &batch_ids).await.map_err(resumable)?, HashMap::new())
    };
    progress.finish();
    let rows = rows(&state, &batches, &findings);
    write_report(&rows, args.out.as_ref(), args.json)?;

    let unfinished = batches.iter().filter(|b| b.status != "ended").count();
    let batches_word = if batch_ids.len() == 1 { "batch" } else { "batches" };
    eprintln!(
        "{} in {} {batches_word}, {}",
        report::counts(&rows),
        batch_ids.len(),
        show_duration(started.elapsed())
    );
    let refused = rows.iter().filter(|r| r.status == report::REFUSED).count();
    if refused > 0 {
        return Ok(output::fail(&format!("{refused} file(s) refused: their error is in the report")));
    }
    if args.wait && unfinished > 0 {
        return Ok(output::fail(&format!("{unfinished} batch(es) canceled or expired before the end")));
    }
    Ok(ExitCode::SUCCESS)
}

/// One row per file of the run, in its order.
fn rows(state: &State, batches: &[wait::BatchView], findings: &HashMap<String, wait::Findings>) -> Vec<Row> {
    let items: HashMap<&str, &wait::ItemView> = batches.iter().flat_map(|b| &b.items).map(|i| (i.id.as_str(), i)).collect();
    let files = state.header.files.iter().enumerate();
    files
        .map(|(index, file)| {
            let mut row = Row {
                file: file.clone(),
                ..Row::default()
            };
            match state.outcomes.get(&index) {
                Some(Outcome::Deposited { k, item }) => {
                    row.batch_id = state.batches[*k].id.clone();
                    row.item_id = item.clone();
                    let view = items.get(item.as_str());
                    row.status = view.map_or("unknown", |v| v.status.as_str()).to_owned();
                    row.error = view.and_then(|v| v.error.clone()).unwrap_or_default();
                    row.consultation_id = view.and_then(|v| v.consultation_id.clone()).unwrap_or_default();
                    if let Some(found) = findings.get(&row.consultation_id) {
                        row.verdict = found.verdict.clone().unwrap_or_default();
                        row.decision = found.decision.clone().unwrap_or_default();
                    }
                }
                Some(Outcome::Refused { code }) => {
                    row.status = report::REFUSED.to_owned();
                    row.error = code.clone();
                }
                None => row.status = "not_deposited".to_owned(),
            }
            row
        })
        .collect()
}

fn write_report(rows: &[Row], out: Option<&PathBuf>, json: bool) -> Result<(), DepositError> {
    let path = out.map_or_else(|| "stdout".to_owned(), |p| p.display().to_string());
    let failed = |why: String| DepositError::Report { path: path.clone(), why };
    let mut buffer = Vec::new();
    if json {
        report::write_json(rows, &mut buffer).map_err(|e| failed(e.to_string()))?;
    } else {
        report::write_csv(rows, &mut buffer).map_err(|e| failed(e.to_string()))?;
    }
    match out {
        Some(out) => std::fs::write(out, &buffer).map_err(|e| failed(e.to_string())),
        // A reader that closes early (`| head`) is not an error of the command.
        None => {
            let _ = std::io::stdout().lock().write_all(&buffer);
            Ok(())
        }
    }
}

/// `500ms`, `90s`, `10m`, `1h`; a bare number is seconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration like 90s, 10m or 1h"))?;
    let millis = match unit.trim() {
        "ms" => 1,
        "" | "s" => 1_000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        other => return Err(format!("unknown unit {other:?}: use ms, s, m or h")),
    };
    Ok(Duration::from_millis(number.saturating_mul(millis)))
}

fn show_duration(duration: Duration) -> String {
    let seconds = duration.as_secs_f64();
    if seconds < 120.0 {
        format!("{seconds:.1} s")
    } else {
        format!("{:.1} min", seconds / 60.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_file_gets_its_row_from_the_state_the_items_and_the_findings() {
        let dir = std::env::temp_dir().join(format!("sceau-rows-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let names: Vec<String> = ["a.png", "b.txt", "c.png"].map(str::to_owned).to_vec();
        let mut state = State::open(&dir.join(state::DEFAULT_NAME), "identite", &names).unwrap();
        for event in [
            state::Event::BatchCreated {
                k: 0,
                id: "BAT-1".into(),
                first: 0,
            },
            state::Event::Deposited {
                index: 0,
                k: 0,
                item: "BTI-a".into(),
            },
            state::Event::Refused {
                index: 1,
                code: "invalid_document".into(),
            },
            state::Event::Deposited {
                index: 2,
                k: 0,
                item: "BTI-c".into(),
            },
        ] {
            state.record(event).unwrap();
        }
        let item = |id: &str, status: &str, consultation: Option<&str>, error: Option<&str>| wait::ItemView {
            id: id.into(),
            status: status.into(),
            consultation_id: consultation.map(str::to_owned),
            error: error.map(str::to_owned),
        };
        let batch = wait::BatchView {
            id: "BAT-1".into(),
            status: "ended".into(),
            counts: wait::Counts::default(),
            items: vec![
                item("BTI-c", "errored", None, Some("unreadable_document")),
                item("BTI-a", "succeeded", Some("CSL-a"), None),
            ],
        };
        let findings = HashMap::from([(
            "CSL-a".to_owned(),
            wait::Findings {
                verdict: Some("conforme".into()),
                decision: None,
            },
        )]);
        let rows = rows(&state, &[batch], &findings);
        let fields: Vec<[&str; 6]> = rows
            .iter()
            .map(|r| [&*r.file, &r.batch_id, &r.item_id, &r.status, &r.error, &r.verdict])
            .collect();
        assert_eq!(
            fields,
            [
                ["a.png", "BAT-1", "BTI-a", "succeeded", "", "conforme"],
                ["b.txt", "", "", "refused", "invalid_document", ""],
                ["c.png", "BAT-1", "BTI-c", "errored", "unreadable_document", ""],
            ]
        );
        assert_eq!(rows[0].consultation_id, "CSL-a");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn durations_read_with_their_unit() {
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("45"), Ok(Duration::from_secs(45)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("3d").is_err());
    }
}
