//! The engine as workers run it: each document is analysed in a sandbox child (see
//! `common::sandbox`), so a file that exhausts memory or time ends as a finding on that document,
//! never as a dead worker. The child runs the very same [`BuiltinEngine`], up to its [`Draft`]; the
//! checks that go on the network (the online register, the external service, and its token) stay
//! with the worker, since the child has no network ([`OnlineChecks`]).

use super::builtin::{Draft, OnlineChecks};
use super::engine::{Engine, EngineError};
use super::twoddoc::trust_list;
use super::{BuiltinEngine, EngineOptions};
use async_trait::async_trait;
use common::config::Config;
use common::sandbox::protocol::{Request, Response};
use common::sandbox::{child, Sandbox, SandboxError, Task};
use domain::analysis::{AnalysisInput, AnalysisReport};
use domain::vocabulary::DocumentCategory;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How much later than its parent's deadline the child's own engine timer would fire: never first,
/// since the child's answer would leave its analysis thread running while the parent moved on.
const CHILD_TIMER_SLACK: Duration = Duration::from_secs(3600);

/// One document to analyse; the files follow as front, then back and selfie when present.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct AnalyseTask {
    pub category: DocumentCategory,
    pub back: bool,
    pub selfie: bool,
    /// The customer consented to the comparison of the selfie with the document.
    #[serde(default)]
    pub biometric_consent: bool,
}

impl Task for AnalyseTask {
    const NAME: &'static str = "analyse";
    type Output = Result<Draft, EngineError>;
}

/// The worker's engine: [`BuiltinEngine`] behind the sandbox, then the online checks.
pub struct SandboxedEngine {
    sandbox: Sandbox,
    deadline: Duration,
    online: Arc<OnlineChecks>,
}

impl SandboxedEngine {
    /// `timeout` is the longest analysis of one document in its child, which is killed then.
    pub fn new(sandbox: Sandbox, timeout: Duration, online: Arc<OnlineChecks>) -> Self {
        Self {
            sandbox,
            deadline: timeout,
            online,
        }
    }
}

/// The settings a child that analyses reads, by their variable names: those of the offline
/// engine, from the worker's configuration (its file and flags included). The online register's
/// URL, the external service's and its token are not among them: the worker keeps those.
pub fn child_settings(config: &Config) -> Vec<(String, OsString)> {
    let absolute = |path: &PathBuf| std::path::absolute(path).unwrap_or_else(|_| path.clone()).into_os_string();
    let mut settings = vec![
        ("SCEAU_DATA_DIR".to_owned(), absolute(&config.data_dir)),
        ("SCEAU_TESSERACT".to_owned(), config.tesseract.clone().into_os_string()),
        (
            "SCEAU_ANALYSIS_TIMEOUT_SECONDS".to_owned(),
            config.analysis_timeout.as_secs().to_string().into(),
        ),
        ("SCEAU_ACCEPT_TEST_CA".to_owned(), config.accept_test_ca.to_string().into()),
        ("SCEAU_FACE_MATCH".to_owned(), config.face_match.to_string().into()),
    ];
    if let Some(dir) = &config.trust_dir {
        settings.push(("SCEAU_TRUST_DIR".to_owned(), absolute(dir)));
    }
    if let Some(file) = &config.issuer_register_file {
        settings.push(("SCEAU_ISSUER_REGISTER_FILE".to_owned(), absolute(file)));
    }
    settings
}

/// What a child that analyses may read beside the system's files (see
/// `common::sandbox::isolation::landlock`): the imported trust list's folder of the data directory
/// (nothing else of it), the operator's certificates and register, and the OCR program when it is
/// not a system one. Read-only.
pub fn readable_paths(config: &Config) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = trust_list::imported_path(&config.data_dir)
        .parent()
        .map(PathBuf::from)
        .into_iter()
        .collect();
    paths.extend(config.trust_dir.clone());
    paths.extend(config.issuer_register_file.clone());
    if config.tesseract.components().count() > 1 {
        paths.push(config.tesseract.clone());
    }
    paths.extend(std::env::var_os("TESSDATA_PREFIX").map(PathBuf::from));
    paths
}

#[async_trait]
impl Engine for SandboxedEngine {
    async fn analyse(&self, input: AnalysisInput) -> Result<AnalysisReport, EngineError> {
        let task = AnalyseTask {
            category: input.category,
            back: input.back.is_some(),
            selfie: input.selfie.is_some(),
            biometric_consent: input.biometric_consent,
        };
        let files: Vec<&[u8]> = std::iter::once(input.front.as_slice())
            .chain(input.back.as_deref())
            .chain(input.selfie.as_deref())
            .collect();
        let draft = match self.sandbox.run(&task, &files, self.deadline).await {
            Ok(result) => result?,
            Err(error) => return Err(over_limits(error)),
        };
        Ok(self.online.finish(draft, &input).await)
    }

