//! The `documentType` of an administrative document that carries no seal, from the words of its
//! title: a bill says « Facture », a payslip « Bulletin de paie »… The first rule that matches wins,
//! so more specific titles come first.

use crate::analysis::text::normalise;
use domain::vocabulary::DocumentType;

/// (documentType, any of these phrases, in folded upper case).
const RULES: &[(DocumentType, &[&str])] = &[
    (
        DocumentType::AvisImposition,
        &[
            "AVIS D IMPOT",
            "AVIS D IMPOSITION",
            "AVIS DE SITUATION DECLARATIVE",
            "TAXE FONCIERE",
            "TAXE D HABITATION",
        ],
    ),
    (
        DocumentType::BulletinSalaire,
        &[
            "BULLETIN DE PAIE",
            "BULLETIN DE SALAIRE",
            "FICHE DE PAIE",
            "NET A PAYER AVANT IMPOT",
        ],
    ),
    (DocumentType::Rib, &["RELEVE D IDENTITE BANCAIRE", "RIB", "IBAN"]),
    (
        DocumentType::ReleveCompte,
        &["RELEVE DE COMPTE", "RELEVE DE VOS COMPTES", "EXTRAIT DE COMPTE"],
    ),
    (DocumentType::ContratTravail, &["CONTRAT DE TRAVAIL", "CONTRAT A DUREE"]),
    (
        DocumentType::JustificatifDomicile,
        &["ATTESTATION DE DOMICILE", "JUSTIFICATIF DE DOMICILE", "ATTESTATION D HEBERGEMENT"],
    ),
    (DocumentType::Facture, &["FACTURE", "ECHEANCIER"]),
    (DocumentType::Attestation, &["ATTESTATION", "CERTIFICAT"]),
];

/// The type the page's words point to; `autre_administratif` when it has text but no known title.
pub fn from_text(text: &str) -> DocumentType {
    let folded = format!(" {} ", normalise::fold(text));
    RULES
        .iter()
        .find(|(_, phrases)| phrases.iter().any(|phrase| folded.contains(&format!(" {phrase} "))))
        .map_or(DocumentType::AutreAdministratif, |(kind, _)| *kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_give_types() {
        assert_eq!(from_text("EAUX DE DÉMONSTRATION\nFacture n° E2026110077"), DocumentType::Facture);
        assert_eq!(from_text("Bulletin de paie - octobre 2026"), DocumentType::BulletinSalaire);
        assert_eq!(from_text("Avis d'impôt 2026 sur les revenus"), DocumentType::AvisImposition);
        assert_eq!(
            from_text("Attestation de domicile\nDate d'émission"),
            DocumentType::JustificatifDomicile
        );
        assert_eq!(from_text("Relevé d'identité bancaire"), DocumentType::Rib);
        assert_eq!(from_text("Compte rendu de réunion"), DocumentType::AutreAdministratif);
    }
}
