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
use report::{FileStatus, Row};
use state::{State, StateError};
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
    /// A key still claimed after 10 s was claimed by a request the service never finished
    /// (it crashed or was restarted mid-request, with the work perhaps done); it frees such a key
    /// after 10 minutes, and a resumed run then gets the first answer or does the step.
    #[error("{what}: the service still holds this step's idempotency key, from a request it did not finish (restarted mid-request?); it frees it within 10 minutes")]
    KeyHeld { what: String },
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
    let mut progress = Progress::new(names.len(), state.settled());
    let outcome = deposit_and_read(&args, &api, &mut state, &mut progress).await;
    let (batches, findings) = outcome.map_err(|source| DepositError::Resumable {
        source: Box::new(source),
        state: state_path,
    })?;
    progress.finish();
    let rows = report::rows(&state, &batches, &findings);
    write_report(&rows, args.out.as_ref(), args.json)?;
    eprintln!(
        "{} in {}, {}",
        report::counts(&rows),
        count(batches.len(), "batch", "batches"),
        show_duration(started.elapsed())
    );
    Ok(exit_code(&rows, &batches, args.wait))
}

/// The run's steps up to the report: every file deposited, then the batches read (followed to
/// their end with `--wait`, and the findings of each analysed document read).
async fn deposit_and_read(
    args: &DepositArgs,
    api: &Api,
    state: &mut State,
    progress: &mut Progress,
) -> Result<(Vec<wait::BatchView>, HashMap<String, wait::Findings>), DepositError> {
    if state.resumed {
        progress.note(&format!(
            "resuming run {} ({}): {} of {} files already done",
            state.header.run,
            state.path().display(),
            state.settled(),
            state.header.files.len()
        ));
    }
    upload::Upload::new(api, &args.dir, state, progress, args.quota_wait).run().await?;
    progress.deposits_done();
    let batch_ids: Vec<String> = state.batches.iter().filter(|b| b.deposited > 0).map(|b| b.id.clone()).collect();
    if !args.wait {
        return Ok((wait::read(api, &batch_ids).await?, HashMap::new()));
    }
    let batches = wait::until_over(api, &batch_ids, progress).await?;
    let analysed = batches.iter().flat_map(|b| &b.items).filter_map(|i| i.consultation_id.clone());
    let findings = wait::findings(api, analysed.collect()).await?;
    Ok((batches, findings))
}

/// 0 when every file was deposited and, with `--wait`, every batch ended; 1 with the reason
/// otherwise (the report is written either way).
fn exit_code(rows: &[Row], batches: &[wait::BatchView], waited: bool) -> ExitCode {
    let refused = rows.iter().filter(|r| r.status == FileStatus::Refused).count();
    if refused > 0 {
        return output::fail(&format!("{refused} file(s) refused: their error is in the report"));
    }
    let unfinished = batches.iter().filter(|b| b.status != wait::BatchStatus::Ended).count();
    if waited && unfinished > 0 {
        return output::fail(&format!("{unfinished} batch(es) canceled or expired before the end"));
    }
    ExitCode::SUCCESS
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
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
        None => match std::io::stdout().lock().write_all(&buffer) {
            // A reader that closes early (`| head`) is not an error of the command.
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(failed(e.to_string())),
            _ => Ok(()),
        },
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
