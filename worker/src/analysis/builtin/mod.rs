//! The engine that ships with Sceau. It reads each document for real: the 2D-Doc seal against the
//! ANTS trust list and the visible text, the MRZ from the pixels, the file's forensics, the issuer
//! in a company register, and optionally an external service for the selfie. One file per step;
//! this one only orders them and keeps the pixel work off the async runtime.

mod administrative;
mod doc_kind;
mod face;
mod file;
mod findings;
mod front_turn;
mod identity;
mod online;
mod page;
mod seal;
mod selfie;
mod unusable;
mod verdict;

#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::NaiveDate;
use common::config::Config;
use domain::analysis::{AnalysisInput, AnalysisReport};
use domain::vocabulary::{Anomaly, DocumentCategory};

use super::engine::{Engine, EngineError};
use super::external::{ExternalError, ExternalOptions};
use super::issuer::{IssuerRegister, RegisterError, RegisterOptions};
use super::text::ocr::{Ocr, OcrOptions};
use super::twoddoc::trust_list::{self, TrustListError};
use super::twoddoc::{TrustError, TrustOptions, TrustStore};
use findings::Findings;
use front_turn::FrontTurn;
use online::Pending;
pub use online::{Draft, OnlineChecks};

/// How to build the engine; [`EngineOptions::from_config`] reads the operator's settings.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    pub trust: TrustOptions,
    pub register: RegisterOptions,
    pub ocr: OcrOptions,
    pub external: Option<ExternalOptions>,
    /// Longest analysis of one document.
    pub timeout: Duration,
    /// The date expiry and age are judged at; `None` is today (UTC). Tests pin it.
    pub reference_date: Option<NaiveDate>,
    /// The data directory, where an imported ANTS trust list replaces the shipped one; `None`: the shipped one.
    pub data_dir: Option<PathBuf>,
    /// Look for the portrait of identity documents and compare selfies with it (`SCEAU_FACE_MATCH`).
    pub face_match: bool,
}

impl EngineOptions {
    pub fn from_config(config: &Config) -> Self {
        Self {
            trust: TrustOptions::from(config),
            register: RegisterOptions {
                extra_file: config.issuer_register_file.clone(),
                online_url: config.issuer_register_url.clone(),
                online_timeout: Duration::from_secs(5),
            },
            ocr: OcrOptions {
                program: config.tesseract.clone(),
                ..OcrOptions::default()
            },
            external: config.external_engine_url.as_ref().map(|url| ExternalOptions {
                url: url.clone(),
                token: config.external_engine_token.as_ref().map(|t| t.expose().to_owned()),
                timeout: config.external_engine_timeout,
                attempts: 3,
            }),
            timeout: config.analysis_timeout,
            reference_date: None,
            data_dir: Some(config.data_dir.clone()),
            face_match: config.face_match,
        }
    }
}

