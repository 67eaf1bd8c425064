//! The document types of spec §6 and the API's `documentType` for each, so a verified seal tells the engine
//! what the document is, and the header's issue date can be checked against what the type requires.

use domain::vocabulary::DocumentType as Api;

/// One document type of a perimeter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocumentType {
    pub code: &'static str,
    pub label: &'static str,
    /// Spec §6 column "Date d'émission": `O` means the header must carry an issue date, `N` means `FFFF`.
    pub issue_date_required: bool,
    /// The API vocabulary (`API.md`, "Analysis vocabulary").
    pub api_type: Api,
}

const fn doc(code: &'static str, issue_date_required: bool, api_type: Api, label: &'static str) -> DocumentType {
    DocumentType {
        code,
        label,
        issue_date_required,
        api_type,
    }
}

/// Perimeter `01` (C40), spec v3.2.6 §6.1. Where the API has no exact type, the nearest is chosen: an income
/// tax or housing tax notice is an `avis_imposition`; foreigners' and asylum documents stand in for a residence
/// permit (`titre_sejour`); a seal of type 07 or 08 does not say which identity document it is on.
pub const PERIMETER_01: &[DocumentType] = &[
    doc("00", true, Api::JustificatifDomicile, "Justificatif de domicile"),
    doc("01", true, Api::Facture, "Facture"),
    doc("02", true, Api::AvisImposition, "Avis de taxe d'habitation"),
    doc("03", false, Api::Rib, "Relevé d'identité bancaire"),
    doc("04", false, Api::AvisImposition, "Avis d'impôt sur les revenus"),
    doc("05", false, Api::Rib, "Relevé d'identité SEPAmail"),
    doc("06", true, Api::BulletinSalaire, "Bulletin de salaire"),
    doc("07", true, Api::AutreIdentite, "Titre d'identité"),
    doc("08", true, Api::AutreIdentite, "MRZ"),
    doc("09", true, Api::Facture, "Facture étendue"),
    doc("10", true, Api::ContratTravail, "Contrat de travail"),
    doc("11", true, Api::ReleveCompte, "Relevé de compte"),
    doc("12", true, Api::AutreAdministratif, "Acte d'huissier"),
    doc("13", true, Api::TitreSejour, "Document étranger"),
    doc("14", true, Api::Attestation, "Attestation DICEM"),
    doc(
        "15",
        true,
        Api::Attestation,
        "Attestation de décision favorable d'une demande d'autorisation de travail",
    ),
    doc("16", false, Api::TitreSejour, "Attestation de demande d'asile"),
    doc(
        "17",
        true,
        Api::Attestation,
        "Attestation de fin de droit à l'allocation pour demandeur d'asile",
    ),
    doc(
        "18",
        false,
        Api::AvisImposition,
        "Avis de situation déclarative à l'impôt sur les revenus",
    ),
    doc("A0", true, Api::Attestation, "Certificat de qualité de l'air"),
    doc("A1", true, Api::AutreAdministratif, "Courrier permis à points"),
    doc("A2", true, Api::AutreAdministratif, "Carte mobilité inclusion"),
    doc("A3", false, Api::AutreAdministratif, "Macaron VTC"),
    doc("A4", true, Api::AutreAdministratif, "Certificat de décès"),
    doc("A5", false, Api::AutreAdministratif, "Carte T3P"),
    doc("A6", false, Api::AutreAdministratif, "Carte professionnelle de sapeur-pompier"),
    doc("A7", true, Api::Attestation, "Certificat de qualité de l'air (V2)"),
    doc("A8", true, Api::AutreAdministratif, "Certificat de cession électronique"),
    doc("A9", true, Api::AutreAdministratif, "Permis de chasser"),
    doc("AA", true, Api::AutreAdministratif, "Arrêtés permis de conduire"),
    doc("AB", true, Api::AutreAdministratif, "Relevé d'information permis de conduire"),
    doc("AC", true, Api::AutreAdministratif, "Licence de conducteur de train"),
    doc("B0", true, Api::AutreAdministratif, "Diplôme"),
    doc(
        "B1",
        true,
        Api::Attestation,
        "Attestation de versement de la contribution à la vie étudiante",
    ),
    doc("B2", true, Api::AutreAdministratif, "Test COVID"),
    doc("C1", true, Api::AutreAdministratif, "Renseignement tarifaire contraignant"),
    doc("C2", true, Api::AutreAdministratif, "Accord préalable pour le transfert d'armes"),
    doc(
        "C3",
        true,
        Api::AutreAdministratif,
        "Permis de transfert d'armes à feu et de munitions",
    ),
    doc(
        "C4",
        true,
        Api::AutreAdministratif,
        "Autorisation d'importation de matériels de guerre",
    ),
    doc("C5", true, Api::AutreAdministratif, "Licence d'exportation d'armes à feu"),
    doc(
        "C6",
        true,
        Api::AutreAdministratif,
        "Agrément de transfert d'armes à feu et de munitions",
    ),
    doc("C7", true, Api::AutreAdministratif, "Bon de livraison"),
    doc("C8", true, Api::AutreAdministratif, "Bon de livraison V2"),
    doc("L1", true, Api::Attestation, "Attestation vaccinale"),
];

/// Binary perimeter `0x0001`, spec §6.2 (the type code is the header byte in hex).
pub const PERIMETER_0001: &[DocumentType] = &[doc("07", true, Api::AutreIdentite, "Titre d'identité (réservé)")];

/// The document types of a perimeter, `None` for a perimeter the specification does not define.
pub fn perimeter(perimeter: &str) -> Option<&'static [DocumentType]> {
    match perimeter {
        "01" => Some(PERIMETER_01),
        "0001" => Some(PERIMETER_0001),
        _ => None,
    }
}

/// The document type `code` of `perimeter`.
pub fn lookup(perimeter_id: &str, code: &str) -> Option<&'static DocumentType> {
    perimeter(perimeter_id)?.iter().find(|d| d.code == code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_is_listed_once() {
        for perimeter in [PERIMETER_01, PERIMETER_0001] {
            for (i, d) in perimeter.iter().enumerate() {
                assert!(perimeter[i + 1..].iter().all(|o| o.code != d.code), "duplicate {}", d.code);
            }
        }
        // Spec v3.2.6 §6.1 lists 44 types in perimeter 01.
        assert_eq!(PERIMETER_01.len(), 44);
    }

    #[test]
    fn lookups() {
        assert_eq!(
            lookup("01", "04").map(|d| (d.api_type, d.issue_date_required)),
            Some((Api::AvisImposition, false))
        );
        assert_eq!(lookup("01", "06").map(|d| d.api_type), Some(Api::BulletinSalaire));
        assert_eq!(lookup("0001", "07").map(|d| d.api_type), Some(Api::AutreIdentite));
        assert_eq!(lookup("01", "99"), None);
        assert_eq!(lookup("02", "01"), None);
    }
}
