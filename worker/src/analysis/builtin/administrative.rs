//! Administrative documents (bills, tax notices, payslips…): a trusted 2D-Doc seal whose data match
//! the visible page makes them `conforme`; without one, an issuer confirmed in a company register
//! and nothing suspicious makes them `sans_anomalie`.

use domain::analysis::Check;
use domain::vocabulary::{Anomaly, AnomalyCode, DocumentType};

use super::doc_kind;
use super::file::OpenedFile;
use super::findings::{Evidence, Findings};
use super::page;
use super::seal::{self, SealOutcome};
use crate::analysis::issuer::{self, IssuerRegister, OnlineRegister, Siren};
use crate::analysis::text::{ocr::Ocr, TextSource, VisibleText};
use crate::analysis::twoddoc::{data_matches, TrustStore, TwoDDocFinding};

/// What is read from the page on a blocking thread, before the register is asked.
pub struct PageReading {
    seal: SealOutcome,
    /// The page's text; `None` when it could not be read (no text layer and no OCR).
    text: Option<VisibleText>,
    forensics: Vec<Anomaly>,
}

/// Reads the page: its seal, its visible text (straightened as the seal's symbol shows the page
/// turned; without a seal OCR finds it from the letters) and its forensic findings.
pub fn read_page(file: &OpenedFile<'_>, trust: &TrustStore, ocr: &Ocr) -> PageReading {
    let (seal, turn) = seal::find(file, trust);
    let turn = (!matches!(seal, SealOutcome::Absent)).then_some(turn);
    let mut text = page::visible_text(file, ocr, turn);
    if let SealOutcome::Read(finding) = &seal {
        for look in page::SecondLook::ALL {
            let Some(read) = text.as_ref().filter(|read| misses_seal_values(finding, read)) else {
                break;
            };
            if let Some(again) = page::second_look(file, ocr, turn, look) {
                text = Some(both_readings(read, again));
            }
        }
    }
    PageReading {
        seal,
        text,
        forensics: page::forensic_findings(file),
    }
}

/// Whether OCR's reading of the page lacks a value of the seal: the case where reading it again
/// (`page::SecondLook`) may find what small print hid. A text layer is the issuer's own characters; nothing to read closer.
fn misses_seal_values(finding: &TwoDDocFinding, read: &VisibleText) -> bool {
    read.source == TextSource::Ocr && !data_matches::compare_visible(finding, read).mismatched.is_empty()
}

/// Both OCR readings of the page: a value is on the page if either reading shows it. A forged value is in
/// neither, so reading twice does not forgive a forgery.
fn both_readings(first: &VisibleText, closer: VisibleText) -> VisibleText {
    VisibleText {
        text: format!("{}\n{}", first.text, closer.text),
        source: TextSource::Ocr,
    }
}

/// Concludes on the page: seal and data first, the offline issuer register when no seal verified.
/// Also returns the SIRENs to ask the online register about, when the offline one confirmed none:
/// the worker asks it, out of the sandbox ([`weigh_issuer_online`]).
pub fn conclude(reading: PageReading, register: &IssuerRegister) -> (Findings, Option<Vec<Siren>>) {
    let mut findings = Findings::new();
    findings.checked(Check::FileIntegrity, reading.forensics.is_empty());
    findings.add(reading.forensics);
    match reading.seal {
        SealOutcome::Read(finding) => weigh_seal(&mut findings, &finding, reading.text.as_ref()),
        SealOutcome::NotRead(two_d_doc) => {
            findings.add([seal::not_read_anomaly(&two_d_doc)]);
            findings.two_d_doc = Some(two_d_doc);
        }
        SealOutcome::Absent => {}
    }
    // A seal that is there but does not hold raised its own anomaly; a register cannot outweigh it.
    let online = if findings.two_d_doc.is_none() {
        weigh_issuer(&mut findings, reading.text.as_ref(), register)
    } else {
        None
    };
    if findings.document_type == DocumentType::Inconnu {
        if let Some(text) = &reading.text {
            findings.document_type = doc_kind::from_text(&text.text);
        }
    }
    (findings, online)
}

/// The seal's signature, then whether its data are those printed on the page.
fn weigh_seal(findings: &mut Findings, finding: &TwoDDocFinding, text: Option<&VisibleText>) {
    let data_matches = seal::weigh(findings, finding, text);
    if finding.signature_verified() && data_matches {
        findings.evidence = Evidence::VerifiedSeal;
    }
    findings.document_type = finding.document_type;
    findings.document_country = seal::country(&finding.header);
}

/// Without a seal, only a confirmed issuer can vouch for the document. Returns the SIRENs left for
/// the online register (its check and its conclusion are then [`weigh_issuer_online`]'s).
fn weigh_issuer(findings: &mut Findings, text: Option<&VisibleText>, register: &IssuerRegister) -> Option<Vec<Siren>> {
    let Some(text) = text else {
        findings.add_code(AnomalyCode::IssuerNotConfirmed);
        return None;
    };
    let check = register.confirm_offline(&text.text);
    if !check.invalid.is_empty() {
        findings.add_code(AnomalyCode::IssuerIdentifierInvalid);
    }
    match check.confirmed {
        Some(_) => {
            findings.checked(Check::IssuerRegister, true);
            confirmed_issuer(findings);
            None
        }
        None if !check.labelled.is_empty() => Some(check.labelled),
        None => {
            findings.checked(Check::IssuerRegister, false);
            findings.add_code(AnomalyCode::IssuerNotConfirmed);
            None
        }
    }
}

/// The online register's answer about the SIRENs the offline one did not know (none configured:
/// not confirmed).
pub async fn weigh_issuer_online(findings: &mut Findings, candidates: &[Siren], online: Option<&OnlineRegister>) {
    let confirmed = match online {
        Some(online) => issuer::confirm_online(online, candidates).await,
        None => None,
    };
    findings.checked(Check::IssuerRegister, confirmed.is_some());
    match confirmed {
        Some(issuer) => {
            tracing::debug!(siren = %issuer.siren, source = ?issuer.source, "issuer confirmed");
            confirmed_issuer(findings);
        }
        None => findings.add_code(AnomalyCode::IssuerNotConfirmed),
    }
}

fn confirmed_issuer(findings: &mut Findings) {
    findings.evidence = Evidence::ConfirmedIssuer;
    findings.document_country.get_or_insert_with(|| "FRA".to_owned());
}