/// Why the engine could not be built at start.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Trust(#[from] TrustError),
    #[error(transparent)]
    TrustList(#[from] TrustListError),
    #[error(transparent)]
    Register(#[from] RegisterError),
    #[error("the external analysis service is misconfigured: {0}")]
    External(#[from] ExternalError),
}

/// The built-in engine; cheap to clone, shared by every job slot.
#[derive(Clone)]
pub struct BuiltinEngine {
    parts: Arc<Parts>,
}

struct Parts {
    trust: TrustStore,
    /// The offline register: the online one is [`OnlineChecks`]'.
    register: IssuerRegister,
    ocr: Ocr,
    online: OnlineChecks,
    timeout: Duration,
    reference_date: Option<NaiveDate>,
    face_match: bool,
}

/// What the pixel work gives, before the checks that may wait on the network.
enum Reading {
    Administrative(administrative::PageReading),
    Identity(Box<identity::SidesReading>, face::FaceReading),
    /// An image no check can start on (see [`unusable::check`]): the point of attention that says why.
    Unusable(Anomaly),
}

impl BuiltinEngine {
    /// Loads the trust list and the register, and probes the OCR program (its absence is logged:
    /// photographed documents then cannot have their text compared with their seal).
    pub fn build(options: EngineOptions) -> Result<Self, BuildError> {
        let list = trust_list::in_use(options.data_dir.as_deref())?;
        let trust = TrustStore::build_with_list(&options.trust, &list)?;
        for warning in trust.warnings() {
            tracing::warn!(warning = warning.as_str(), "trust store");
        }
        let register = IssuerRegister::build(&RegisterOptions {
            online_url: None,
            ..options.register.clone()
        })?;
        let online = OnlineChecks::build(&options)?;
        let ocr = Ocr::new(options.ocr);
        if let Err(error) = ocr.probe() {
            tracing::warn!(%error, "OCR is unavailable: photographed documents cannot have their text compared with their seal");
        }
        if let Err(error) = super::datamatrix::render::probe(&super::datamatrix::render::RenderOptions::default()) {
            tracing::warn!(%error, "pdftoppm is unavailable: 2D-Doc seals drawn as vectors in PDFs will not be found");
        }
        if options.face_match {
            if let Err(error) = super::face::FaceModels::prepare() {
                tracing::error!(%error, "face match is unavailable: selfies will be reported not checked");
            }
        }
        tracing::info!(
            authorities = trust.authorities().count(),
            certificates = trust.certificates().count(),
            issuers = register.len(),
            external = online.has_external(),
            trust_list_sequence = list.summary.sequence,
            trust_list_issued = %list.summary.issued.format("%Y-%m-%d"),
            trust_list_origin = ?list.summary.origin,
            "analysis engine ready"
        );
        Ok(Self {
            parts: Arc::new(Parts {
                trust,
                register,
                ocr,
                online,
                timeout: options.timeout,
                reference_date: options.reference_date,
                face_match: options.face_match,
            }),
        })
    }

    fn today(&self) -> NaiveDate {
        self.parts.reference_date.unwrap_or_else(|| chrono::Utc::now().date_naive())
    }

    /// Everything but the checks that go on the network: what a sandbox child does (it has no
    /// network); [`OnlineChecks::finish`] does the rest.
    pub async fn draft(&self, input: AnalysisInput) -> Result<Draft, EngineError> {
        Ok(self.draft_keeping(input).await?.0)
    }

    /// [`Self::draft`], giving the input back for the online checks.
    async fn draft_keeping(&self, input: AnalysisInput) -> Result<(Draft, AnalysisInput), EngineError> {
        let limit = self.parts.timeout;
        tokio::time::timeout(limit, self.draft_within_limits(input))
            .await
            // Its blocking thread cannot be stopped and would run on beside a retry: a timeout is the
            // document's finding, never retried. (Workers run the engine in a sandbox child, which
            // their parent kills at the deadline; see `sandboxed`.)
            .map_err(|_| EngineError::Unsupported(format!("the analysis took longer than {} s", limit.as_secs())))?
    }

    async fn draft_within_limits(&self, input: AnalysisInput) -> Result<(Draft, AnalysisInput), EngineError> {
        let today = self.today();
        let (reading, pages, input) = self.read(input, today).await?;
        let (findings, issuer) = match reading {
            Reading::Administrative(page) => administrative::conclude(page, &self.parts.register),
            Reading::Identity(sides, faces) => {
                let mut findings = identity::conclude(*sides, today);
                face::weigh(&mut findings, faces);
                (findings, None)
            }
            Reading::Unusable(why) => {
                let mut findings = Findings::new();
                findings.add([why]);
                let draft = Draft {
                    findings,
                    pages,
                    pending: None,
                };
                return Ok((draft, input));
            }
        };
        let draft = Draft {
            findings,
            pages,
            pending: Some(Pending { issuer }),
        };
        Ok((draft, input))
    }

    /// The pixel work, on a blocking thread. A panic there is resumed here so the job loop treats
    /// it as the poison it is, rather than as a finding.
    async fn read(&self, input: AnalysisInput, today: NaiveDate) -> Result<(Reading, u32, AnalysisInput), EngineError> {
        let parts = self.parts.clone();
        let joined = tokio::task::spawn_blocking(move || {
            let (reading, pages) = read_document(&parts, &input, today)?;
            Ok::<_, EngineError>((reading, pages, input))
        })
        .await;
        match joined {
            Ok(result) => result,
            Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            Err(_) => Err(EngineError::Failure("the analysis thread was cancelled".to_owned())),
        }
    }
}

/// Opens every file of the document (all must be readable), then reads them for the category.
fn read_document(parts: &Parts, input: &AnalysisInput, today: NaiveDate) -> Result<(Reading, u32), EngineError> {
    let front = file::open(input.category, &input.front)?;
    let pages = front.pages;
    // Only an identity document has a back the engine reads.
    let back = match (input.category, &input.back) {
        (DocumentCategory::Identite, Some(back)) => Some(file::open(input.category, back)?),
        _ => None,
    };
    if let Some(why) = unusable::check(&front, back.as_ref()) {
        return Ok((Reading::Unusable(why), pages));
    }
    let reading = match input.category {
        DocumentCategory::Administratif => Reading::Administrative(administrative::read_page(&front, &parts.trust, &parts.ocr)),
        DocumentCategory::Identite => {
            let sides: Vec<_> = std::iter::once(front).chain(back).collect();
            // The faces beside the zone and the seal, on a thread of their own: a journey waits
            // for the longer of the two, not their sum.
            let front_turn = FrontTurn::default();
            let (sides_reading, faces) = std::thread::scope(|scope| {
                let faces = scope.spawn(|| {
                    face::read(
                        parts.face_match,
                        &sides[0],
                        input.selfie.as_deref(),
                        input.biometric_consent,
                        &front_turn,
                    )
                });
                let read = identity::read_sides(&sides, &parts.trust, &parts.ocr, today, &front_turn);
                (read, faces.join())
            });
            let faces = faces.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            Reading::Identity(Box::new(sides_reading), faces)
        }
    };
    Ok((reading, pages))
}

fn report(findings: Findings, pages: u32) -> AnalysisReport {
    AnalysisReport {
        verdict: verdict::decide(&findings),
        document_type: findings.document_type,
        document_country: findings.document_country,
        anomalies: findings.anomalies,
        two_d_doc: findings.two_d_doc,
        holder_age: findings.holder_age,
        pages,
        checks: findings.checks,
        face_match: findings.face_match,
    }
}

/// The whole engine in one process (tests, benchmarks): the draft, then the online checks.
#[async_trait]
impl Engine for BuiltinEngine {
    async fn analyse(&self, input: AnalysisInput) -> Result<AnalysisReport, EngineError> {
        let limit = self.parts.timeout;
        let started = std::time::Instant::now();
        let (draft, input) = self.draft_keeping(input).await?;
        let finish = self.parts.online.finish(draft, &input);
        tokio::time::timeout(limit.saturating_sub(started.elapsed()), finish)
            .await
            .map_err(|_| EngineError::Unsupported(format!("the analysis took longer than {} s", limit.as_secs())))
    }

    fn name(&self) -> &'static str {
        "builtin"
    }
}
