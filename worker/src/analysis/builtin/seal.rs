//! The 2D-Doc seal of a document: found in its pixels (or in the images of a PDF page), read, and
//! verified against the trust store; what that means for the consultation's `twoDDoc` and anomalies.

use domain::analysis::Check;
use domain::vocabulary::{Anomaly, AnomalyCode, ReadStatus, TwoDDoc};

use super::file::OpenedFile;
use super::findings::Findings;
use crate::analysis::datamatrix::pdf::decode_in_pdf_rendered;
use crate::analysis::datamatrix::render::RenderOptions;
use crate::analysis::datamatrix::{self, DecodedCode};
use crate::analysis::orientation::Turn;
use crate::analysis::text::VisibleText;
use crate::analysis::twoddoc::{self, data_matches, SignatureStatus, TrustStore, TwoDDocError, TwoDDocFinding};

/// What the search for a seal gave.
pub enum SealOutcome {
    /// No DataMatrix code that claims to be a 2D-Doc.
    Absent,
    /// A 2D-Doc was decoded but is not valid 2D-Doc data, or was present and could not be read.
    NotRead(TwoDDoc),
    /// A seal was read; its signature status says whether it holds.
    Read(Box<TwoDDocFinding>),
}

/// Looks for a seal in the file and reads the first 2D-Doc found (a document carries one). In a PDF, a seal
/// drawn with vector paths is found on the rendered page; where pdftoppm is missing or fails, only the
/// embedded images are searched (logged, not an anomaly: the document is judged as before rendering existed).
/// Also says how the page is turned in an image, as the seal's symbol shows it (upright when none).
pub fn find(file: &OpenedFile<'_>, trust: &TrustStore) -> (SealOutcome, Turn) {
    let codes = match file.document() {
        // The first seal read is the one kept below: the search need not go on past it.
        Some(image) => datamatrix::decode_in_image_until(image, |code| twoddoc::analyse_payload(&code.payload, trust).is_ok()),
        None => match decode_in_pdf_rendered(file.bytes, &RenderOptions::default()) {
            Ok(codes) => codes,
            Err(error) => {
                let outcome = SealOutcome::NotRead(twoddoc::unreadable(format!("the PDF page could not be searched: {error}")));
                return (outcome, Turn::Upright);
            }
        },
    };
    read_first_seal(&codes, trust)
}

fn read_first_seal(codes: &[DecodedCode], trust: &TrustStore) -> (SealOutcome, Turn) {
    let mut found = (SealOutcome::Absent, Turn::Upright);
    for code in codes {
        match twoddoc::analyse_payload(&code.payload, trust) {
            Ok(finding) => return (SealOutcome::Read(Box::new(finding)), code.turn),
            Err(TwoDDocError::NotTwoDDoc(_)) => {}
            Err(error) => {
                if let Some(domain) = error.to_domain() {
                    found = (SealOutcome::NotRead(domain), code.turn);
                }
            }
        }
    }
    found
}

/// Weighs a read seal: its signature, then whether its data are those printed on the page (`text`,
/// when the visible text could be read). Records the checks, the anomalies and the consultation's
/// `twoDDoc`; returns whether the data match. What the seal vouches for is the caller's to decide.
pub fn weigh(findings: &mut Findings, finding: &TwoDDocFinding, text: Option<&VisibleText>) -> bool {
    findings.add(signature_anomalies(finding));
    findings.add_distinct(non_conformity_anomalies(finding));
    findings.checked(Check::TwoDDocSignature, finding.signature_verified());
    let data_matches = match text {
        Some(text) => {
            let matches = data_matches::compare_visible(finding, text).mismatched.is_empty();
            findings.checked(Check::TwoDDocData, matches);
            if !matches {
                findings.add_code(AnomalyCode::TwoddocDataMismatch);
            }
            matches
        }
        None => {
            findings.add_code(AnomalyCode::VisibleTextUnavailable);
            false
        }
    };
    findings.two_d_doc = Some(finding.to_domain(data_matches));
    data_matches
}

