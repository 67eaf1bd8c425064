//! Identity documents (cards, passports, residence permits): the machine-readable zone read from the
//! front or the back, its check digits, expiry and holder's age; a 2D-Doc seal if the document has
//! one; forensics on both sides. The selfie is the engine's caller's concern (see `selfie`).

use chrono::NaiveDate;
use domain::analysis::Check;
use domain::vocabulary::{Anomaly, AnomalyCode};

use super::file::OpenedFile;
use super::findings::{Evidence, Findings};
use super::front_turn::FrontTurn;
use super::page;
use super::seal::{self, SealOutcome};
use crate::analysis::mrz::{self, read::read_zone, Mrz};
use crate::analysis::orientation::Turn;
use crate::analysis::text::{ocr::Ocr, VisibleText};
use crate::analysis::twoddoc::TrustStore;

/// Age of majority: below it the holder is reported as a minor (an info; `minAge` rules decide).
const MAJORITY: u32 = 18;

/// What is read from the sides of the document.
pub struct SidesReading {
    mrz: Option<Mrz>,
    seal: SealOutcome,
    /// The visible text of the side that carries a seal, to compare the seal with.
    seal_side_text: Option<VisibleText>,
    forensics: Vec<Anomaly>,
}

/// Reads the front, then the back: the first side with a readable zone gives the MRZ.
/// How the front is turned is told to `front_turn` once its zone has been looked for.
pub fn read_sides(sides: &[OpenedFile<'_>], trust: &TrustStore, ocr: &Ocr, today: NaiveDate, front_turn: &FrontTurn) -> SidesReading {
    let _told = front_turn.told_on_drop();
    let mut reading = SidesReading {
        mrz: None,
        seal: SealOutcome::Absent,
        seal_side_text: None,
        forensics: Vec::new(),
    };
    for side in sides {
        reading.forensics.extend(page::forensic_findings(side));
        // The seal first: its symbol says how the side is turned, for the zone and the text.
        let (seal, seal_turn) = match reading.seal {
            SealOutcome::Absent => seal::find(side, trust),
            _ => (SealOutcome::Absent, Turn::Upright),
        };
        let mut zone_turn = None;
        if reading.mrz.is_none() {
            (reading.mrz, zone_turn) = side.document().and_then(|image| zone_of(image, seal_turn, today)).unzip();
        }
        // A straightened side whose zone could not be read is read as sent, as before straightening
        // existed: a wrong outline never costs a zone a flat reading would have found.
        if reading.mrz.is_none() && side.straightened.is_some() {
            (reading.mrz, zone_turn) = side.image.as_ref().and_then(|image| zone_of(image, seal_turn, today)).unzip();
        }
        if std::ptr::eq(side, &sides[0]) {
            front_turn.tell(zone_turn);
        }
        if matches!(seal, SealOutcome::Read(_)) {
            reading.seal_side_text = page::visible_text(side, ocr, Some(seal_turn));
        }
        if !matches!(seal, SealOutcome::Absent) {
            reading.seal = seal;
        }
    }
    reading
}

/// The zone of one side, parsed, and how the side is turned; `None` when no zone is found, or its
/// text has no MRZ layout, whichever way the side is turned. The turn `likely` (the seal's) is
/// tried first.
fn zone_of(image: &image::DynamicImage, likely: Turn, today: NaiveDate) -> Option<(Mrz, Turn)> {
    let others = Turn::ALL.into_iter().filter(|t| *t != likely);
    std::iter::once(likely).chain(others).find_map(|turn| {
        let zone = read_zone(&turn.straighten(image)).ok()?;
        let lines: Vec<&str> = zone.lines.iter().map(String::as_str).collect();
        mrz::parse_at(&lines, today).ok().map(|mrz| (mrz, turn))
    })
}

/// Concludes on the document from its zone and its seal.
pub fn conclude(reading: SidesReading, today: NaiveDate) -> Findings {
    let mut findings = Findings::new();
    findings.checked(Check::FileIntegrity, reading.forensics.is_empty());
    findings.add(reading.forensics);
    match &reading.mrz {
        Some(zone) => weigh_zone(&mut findings, zone, today),
        None => findings.add_code(AnomalyCode::MrzNotFound),
    }
    match reading.seal {
        SealOutcome::Read(finding) => {
            let data_matches = seal::weigh(&mut findings, &finding, reading.seal_side_text.as_ref());
            if !finding.signature_verified() || !data_matches {
                // The zone alone no longer vouches for a document whose seal does not hold.
                findings.evidence = Evidence::Nothing;
            }
        }
        SealOutcome::NotRead(two_d_doc) => {
            findings.add([seal::not_read_anomaly(&two_d_doc)]);
            findings.two_d_doc = Some(two_d_doc);
        }
        SealOutcome::Absent => {}
    }
    findings
}

fn weigh_zone(findings: &mut Findings, zone: &Mrz, today: NaiveDate) {
    let zone_findings = mrz::findings(zone, today);
    let digits_ok = zone.all_checks_ok() && zone.unreadable.is_empty();
    findings.checked(Check::MrzCheckDigits, digits_ok);
    if zone_findings.valid_until.is_some() {
        findings.checked(Check::DocumentValidity, !zone_findings.expired);
    }
    findings.add(zone_findings.anomalies);
    if zone_findings.holder_age.is_some_and(|age| age < MAJORITY) {
        findings.add_code(AnomalyCode::HolderMinor);
    }
    findings.document_type = zone_findings.document_type;
    findings.document_country = zone_findings.document_country;
    findings.holder_age = zone_findings.holder_age;
    if digits_ok {
        findings.evidence = Evidence::VerifiedMrz;
    }
}
