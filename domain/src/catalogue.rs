//! The one catalogue of anomaly codes (`API.md`): each code's severity and meaning, so codes stay
//! stable, documented, and weighed the same way by every part of the engine.

use crate::vocabulary::{Anomaly, Severity};

/// One anomaly code the engine may report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnomalyKind {
    pub code: &'static str,
    pub severity: Severity,
    /// What the anomaly means, as shown to the client in `message`.
    pub meaning: &'static str,
    /// The same in French, for the certificate.
    pub meaning_fr: &'static str,
}

const fn kind(code: &'static str, severity: Severity, meaning: &'static str, meaning_fr: &'static str) -> AnomalyKind {
    AnomalyKind {
        code,
        severity,
        meaning,
        meaning_fr,
    }
}

/// Every anomaly code, with its severity and meaning.
pub const CATALOGUE: &[AnomalyKind] = &[
    kind(
        "document_unreadable",
        Severity::Info,
        "The file could not be decoded as an image or a PDF, so nothing could be analysed; the result goes to human review.",
        "Le fichier n’a pu être décodé ni comme image ni comme PDF : rien n’a pu être analysé ; le résultat passe en revue humaine.",
    ),
    kind(
        "document_unsupported",
        Severity::Info,
        "The file is of a type, size or page count the service does not analyse; the result goes to human review.",
        "Le fichier est d’un type, d’une taille ou d’un nombre de pages que le service n’analyse pas ; le résultat passe en revue humaine.",
    ),
    kind(
        "analysis_failed",
        Severity::Info,
        "The analysis engine failed on this document after several attempts; the result goes to human review.",
        "Le moteur d’analyse a échoué sur ce document après plusieurs tentatives ; le résultat passe en revue humaine.",
    ),
    kind(
        "ai_disabled",
        Severity::Info,
        "AI use is disabled for the company, so the document was not analysed; the result goes to human review.",
        "L’usage de l’IA est désactivé pour l’entreprise : le document n’a pas été analysé ; le résultat passe en revue humaine.",
    ),
    kind(
        "automated_checks_unavailable",
        Severity::Info,
        "The file was read, but the engine version that analysed it performed no authenticity check \
         (reported by the provisional engine of the first releases; kept so stored results stay documented).",
        "Le fichier a été lu, mais la version du moteur qui l’a analysé n’a réalisé aucun contrôle d’authenticité.",
    ),
    kind(
        "mrz_composite_mismatch",
        Severity::Reject,
        "The composite check digit of the machine-readable zone does not match the fields it covers.",
        "La clé de contrôle globale de la bande MRZ ne correspond pas aux champs qu’elle couvre.",
    ),
    kind(
        "mrz_unreadable_field",
        Severity::Warning,
        "A field of the machine-readable zone could not be read, so it could not be verified.",
        "Un champ de la bande MRZ n’a pas pu être lu, et donc pas vérifié.",
    ),
    kind(
        "mrz_unknown_country",
        Severity::Warning,
        "The issuing state of the machine-readable zone is neither an ISO 3166 nor an ICAO code.",
        "L’État émetteur indiqué dans la bande MRZ n’est ni un code ISO 3166 ni un code OACI.",
    ),
    kind(
        "twoddoc_signature_invalid",
        Severity::Reject,
        "The 2D-Doc seal's signature does not verify: the seal was forged or altered.",
        "La signature du cachet 2D-Doc ne se vérifie pas : le cachet a été contrefait ou modifié.",
    ),
    kind(
        "twoddoc_data_mismatch",
        Severity::Reject,
        "The data signed in the 2D-Doc seal differ from the data printed on the document.",
        "Les données signées dans le cachet 2D-Doc diffèrent de celles imprimées sur le document.",
    ),
    kind(
        "mrz_check_digit_mismatch",
        Severity::Reject,
        "A check digit of the machine-readable zone does not match its field.",
        "Une clé de contrôle de la bande MRZ ne correspond pas à son champ.",
    ),
    kind(
        "document_expired",
        Severity::Reject,
        "The document's expiry date has passed.",
        "La date d’expiration du document est dépassée.",
    ),
    kind(
        "pdf_modified_after_creation",
        Severity::Warning,
        "The PDF was modified after it was created (incremental update or differing dates).",
        "Le PDF a été modifié après sa création (mise à jour incrémentale ou dates différentes).",
    ),
    kind(
        "edited_with_software",
        Severity::Warning,
        "The file's metadata show it was saved by image or PDF editing software.",
        "Les métadonnées du fichier montrent qu’il a été enregistré par un logiciel de retouche d’image ou d’édition de PDF.",
    ),
    kind(
        "low_resolution",
        Severity::Warning,
        "The image resolution is too low for every check to be reliable.",
        "La résolution de l’image est trop faible pour que tous les contrôles soient fiables.",
    ),
    kind(
        "selfie_mismatch",
        Severity::Reject,
        "The selfie does not match the photo on the identity document.",
        "Le selfie ne correspond pas à la photo de la pièce d’identité.",
    ),
    kind(
        "selfie_not_checked",
        Severity::Info,
        "The selfie was not compared with the photo on the identity document.",
        "Le selfie n’a pas été comparé à la photo de la pièce d’identité.",
    ),
    kind(
        "twoddoc_certificate_unknown",
        Severity::Warning,
        "The 2D-Doc seal names a certificate its authority is not known to have issued, so its signature could not be checked.",
        "Le cachet 2D-Doc désigne un certificat que son autorité n’est pas connue pour avoir émis : sa signature n’a pas pu être vérifiée.",
    ),
    kind(
        "twoddoc_authority_untrusted",
        Severity::Warning,
        "The 2D-Doc seal was signed by an authority that is not on the ANTS trust list.",
        "Le cachet 2D-Doc a été signé par une autorité absente de la liste de confiance de l’ANTS.",
    ),
    kind(
        "twoddoc_certificate_expired",
        Severity::Warning,
        "The 2D-Doc seal's signature date lies outside the validity period of its certificate.",
        "La date de signature du cachet 2D-Doc est en dehors de la période de validité de son certificat.",
    ),
    kind(
        "twoddoc_malformed",
        Severity::Warning,
        "A 2D-Doc seal was decoded but does not follow the ANTS specification, so it could not be verified.",
        "Un cachet 2D-Doc a été décodé mais ne suit pas la spécification de l’ANTS : il n’a pas pu être vérifié.",
    ),
    kind(
        "twoddoc_unreadable",
        Severity::Warning,
        "A 2D-Doc seal seems present but could not be decoded (image quality or a code drawn as vectors).",
        "Un cachet 2D-Doc semble présent mais n’a pas pu être décodé (qualité de l’image ou code dessiné en vectoriel).",
    ),
    kind(
        "twoddoc_test_certificate",
        Severity::Info,
        "The 2D-Doc seal is signed with a test certificate, accepted only because the operator trusts the test authority.",
        "Le cachet 2D-Doc est signé avec un certificat de test, accepté uniquement parce que l’opérateur fait confiance à l’autorité de test.",
    ),
    kind(
        "visible_text_unavailable",
        Severity::Warning,
        "The document's visible text could not be read, so the seal's data could not be compared with what is printed.",
        "Le texte visible du document n’a pas pu être lu : les données du cachet n’ont pas pu être comparées à ce qui est imprimé.",
    ),
    kind(
        "mrz_not_found",
        Severity::Info,
        "No machine-readable zone was found on the identity document, so nothing could be verified; the result goes to human review.",
        "Aucune bande MRZ n’a été trouvée sur la pièce d’identité : rien n’a pu être vérifié ; le résultat passe en revue humaine.",
    ),
    kind(
        "holder_minor",
        Severity::Info,
        "The holder is under 18 according to the machine-readable zone.",
        "Le titulaire a moins de 18 ans d’après la bande MRZ.",
    ),
    kind(
        "issuer_not_confirmed",
        Severity::Info,
        "The document has no verified seal and its issuer could not be confirmed in a company register, so nothing could be verified; the result goes to human review.",
        "Le document n’a pas de cachet vérifié et son émetteur n’a pas pu être confirmé dans un registre d’entreprises : rien n’a pu être vérifié ; le résultat passe en revue humaine.",
    ),
    kind(
        "issuer_identifier_invalid",
        Severity::Warning,
        "A SIREN or SIRET number printed on the document fails its check digit.",
        "Un numéro SIREN ou SIRET imprimé sur le document a une clé de contrôle fausse.",
    ),
    kind(
        "blurry_image",
        Severity::Warning,
        "The image is too blurred for every check to be reliable.",
        "L’image est trop floue pour que tous les contrôles soient fiables.",
    ),
    kind(
        "overexposed_image",
        Severity::Warning,
        "Large parts of the image are burnt out (over-exposed or glare), hiding what they carried.",
        "De grandes parties de l’image sont brûlées (surexposition ou reflet) et masquent ce qu’elles portaient.",
    ),
    kind(
        "external_fraud_signal",
        Severity::Warning,
        "The external analysis service reported a sign of fraud on this document.",
        "Le service d’analyse externe a signalé un indice de fraude sur ce document.",
    ),
    kind(
        "external_engine_unavailable",
        Severity::Info,
        "The external analysis service did not answer, so its checks (selfie match, fraud signals) were not performed.",
        "Le service d’analyse externe n’a pas répondu : ses contrôles (comparaison du selfie, indices de fraude) n’ont pas été réalisés.",
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

/// An anomaly of a catalogued code whose message adds `detail` in parentheses (`meaning (detail).`),
/// the one form [`message_fr`] carries over; without detail, the plain meaning.
pub fn anomaly_with_detail(code: &str, detail: &str) -> Option<Anomaly> {
    let mut found = anomaly(code)?;
    if !detail.is_empty() {
        found.message = format!("{} ({detail}).", found.message.trim_end_matches('.'));
    }
    Some(found)
}

/// `anomaly`'s message in French: the catalogue's French meaning, with the detail the engine added
/// to the English one (`meaning (detail).`). A code the catalogue does not hold keeps its message.
pub fn message_fr(anomaly: &Anomaly) -> String {
    let Some(kind) = lookup(&anomaly.code) else {
        return anomaly.message.clone();
    };
    let detail = anomaly
        .message
        .strip_prefix(kind.meaning.trim_end_matches('.'))
        .and_then(|rest| rest.strip_prefix(" ("))
        .and_then(|rest| rest.strip_suffix(")."))
        .filter(|detail| !detail.is_empty());
    match detail {
        Some(detail) => format!("{} ({detail}).", kind.meaning_fr.trim_end_matches('.')),
        None => kind.meaning_fr.to_owned(),
    }
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
            assert!(kind.meaning.ends_with('.') && kind.meaning_fr.ends_with('.'), "{}", kind.code);
            assert!(!kind.meaning_fr.contains('\''), "French apostrophes are typographic: {}", kind.code);
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

    #[test]
    fn details_are_written_in_the_form_the_french_message_reads() {
        let unreadable = anomaly_with_detail("twoddoc_unreadable", "the PDF page could not be searched").unwrap();
        assert!(
            unreadable.message.ends_with("vectors) (the PDF page could not be searched)."),
            "{}",
            unreadable.message
        );
        assert!(message_fr(&unreadable).ends_with("vectoriel) (the PDF page could not be searched)."));
        assert_eq!(anomaly_with_detail("document_expired", ""), anomaly("document_expired"));
    }

    #[test]
    fn french_messages_keep_the_detail() {
        let mut digits = anomaly("mrz_check_digit_mismatch").unwrap();
        assert_eq!(
            message_fr(&digits),
            "Une clé de contrôle de la bande MRZ ne correspond pas à son champ."
        );
        digits.message = "A check digit of the machine-readable zone does not match its field (documentNumber, birthDate).".into();
        assert_eq!(
            message_fr(&digits),
            "Une clé de contrôle de la bande MRZ ne correspond pas à son champ (documentNumber, birthDate)."
        );
        let external = Anomaly {
            code: "vendor_specific".into(),
            severity: Severity::Warning,
            message: "Reported by the vendor.".into(),
        };
        assert_eq!(message_fr(&external), "Reported by the vendor.");
    }
}
