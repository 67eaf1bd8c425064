//! The document types of spec §6 and the API's `documentType` for each, so a verified seal tells the engine
//! what the document is, and the header's issue date can be checked against what the type requires.

/// One document type of a perimeter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocumentType {
    pub code: &'static str,
    pub label: &'static str,
    /// Spec §6 column "Date d'émission": `O` means the header must carry an issue date, `N` means `FFFF`.
    pub issue_date_required: bool,
    /// The API vocabulary (`API.md`, "Analysis vocabulary").
    pub api_type: &'static str,
}

const fn doc(code: &'static str, issue_date_required: bool, api_type: &'static str, label: &'static str) -> DocumentType {
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
    doc("00", true, "justificatif_domicile", "Justificatif de domicile"),
    doc("01", true, "facture", "Facture"),
    doc("02", true, "avis_imposition", "Avis de taxe d'habitation"),
    doc("03", false, "rib", "Relevé d'identité bancaire"),
    doc("04", false, "avis_imposition", "Avis d'impôt sur les revenus"),
    doc("05", false, "rib", "Relevé d'identité SEPAmail"),
    doc("06", true, "bulletin_salaire", "Bulletin de salaire"),
    doc("07", true, "autre_identite", "Titre d'identité"),
    doc("08", true, "autre_identite", "MRZ"),
    doc("09", true, "facture", "Facture étendue"),
    doc("10", true, "contrat_travail", "Contrat de travail"),
    doc("11", true, "releve_compte", "Relevé de compte"),
    doc("12", true, "autre_administratif", "Acte d'huissier"),
    doc("13", true, "titre_sejour", "Document étranger"),
    doc("14", true, "attestation", "Attestation DICEM"),
    doc(
        "15",
        true,
        "attestation",
        "Attestation de décision favorable d'une demande d'autorisation de travail",
    ),
    doc("16", false, "titre_sejour", "Attestation de demande d'asile"),
    doc(
        "17",
        true,
        "attestation",
        "Attestation de fin de droit à l'allocation pour demandeur d'asile",
    ),
    doc(
        "18",
        false,
        "avis_imposition",
        "Avis de situation déclarative à l'impôt sur les revenus",
    ),
    doc("A0", true, "attestation", "Certificat de qualité de l'air"),
    doc("A1", true, "autre_administratif", "Courrier permis à points"),
    doc("A2", true, "autre_administratif", "Carte mobilité inclusion"),
    doc("A3", false, "autre_administratif", "Macaron VTC"),
    doc("A4", true, "autre_administratif", "Certificat de décès"),
    doc("A5", false, "autre_administratif", "Carte T3P"),
    doc("A6", false, "autre_administratif", "Carte professionnelle de sapeur-pompier"),
    doc("A7", true, "attestation", "Certificat de qualité de l'air (V2)"),
    doc("A8", true, "autre_administratif", "Certificat de cession électronique"),
    doc("A9", true, "autre_administratif", "Permis de chasser"),
    doc("AA", true, "autre_administratif", "Arrêtés permis de conduire"),
    doc("AB", true, "autre_administratif", "Relevé d'information permis de conduire"),
    doc("AC", true, "autre_administratif", "Licence de conducteur de train"),
    doc("B0", true, "autre_administratif", "Diplôme"),
    doc(
        "B1",
        true,
        "attestation",
        "Attestation de versement de la contribution à la vie étudiante",
    ),
    doc("B2", true, "autre_administratif", "Test COVID"),
    doc("C1", true, "autre_administratif", "Renseignement tarifaire contraignant"),
    doc("C2", true, "autre_administratif", "Accord préalable pour le transfert d'armes"),
    doc(
        "C3",
        true,
        "autre_administratif",
        "Permis de transfert d'armes à feu et de munitions",
    ),
    doc(
        "C4",
        true,
        "autre_administratif",
        "Autorisation d'importation de matériels de guerre",
    ),
    doc("C5", true, "autre_administratif", "Licence d'exportation d'armes à feu"),
    doc(
        "C6",
        true,
        "autre_administratif",
        "Agrément de transfert d'armes à feu et de munitions",
    ),
    doc("C7", true, "autre_administratif", "Bon de livraison"),
    doc("C8", true, "autre_administratif", "Bon de livraison V2"),
    doc("L1", true, "attestation", "Attestation vaccinale"),
];

/// Binary perimeter `0x0001`, spec §6.2 (the type code is the header byte in hex).
pub const PERIMETER_0001: &[DocumentType] = &[doc("07", true, "autre_identite", "Titre d'identité (réservé)")];

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

    /// `documentType` values of API.md.
    const API_TYPES: &[&str] = &[
        "carte_identite",
        "passeport",
        "titre_sejour",
        "permis_conduire",
        "autre_identite",
        "justificatif_domicile",
        "facture",
        "avis_imposition",
        "bulletin_salaire",
        "rib",
        "releve_compte",
        "contrat_travail",
        "attestation",
        "autre_administratif",
        "inconnu",
    ];

    #[test]
    fn every_type_maps_to_the_api_vocabulary_once() {
        for perimeter in [PERIMETER_01, PERIMETER_0001] {
            for (i, d) in perimeter.iter().enumerate() {
                assert!(API_TYPES.contains(&d.api_type), "{} -> {}", d.code, d.api_type);
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
            Some(("avis_imposition", false))
        );
        assert_eq!(lookup("01", "06").map(|d| d.api_type), Some("bulletin_salaire"));
        assert_eq!(lookup("0001", "07").map(|d| d.api_type), Some("autre_identite"));
        assert_eq!(lookup("01", "99"), None);
        assert_eq!(lookup("02", "01"), None);
    }
}
