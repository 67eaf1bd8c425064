//! The deposits: the folder's files in order, into batches of at most 200 filled one at a time
//! (created, filled, submitted, then the next), each step recorded in the state file once the
//! service took it. Limits of the company are waited out; a file the service refuses is recorded
//! as refused and the others go on.

use super::files::{self, MAX_DOCUMENT_BYTES};
use super::progress::Progress;
use super::retry;
use super::state::{Event, Key, State};
use super::wait::{self, BatchStatus};
use super::DepositError;
use crate::client::api::{Answer, Api, ErrorCode};
use base64::Engine as _;
use serde::Serialize;
use std::path::Path;
use std::time::{Duration, Instant};

/// Documents in one batch (the service's limit).
pub const BATCH_SIZE: usize = 200;
/// The longest pause between two tries while a limit of the company holds.
const LONGEST_LIMIT_PAUSE: Duration = Duration::from_secs(10);

/// The body of a deposit.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Deposit<'a> {
    document_category: &'a str,
    document: &'a str,
    external_ref: &'a str,
}

/// Why a file is refused before anything is sent: the service would refuse it, or cannot have it.
#[derive(Clone, Copy)]
enum LocalRefusal {
    /// Over the service's 10 MB.
    TooLarge,
    /// Gone or unreadable since the folder was listed.
    Unreadable,
}

impl LocalRefusal {
    /// The code recorded for it, in the state file and the report.
    fn code(self) -> &'static str {
        match self {
            LocalRefusal::TooLarge => "document_too_large",
            LocalRefusal::Unreadable => "unreadable_file",
        }
    }
}

impl Limited {
    fn now() -> Self {
        Limited {
            since: Instant::now(),
            tries: 0,
            none_in_progress: false,
        }
    }
}

/// What one try to deposit a file came to.
enum Step {
    /// The file has its outcome (deposited or refused): on to the next.
    Settled,
    /// The batch was closed on the way (full, or submitted for a limit): the file goes in the next.
    BatchClosed,
    /// A limit of the company holds: try again after the pause.
    Wait(Duration),
}

/// One run's deposits, from where its state stands.
pub struct Upload<'a> {
    api: &'a Api,
    dir: &'a Path,
    state: &'a mut State,
    progress: &'a Progress,
    /// How long a limit of the company (documents, volume, open batches) may hold before giving up.
    limit_wait: Duration,
    /// The limit of the company that holds, if one does.
    limited: Option<Limited>,
}

/// A limit of the company that holds, and what was seen of it.
struct Limited {
    since: Instant,
    /// Tries it refused.
    tries: u32,
    /// Its last refusal came while no earlier batch of the run was analysed.
    none_in_progress: bool,
}

impl<'a> Upload<'a> {
    pub fn new(api: &'a Api, dir: &'a Path, state: &'a mut State, progress: &'a Progress, limit_wait: Duration) -> Self {
        Upload {
            api,
            dir,
            state,
            progress,
            limit_wait,
            limited: None,
        }
    }

    /// Deposits every file the state has no outcome for, then closes the last batch.
    pub async fn run(mut self) -> Result<(), DepositError> {
        self.check_open_batch().await?;
        loop {
            let index = self.state.next_index();
            if index >= self.state.header.files.len() {
                break;
            }
            let k = match self.state.open_batch() {
                Some((k, batch)) if batch.deposited < BATCH_SIZE => k,
                Some((k, _)) => {
                    self.close(k, Close::Submit).await?;
                    continue;
                }
                None => match self.create_batch(index).await? {
                    Some(k) => k,
                    None => continue,
                },
            };
            match self.deposit(index, k).await? {
                Step::Settled => self.limited = None,
                Step::BatchClosed => {}
                Step::Wait(pause) => tokio::time::sleep(pause).await,
            }
        }
        self.progress.waiting("");
        match self.state.open_batch() {
            Some((k, batch)) if batch.deposited > 0 => self.close(k, Close::Submit).await,
            Some((k, _)) => self.close(k, Close::Cancel).await,
            None => Ok(()),
        }
    }

    /// On resume, the batch the state has open may have been submitted just before the run was
    /// killed: asked, so nothing is deposited into a closed batch.
    async fn check_open_batch(&mut self) -> Result<(), DepositError> {
        let Some((k, batch)) = self.state.open_batch() else {
            return Ok(());
        };
        if wait::read_one(self.api, &batch.id).await?.status != BatchStatus::Open {
            self.state.record(Event::Submitted { k })?;
        }
        Ok(())
    }

