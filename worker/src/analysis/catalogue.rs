//! The one catalogue of anomaly codes (`API.md`): each code's severity and meaning, so codes stay
//! stable, documented, and weighed the same way by every part of the engine.

use common::domain::{Anomaly, Severity};

/// One anomaly code the engine may report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnomalyKind {
    pub code: &'static str,
    pub severity: Severity,
    /// What the anomaly means, as shown to the client in `message`.
    pub meaning: &'static str,
}

const fn kind(code: &'static str, severity: Severity, meaning: &'static str) -> AnomalyKind {
    AnomalyKind { code, severity, meaning }
}

/// Every anomaly code, with its severity and meaning.
pub const CATALOGUE: &[AnomalyKind] = &[
    kind(
        "document_unreadable",
        Severity::Info,
        "The file could not be decoded as an image or a PDF, so nothing could be analysed; the result goes to human review.",
    ),
    kind(
        "document_unsupported",
        Severity::Info,
        "The file is of a type, size or page count the service does not analyse; the result goes to human review.",
    ),
    kind(
        "analysis_failed",
        Severity::Info,
        "The analysis engine failed on this document after several attempts; the result goes to human review.",
    ),
    kind(
        "ai_disabled",
        Severity::Info,
        "AI use is disabled for the company, so the document was not analysed; the result goes to human review.",
    ),
    kind(
        "automated_checks_unavailable",
        Severity::Info,
        "The file was read, but the engine version that analysed it performed no authenticity check \
         (reported by the provisional engine of the first releases; kept so stored results stay documented).",
    ),
    kind(
        "mrz_composite_mismatch",
        Severity::Reject,
        "The composite check digit of the machine-readable zone does not match the fields it covers.",
    ),
    kind(
        "mrz_unreadable_field",
        Severity::Warning,
        "A field of the machine-readable zone could not be read, so it could not be verified.",
    ),
    kind(
        "mrz_unknown_country",
        Severity::Warning,
        "The issuing state of the machine-readable zone is neither an ISO 3166 nor an ICAO code.",
    ),
    kind(
        "twoddoc_signature_invalid",
        Severity::Reject,
        "The 2D-Doc seal's signature does not verify: the seal was forged or altered.",
    ),
    kind(
        "twoddoc_data_mismatch",
        Severity::Reject,
        "The data signed in the 2D-Doc seal differ from the data printed on the document.",
    ),
    kind(
        "mrz_check_digit_mismatch",
        Severity::Reject,
        "A check digit of the machine-readable zone does not match its field.",
    ),
    kind("document_expired", Severity::Reject, "The document's expiry date has passed."),
    kind(
        "pdf_modified_after_creation",
        Severity::Warning,
        "The PDF was modified after it was created (incremental update or differing dates).",
    ),
    kind(
        "edited_with_software",
        Severity::Warning,
        "The file's metadata show it was saved by image or PDF editing software.",
    ),
    kind(
        "low_resolution",
        Severity::Warning,
        "The image resolution is too low for every check to be reliable.",
    ),
    kind(
        "selfie_mismatch",
        Severity::Reject,
        "The selfie does not match the photo on the identity document.",
    ),
    kind(
        "selfie_not_checked",
        Severity::Info,
        "The selfie was not compared with the photo on the identity document.",
    ),
    kind(
        "twoddoc_certificate_unknown",
        Severity::Warning,
        "The 2D-Doc seal names a certificate its authority is not known to have issued, so its signature could not be checked.",
    ),
    kind(
        "twoddoc_authority_untrusted",
        Severity::Warning,
        "The 2D-Doc seal was signed by an authority that is not on the ANTS trust list.",
    ),
    kind(
        "twoddoc_certificate_expired",
        Severity::Warning,
        "The 2D-Doc seal's signature date lies outside the validity period of its certificate.",
    ),
    kind(
        "twoddoc_malformed",
        Severity::Warning,
        "A 2D-Doc seal was decoded but does not follow the ANTS specification, so it could not be verified.",
    ),
    kind(
        "twoddoc_unreadable",
        Severity::Warning,
        "A 2D-Doc seal seems present but could not be decoded (image quality or a code drawn as vectors).",
    ),
    kind(
        "twoddoc_test_certificate",
        Severity::Info,
        "The 2D-Doc seal is signed with a test certificate, accepted only because the operator trusts the test authority.",
    ),
    kind(
        "visible_text_unavailable",
        Severity::Warning,
        "The document's visible text could not be read, so the seal's data could not be compared with what is printed.",
    ),
    kind(
        "mrz_not_found",
        Severity::Info,
        "No machine-readable zone was found on the identity document, so nothing could be verified; the result goes to human review.",
    ),
    kind(
        "holder_minor",
        Severity::Info,
        "The holder is under 18 according to the machine-readable zone.",
    ),
    kind(
        "issuer_not_confirmed",
        Severity::Info,
        "The document has no verified seal and its issuer could not be confirmed in a company register, so nothing could be verified; the result goes to human review.",
    ),
    kind(
        "issuer_identifier_invalid",
        Severity::Warning,
        "A SIREN or SIRET number printed on the document fails its check digit.",
    ),
    kind(
        "blurry_image",
        Severity::Warning,
        "The image is too blurred for every check to be reliable.",
    ),
    kind(
        "overexposed_image",
        Severity::Warning,
        "Large parts of the image are burnt out (over-exposed or glare), hiding what they carried.",
    ),
    kind(
        "external_fraud_signal",
        Severity::Warning,
        "The external analysis service reported a sign of fraud on this document.",
    ),
    kind(
        "external_engine_unavailable",
        Severity::Info,
        "The external analysis service did not answer, so its checks (selfie match, fraud signals) were not performed.",
    ),
];

/// The catalogue entry for `code`, if it exists.
pub fn lookup(code: &str) -> Option<&'static AnomalyKind> {
    CATALOGUE.iter().find(|kind| kind.code == code)
}

/// An anomaly of a catalogued code, with its severity and meaning; `None` for an unknown code.
pub fn anomaly(code: &str) -> Option<Anomaly> {
    lookup(code).map(|kind| Anomaly {
        code: kind.code.to_owned(),
        severity: kind.severity,
        message: kind.meaning.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_snake_case() {
        let mut seen = HashSet::new();
        for kind in CATALOGUE {
            assert!(seen.insert(kind.code), "duplicate {}", kind.code);
            assert!(kind.code.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'));
            assert!(kind.meaning.ends_with('.'));
        }
    }

    #[test]
    fn api_codes_have_their_severity() {
        let expected = [
            ("automated_checks_unavailable", Severity::Info),
            ("twoddoc_signature_invalid", Severity::Reject),
            ("twoddoc_data_mismatch", Severity::Reject),
            ("mrz_check_digit_mismatch", Severity::Reject),
            ("document_expired", Severity::Reject),
            ("pdf_modified_after_creation", Severity::Warning),
            ("edited_with_software", Severity::Warning),
            ("low_resolution", Severity::Warning),
            ("selfie_mismatch", Severity::Reject),
            ("selfie_not_checked", Severity::Info),
        ];
        for (code, severity) in expected {
            let anomaly = anomaly(code).unwrap();
            assert_eq!((anomaly.code.as_str(), anomaly.severity), (code, severity));
        }
        assert_eq!(anomaly("no_such_code"), None);
    }
}
