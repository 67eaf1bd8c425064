//! Probes what the engine can do on this machine (see [`common::capabilities`]): the optional programs
//! and the trust list in use, for the start-up lines, `/readyz` and `sceau doctor`.

use std::path::Path;

use chrono::Utc;
use common::capabilities::{Capabilities, Program, ProgramCheck};

use super::builtin::EngineOptions;
use super::datamatrix::render::{self, RenderOptions};
use super::text::ocr::Ocr;
use super::twoddoc::trust_import;
use super::twoddoc::trust_list::{self, TrustListError};

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

fn check(program: Program, available: bool, detail: String) -> ProgramCheck {
    ProgramCheck {
        program,
        available,
        detail,
    }
}