    fn name(&self) -> &'static str {
        "builtin"
    }
}

/// A document that kills its child would kill the next one too: it is the document's finding
/// (permanent, never retried); a sandbox that cannot serve at all is worth another try, and a
/// child starved of CPU by an overloaded machine another delivery, later.
fn over_limits(error: SandboxError) -> EngineError {
    match error {
        SandboxError::TimedOut(_) | SandboxError::LimitExceeded(_) => {
            EngineError::Unsupported(format!("the document exceeds the analysis limits of memory and time ({error})"))
        }
        SandboxError::Unavailable(_) => EngineError::Failure(error.to_string()),
        SandboxError::Starved(_) | SandboxError::Busy(_) => EngineError::Overloaded(error.to_string()),
    }
}

/// The child's analyser: builds the engine from the settings its parent handed it on the first
/// document (or at its start), then drafts the report of each one it is sent.
pub struct ChildAnalyser {
    runtime: tokio::runtime::Runtime,
    config: Config,
    engine: Option<BuiltinEngine>,
}

impl ChildAnalyser {
    pub fn new(config: Config) -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        Ok(Self {
            runtime,
            config,
            engine: None,
        })
    }

    /// Answers one `analyse` request.
    pub fn answer(&mut self, request: Request) -> Response {
        let engine = match self.engine() {
            Ok(engine) => engine.clone(),
            Err(message) => return Response::Refused(message),
        };
        let runtime = &self.runtime;
        child::answer::<AnalyseTask>(request, |task, files| {
            let input = input_from(task, files)?;
            runtime.block_on(engine.draft(input))
        })
    }

    /// Builds the engine now, before the child announces itself ready.
    pub fn prepare(&mut self) -> Result<(), String> {
        self.engine().map(|_| ())
    }

    fn engine(&mut self) -> Result<&BuiltinEngine, String> {
        if self.engine.is_none() {
            let mut options = EngineOptions::from_config(&self.config);
            options.timeout += CHILD_TIMER_SLACK;
            // The parent built the same engine at start and logged its warnings once.
            let engine = tracing::subscriber::with_default(tracing::subscriber::NoSubscriber::default(), || BuiltinEngine::build(options))
                .map_err(|e| e.to_string())?;
            self.engine = Some(engine);
        }
        self.engine.as_ref().ok_or_else(|| "no engine".to_owned())
    }
}

fn input_from(task: AnalyseTask, files: Vec<Vec<u8>>) -> Result<AnalysisInput, EngineError> {
    let expected = 1 + usize::from(task.back) + usize::from(task.selfie);
    if files.len() != expected {
        return Err(EngineError::Failure(format!("{} files sent for {expected}", files.len())));
    }
    let mut files = files.into_iter();
    let front = files.next().unwrap_or_default();
    let back = if task.back { files.next() } else { None };
    let selfie = if task.selfie { files.next() } else { None };
    Ok(AnalysisInput {
        category: task.category,
        front,
        back,
        selfie,
        biometric_consent: task.biometric_consent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_the_documents_finding_and_an_absent_sandbox_is_retried() {
        let timed_out = over_limits(SandboxError::TimedOut(Duration::from_secs(3)));
        assert!(!timed_out.is_retryable());
        assert_eq!(timed_out.item_error(), domain::vocabulary::ItemError::UnsupportedDocument);
        assert!(!over_limits(SandboxError::LimitExceeded("SIGABRT".into())).is_retryable());
        assert!(over_limits(SandboxError::Unavailable("gone".into())).is_retryable());
        let starved = over_limits(SandboxError::Starved(Duration::from_secs(240)));
        assert!(matches!(starved, EngineError::Overloaded(_)) && !starved.is_retryable());
    }

    #[test]
    fn files_come_back_in_their_places() {
        let task = AnalyseTask {
            category: DocumentCategory::Identite,
            back: false,
            selfie: true,
            biometric_consent: true,
        };
        let input = input_from(task, vec![b"front".to_vec(), b"selfie".to_vec()]).unwrap();
        assert_eq!(input.front, b"front");
        assert_eq!(input.back, None);
        assert_eq!(input.selfie.as_deref(), Some(&b"selfie"[..]));
        assert!(input.biometric_consent);
        assert!(input_from(task, vec![b"front".to_vec()]).is_err());
    }
}