    /// Opens batch k, the next one, for files from `first`; None when a limit holds (after the pause).
    async fn create_batch(&mut self, first: usize) -> Result<Option<usize>, DepositError> {
        let k = self.state.batches.len();
        let external_ref = format!("sceau client deposit {} #{}", self.state.header.run, k + 1);
        let what = format!("opening batch #{}", k + 1);
        let body = json_body(&what, &serde_json::json!({ "externalRef": external_ref }))?;
        let key = self.state.key(Key::Batch(k));
        let answer = retry::post(self.api, "/api/v1/batches", Some(&body), &key, &what).await?;
        if answer.code() == Some(ErrorCode::TooManyOpenBatches) {
            let pause = self.limit(&answer, "3 batches of the company are open")?;
            tokio::time::sleep(pause).await;
            return Ok(None);
        }
        let id = success_id(&what, &answer)?;
        self.state.record(Event::BatchCreated { k, id, first })?;
        self.limited = None;
        Ok(Some(k))
    }

    /// One try at depositing file `index` into batch `k`.
    async fn deposit(&mut self, index: usize, k: usize) -> Result<Step, DepositError> {
        let name = self.state.header.files[index].clone();
        let what = format!("depositing {name}");
        let body = match self.deposit_body(&name, &what)? {
            Ok(body) => body,
            Err(refusal) => return self.refuse(index, refusal.code()),
        };
        let path = format!("/api/v1/batches/{}/documents", self.state.batches[k].id);
        let key = self.state.key(Key::Doc(index));
        let answer = retry::post(self.api, &path, Some(&body), &key, &what).await?;
        if answer.is_success() {
            let item = success_id(&what, &answer)?;
            return self.deposited(index, k, item);
        }
        self.not_taken(index, k, &what, &answer).await
    }

    /// The body that deposits file `name`, read only now; or why it is refused without sending it.
    fn deposit_body(&self, name: &str, what: &str) -> Result<Result<Vec<u8>, LocalRefusal>, DepositError> {
        let Ok(mut file) = files::open_inside(self.dir, name) else {
            return Ok(Err(LocalRefusal::Unreadable));
        };
        if file.metadata().is_ok_and(|m| m.len() > MAX_DOCUMENT_BYTES) {
            return Ok(Err(LocalRefusal::TooLarge));
        }
        let mut bytes = Vec::new();
        // The file may grow after it is measured: never read more than the service takes.
        let read = std::io::Read::read_to_end(&mut std::io::Read::take(&mut file, MAX_DOCUMENT_BYTES + 1), &mut bytes);
        if read.is_err() {
            return Ok(Err(LocalRefusal::Unreadable));
        }
        if bytes.len() as u64 > MAX_DOCUMENT_BYTES {
            return Ok(Err(LocalRefusal::TooLarge));
        }
        let document = base64::engine::general_purpose::STANDARD.encode(&bytes);
        drop(bytes);
        let deposit = Deposit {
            document_category: &self.state.header.category,
            document: &document,
            external_ref: name,
        };
        json_body(what, &deposit).map(Ok)
    }

    /// What a deposit the service did not take comes to: a limit waited out, the batch closed and
    /// the file kept for the next, or the file refused.
    async fn not_taken(&mut self, index: usize, k: usize, what: &str, answer: &Answer) -> Result<Step, DepositError> {
        match (answer.status, answer.code()) {
            (429, Some(code @ (ErrorCode::DocumentQuotaExceeded | ErrorCode::VolumeQuotaExceeded))) => {
                // While an earlier batch of the run is analysed, its documents free the limit as
                // they are purged: the batch waits with them and fills up. Once none is, what
                // this one holds must be processed to free anything: it is submitted as it is,
                // but only after one pause, since an ended batch's last documents are purged by
                // the service's next sweep, moments after the batch says it ended.
                if self.state.batches[k].deposited > 0 && self.nothing_else_will_free(k).await? {
                    self.close(k, Close::Submit).await?;
                }
                let why = match code {
                    ErrorCode::VolumeQuotaExceeded => "the company's pending file volume is at its limit",
                    _ => "the company holds 400 documents whose images are not yet purged",
                };
                Ok(Step::Wait(self.limit(answer, why)?))
            }
            (429, Some(ErrorCode::BatchFull)) => {
                self.close(k, Close::Submit).await?;
                Ok(Step::BatchClosed)
            }
            // Closed by someone else (canceled, expired): the file's key now answers that.
            (409, Some(ErrorCode::InvalidState)) => {
                self.state.record(Event::Submitted { k })?;
                self.refuse(index, "invalid_state")
            }
            // What is wrong with this file (or its key reused for other content).
            (400 | 413 | 422, _) => {
                let code = answer.error_code().map_or_else(|| answer.status.to_string(), str::to_owned);
                self.refuse(index, &code)
            }
            _ => Err(DepositError::refused(what, answer)),
        }
    }

