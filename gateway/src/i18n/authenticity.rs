//! The authenticity page's words, in French and English.

use super::Lang;

/// The page's fixed words, per language.
pub struct Words {
    pub title: &'static str,
    pub intro: &'static str,
    pub fingerprint: &'static str,
    pub fingerprint_where: &'static str,
    pub before_review: &'static str,
    pub details: &'static str,
    pub consultation: &'static str,
    pub analyzed: &'static str,
    pub recorded: &'static str,
    pub category: &'static str,
    pub document_type: &'static str,
    pub country: &'static str,
    pub verdict: &'static str,
    pub decision: &'static str,
    pub review: &'static str,
    pub checks: &'static str,
    pub no_check: &'static str,
    pub seal: &'static str,
    pub no_seal: &'static str,
    pub seal_rows: [&'static str; 5],
    pub anomalies: &'static str,
    pub no_anomaly: &'static str,
    pub note: &'static str,
}

pub const FR: Words = Words {
    title: "Certificat authentique",
    intro: "Ce certificat a bien été émis par Sceau, service de vérification de documents. \
Les informations ci-dessous sont celles de l’analyse enregistrée : comparez-les, avec l’empreinte, à celles du certificat. \
Si l’une d’elles diffère, le document que vous avez en main a été modifié.",
    fingerprint: "Empreinte du certificat",
    fingerprint_where: "Elle est imprimée en bas de chaque page du certificat.",
    before_review: "Un certificat téléchargé avant la revue humaine (revue « En attente ») porte l’empreinte",
    details: "Détails",
    consultation: "Consultation",
    analyzed: "Analysé le",
    recorded: "Enregistré le",
    category: "Catégorie",
    document_type: "Type de document",
    country: "Pays",
    verdict: "Verdict",
    decision: "Décision",
    review: "Revue humaine",
    checks: "Vérifications réalisées",
    no_check: "Aucune vérification n’a pu être réalisée sur ce document.",
    seal: "Cachet électronique 2D-Doc",
    no_seal: "Aucun cachet 2D-Doc n’a été trouvé sur le document.",
    seal_rows: [
        "Signature",
        "Signature vérifiée",
        "Autorité de certification reconnue (ANTS)",
        "Données du cachet conformes au document",
        "Lecture",
    ],
    anomalies: "Points d’attention",
    no_anomaly: "Aucun point d’attention.",
    note: "Cette page ne contient aucune donnée personnelle.",
};

pub const EN: Words = Words {
    title: "Genuine certificate",
    intro: "This certificate was issued by Sceau, a document verification service. \
The details below are those of the recorded analysis: compare them, and the fingerprint, with the certificate. \
If any of them differs, the document in your hands was altered.",
    fingerprint: "Certificate fingerprint",
    fingerprint_where: "It is printed at the bottom of every page of the certificate.",
    before_review: "A certificate downloaded before the human review (review “Pending”) carries the fingerprint",
    details: "Details",
    consultation: "Consultation",
    analyzed: "Analysed on",
    recorded: "Recorded on",
    category: "Category",
    document_type: "Document type",
    country: "Country",
    verdict: "Verdict",
    decision: "Decision",
    review: "Human review",
    checks: "Checks performed",
    no_check: "No check could be performed on this document.",
    seal: "2D-Doc electronic seal",
    no_seal: "No 2D-Doc seal was found on the document.",
    seal_rows: [
        "Signature",
        "Signature verified",
        "Certification authority recognised (ANTS)",
        "Seal data matching the document",
        "Reading",
    ],
    anomalies: "Points of attention",
    no_anomaly: "No point of attention.",
    note: "This page contains no personal data.",
};

impl Words {
    pub fn of(lang: Lang) -> &'static Words {
        match lang {
            Lang::Fr => &FR,
            Lang::En => &EN,
        }
    }
}
