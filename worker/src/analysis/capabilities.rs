//! Probes what the engine can do on this machine (see [`common::capabilities`]): the optional programs
//! and the trust list in use, for the start-up lines, `/readyz` and `sceau doctor`.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chrono::Utc;
use common::capabilities::{Capabilities, CapabilityReport, Program, ProgramCheck, TrustListSummary};

use super::builtin::EngineOptions;
use super::datamatrix::render::{self, RenderOptions};
use super::text::ocr::Ocr;
use super::twoddoc::trust_import;
use super::twoddoc::trust_list::{self, ListStamp, TrustListError};

/// Runs each program's probe and reads the trust list in use.
pub fn probe(options: &EngineOptions) -> Result<Capabilities, TrustListError> {
    let tesseract = match Ocr::new(options.ocr.clone()).probe() {
        Ok(()) => check(Program::Tesseract, true, format!("languages {}", options.ocr.languages)),
        Err(e) => check(Program::Tesseract, false, format!("{e} (languages {})", options.ocr.languages)),
    };
    let pdftoppm = match render::probe(&RenderOptions::default()) {
        Ok(()) => check(Program::Pdftoppm, true, "runs".into()),
        Err(e) => check(Program::Pdftoppm, false, e.to_string()),
    };
    let xmlsec1 = trust_import::probe_xmlsec1(Path::new(Program::Xmlsec1.name()));
    let trust_list = trust_list::in_use(options.data_dir.as_deref())?.summary;
    Ok(Capabilities {
        programs: vec![tesseract, pdftoppm, xmlsec1],
        trust_list_expired: trust_list.expired_at(Utc::now()),
        trust_list,
    })
}

/// The capabilities `/readyz` reports: the programs as probed at start (a probe runs each of
/// them), and the trust list in use as it is now: read again whenever its file in the data dir
/// changes (an import while the service runs), its expiry judged at each look.
pub struct LiveCapabilities {
    programs: Vec<ProgramCheck>,
    data_dir: Option<PathBuf>,
    trust_list: Mutex<Loaded>,
}

/// The trust list last read, and the file it was read from.
struct Loaded {
    /// `None` until the first look, which reads the list again: it may have changed since the
    /// probe.
    file: Option<Option<ListStamp>>,
    summary: TrustListSummary,
}

impl LiveCapabilities {
    pub fn new(probed: &Capabilities, data_dir: Option<&Path>) -> Self {
        Self {
            programs: probed.programs.clone(),
            data_dir: data_dir.map(Path::to_owned),
            trust_list: Mutex::new(Loaded {
                file: None,
                summary: probed.trust_list.clone(),
            }),
        }
    }
}

impl CapabilityReport for LiveCapabilities {
    fn now(&self) -> Capabilities {
        let mut loaded = self.trust_list.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let file = Some(self.data_dir.as_deref().and_then(trust_list::imported_stamp));
        if file != loaded.file {
            match trust_list::in_use(self.data_dir.as_deref()) {
                Ok(list) => {
                    loaded.summary = list.summary;
                    loaded.file = file;
                }
                // Looked at again next time; meanwhile the last list read is shown.
                Err(e) => tracing::warn!(error = %e, "the trust list in the data dir cannot be read"),
            }
        }
        Capabilities {
            programs: self.programs.clone(),
            trust_list_expired: loaded.summary.expired_at(Utc::now()),
            trust_list: loaded.summary.clone(),
        }
    }
}

fn check(program: Program, available: bool, detail: String) -> ProgramCheck {
    ProgramCheck {
        program,
        available,
        detail,
    }
}