/// One warning per departure from the specification, with its reason: a seal its issuer should not have
/// produced is worth a look even when its signature holds, but is not forged for that alone.
pub fn non_conformity_anomalies(finding: &TwoDDocFinding) -> Vec<Anomaly> {
    finding
        .non_conformities
        .iter()
        .map(|reason| Anomaly::with_detail(AnomalyCode::TwoddocNonConformity, reason))
        .collect()
}

/// The anomalies a seal's signature status raises (a verified seal raises none, a test one an info); a
/// signature that could not be checked says why.
pub fn signature_anomalies(finding: &TwoDDocFinding) -> Vec<Anomaly> {
    let code = match finding.signature_status {
        SignatureStatus::Valid if finding.test_certificate => AnomalyCode::TwoddocTestCertificate,
        SignatureStatus::Valid => return Vec::new(),
        SignatureStatus::Invalid => AnomalyCode::TwoddocSignatureInvalid,
        SignatureStatus::UnknownCertificate => AnomalyCode::TwoddocCertificateUnknown,
        SignatureStatus::UntrustedAuthority => AnomalyCode::TwoddocAuthorityUntrusted,
        SignatureStatus::CertificateExpired => AnomalyCode::TwoddocCertificateExpired,
        SignatureStatus::NotChecked => {
            return vec![Anomaly::with_detail(AnomalyCode::TwoddocMalformed, &finding.signature_detail)];
        }
    };
    vec![Anomaly::new(code)]
}

/// The anomaly for a seal that could not be read, with the reason.
pub fn not_read_anomaly(two_d_doc: &TwoDDoc) -> Anomaly {
    let code = if two_d_doc.read_status == ReadStatus::Malformed {
        AnomalyCode::TwoddocMalformed
    } else {
        AnomalyCode::TwoddocUnreadable
    };
    let mut found = Anomaly::new(code);
    if let Some(reason) = &two_d_doc.read_status_message {
        found.message = format!("{} ({reason})", found.message);
    }
    found
}

/// The consultation's `documentCountry` from the seal's header: France before version 04, which
/// names the country (ISO alpha-2 in C40 headers, alpha-3 in binary ones).
pub fn country(header: &twoddoc::Header) -> Option<String> {
    match header.country.as_deref().map(str::trim) {
        None | Some("FR") | Some("FRA") => Some("FRA".to_owned()),
        Some(code) if code.len() == 3 => crate::analysis::mrz::countries::iso_alpha3(code).map(str::to_owned),
        Some(code) => alpha2_to_alpha3(code).map(str::to_owned),
    }
}

/// The countries whose authorities may appear in 2D-Doc headers (EU and neighbours).
fn alpha2_to_alpha3(code: &str) -> Option<&'static str> {
    const TABLE: &[(&str, &str)] = &[
        ("AT", "AUT"),
        ("BE", "BEL"),
        ("BG", "BGR"),
        ("CH", "CHE"),
        ("CY", "CYP"),
        ("CZ", "CZE"),
        ("DE", "DEU"),
        ("DK", "DNK"),
        ("EE", "EST"),
        ("ES", "ESP"),
        ("FI", "FIN"),
        ("GB", "GBR"),
        ("GR", "GRC"),
        ("HR", "HRV"),
        ("HU", "HUN"),
        ("IE", "IRL"),
        ("IT", "ITA"),
        ("LI", "LIE"),
        ("LT", "LTU"),
        ("LU", "LUX"),
        ("LV", "LVA"),
        ("MC", "MCO"),
        ("MT", "MLT"),
        ("NL", "NLD"),
        ("NO", "NOR"),
        ("PL", "POL"),
        ("PT", "PRT"),
        ("RO", "ROU"),
        ("SE", "SWE"),
        ("SI", "SVN"),
        ("SK", "SVK"),
    ];
    TABLE.iter().find(|(alpha2, _)| *alpha2 == code).map(|(_, alpha3)| *alpha3)
}
