//! The `documentType` of an administrative document that carries no seal, from the words of its
//! title: a bill says « Facture », a payslip « Bulletin de paie »… The first rule that matches wins,
//! so more specific titles come first.

use crate::analysis::text::normalise;

/// (documentType, any of these phrases, in folded upper case).
const RULES: &[(&str, &[&str])] = &[
    (
        "avis_imposition",
        &[
            "AVIS D IMPOT",
            "AVIS D IMPOSITION",
            "AVIS DE SITUATION DECLARATIVE",
            "TAXE FONCIERE",
            "TAXE D HABITATION",
        ],
    ),
    (
        "bulletin_salaire",
        &[
            "BULLETIN DE PAIE",
            "BULLETIN DE SALAIRE",
            "FICHE DE PAIE",
            "NET A PAYER AVANT IMPOT",
        ],
    ),
    ("rib", &["RELEVE D IDENTITE BANCAIRE", "RIB", "IBAN"]),
    ("releve_compte", &["RELEVE DE COMPTE", "RELEVE DE VOS COMPTES", "EXTRAIT DE COMPTE"]),
    ("contrat_travail", &["CONTRAT DE TRAVAIL", "CONTRAT A DUREE"]),
    (
        "justificatif_domicile",
        &["ATTESTATION DE DOMICILE", "JUSTIFICATIF DE DOMICILE", "ATTESTATION D HEBERGEMENT"],
    ),
    ("facture", &["FACTURE", "ECHEANCIER"]),
    ("attestation", &["ATTESTATION", "CERTIFICAT"]),
];

/// The type the page's words point to; `autre_administratif` when it has text but no known title.
pub fn from_text(text: &str) -> &'static str {
    let folded = format!(" {} ", normalise::fold(text));
    RULES
        .iter()
        .find(|(_, phrases)| phrases.iter().any(|phrase| folded.contains(&format!(" {phrase} "))))
        .map_or("autre_administratif", |(kind, _)| kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_give_types() {
        assert_eq!(from_text("EAUX DE DÉMONSTRATION\nFacture n° E2026110077"), "facture");
        assert_eq!(from_text("Bulletin de paie - octobre 2026"), "bulletin_salaire");
        assert_eq!(from_text("Avis d'impôt 2026 sur les revenus"), "avis_imposition");
        assert_eq!(from_text("Attestation de domicile\nDate d'émission"), "justificatif_domicile");
        assert_eq!(from_text("Relevé d'identité bancaire"), "rib");
        assert_eq!(from_text("Compte rendu de réunion"), "autre_administratif");
    }
}