    /// Whether the limit held over a pause with no earlier batch of the run being analysed (and
    /// still holds with none): only batch k's own documents can then free it.
    async fn nothing_else_will_free(&mut self, k: usize) -> Result<bool, DepositError> {
        let none_in_progress = !self.earlier_batch_in_progress(k).await?;
        let limited = self.limited.get_or_insert_with(Limited::now);
        let held_over_a_pause = none_in_progress && limited.none_in_progress;
        limited.none_in_progress = none_in_progress;
        Ok(held_over_a_pause)
    }

    /// Whether a batch of the run before batch k is still being analysed, as the service says.
    async fn earlier_batch_in_progress(&self, k: usize) -> Result<bool, DepositError> {
        for batch in self.state.batches[..k].iter().rev() {
            if wait::read_one(self.api, &batch.id).await?.status == BatchStatus::InProgress {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn deposited(&mut self, index: usize, k: usize, item: String) -> Result<Step, DepositError> {
        self.state.record(Event::Deposited { index, k, item })?;
        self.progress.waiting("");
        self.progress.deposited();
        Ok(Step::Settled)
    }

    fn refuse(&mut self, index: usize, code: &str) -> Result<Step, DepositError> {
        let name = &self.state.header.files[index];
        self.progress.note(&format!("{name}: refused ({code})"));
        self.state.record(Event::Refused {
            index,
            code: code.to_owned(),
        })?;
        self.progress.deposited();
        Ok(Step::Settled)
    }

    /// A limit of the company holds: the pause before the next try (its `Retry-After`, else a
    /// doubling backoff), or an error once it has held for longer than allowed.
    fn limit(&mut self, answer: &Answer, why: &str) -> Result<Duration, DepositError> {
        let Limited { since, tries, .. } = self.limited.get_or_insert_with(Limited::now);
        *tries += 1;
        if since.elapsed() >= self.limit_wait {
            return Err(DepositError::LimitWait {
                why: why.to_owned(),
                code: answer.error_code().unwrap_or_default().to_owned(),
                waited: self.limit_wait,
            });
        }
        self.progress.waiting(&format!("{why}: waiting"));
        let pause = answer
            .retry_after
            .unwrap_or_else(|| retry::backoff(*tries).min(LONGEST_LIMIT_PAUSE));
        let left = self.limit_wait.saturating_sub(since.elapsed());
        Ok(pause.min(left).max(Duration::from_millis(100)))
    }

    /// Closes batch k, recording it once the service took it (or had it closed already: a
    /// batch of the run closed by someone else takes no more deposits either way).
    async fn close(&mut self, k: usize, close: Close) -> Result<(), DepositError> {
        let id = self.state.batches[k].id.clone();
        let (what, path, key, event) = match close {
            Close::Submit => ("submitting batch", "submit", Key::Submit(k), Event::Submitted { k }),
            Close::Cancel => ("canceling the empty batch", "cancel", Key::Cancel(k), Event::Canceled { k }),
        };
        let what = format!("{what} {id}");
        let path = format!("/api/v1/batches/{id}/{path}");
        let answer = retry::post(self.api, &path, None, &self.state.key(key), &what).await?;
        if answer.is_success() || answer.code() == Some(ErrorCode::InvalidState) {
            return Ok(self.state.record(event)?);
        }
        Err(DepositError::refused(&what, &answer))
    }
}

/// How a batch of the run is closed.
#[derive(Clone, Copy)]
enum Close {
    /// Its documents go to processing.
    Submit,
    /// Left empty (every file meant for it refused): canceled, not left open for 24 h.
    Cancel,
}

/// `value` as a request body.
fn json_body(what: &str, value: &impl Serialize) -> Result<Vec<u8>, DepositError> {
    serde_json::to_vec(value).map_err(|e| DepositError::Unexpected {
        what: what.to_owned(),
        why: e.to_string(),
    })
}

/// The `id` of a 2xx answer.
fn success_id(what: &str, answer: &Answer) -> Result<String, DepositError> {
    match answer.body["id"].as_str() {
        Some(id) if answer.is_success() => Ok(id.to_owned()),
        _ => Err(DepositError::refused(what, answer)),
    }
}
