//! The journey's privacy notice (GDPR art. 13), in French and English: who processes the
//! customer's documents, why, on what basis, for how long, who receives them, the customer's
//! rights and whom to ask. Built from the company's settings; where it set nothing, from what
//! Sceau knows (its name, its retention), never left blank.

use super::Lang;
use common::store::verifications::JourneyCompany;
use domain::vocabulary::DocumentCategory;

/// One line of the notice: its label and its sentence.
pub struct Line {
    pub label: &'static str,
    pub text: String,
}

/// The notice as the page shows it.
pub struct Notice {
    pub heading: &'static str,
    pub lines: Vec<Line>,
    /// The company's policy link and its words, when the company gave one.
    pub policy: Option<(String, String)>,
}

/// The notice of `company`'s journey for a `category` document, in `lang`.
pub fn notice(lang: Lang, company: &JourneyCompany, category: DocumentCategory) -> Notice {
    let s = &company.settings;
    let name = company.display_name();
    let controller = s.privacy_controller.as_ref().map_or(company.name.as_str(), |c| c.as_str());
    let identity = category == DocumentCategory::Identite;
    let days = company.retention_days;
    let fr = lang == Lang::Fr;
    let purpose = match (&s.privacy_purpose, identity, fr) {
        (Some(p), _, _) => p.as_str().to_owned(),
        (None, true, true) => format!("vérifier votre identité à la demande de {name}."),
        (None, false, true) => format!("vérifier le document que vous demande {name}."),
        (None, true, false) => format!("verifying your identity at {name}'s request."),
        (None, false, false) => format!("verifying the document {name} asks you for."),
    };
    let contact = match (&s.privacy_contact, fr) {
        (Some(c), _) => c.as_str().to_owned(),
        (None, true) => format!("{name}, par le moyen qui vous a transmis ce lien"),
        (None, false) => format!("{name}, through whoever sent you this link"),
    };
    let line = |label, text: String| Line { label, text };
    let lines = if fr {
        let mut basis = format!(
            "le contrat ou les démarches que vous engagez avec {name}, et ses obligations légales de vérification (RGPD, art. 6.1 b et c)."
        );
        if identity {
            basis.push_str(" La comparaison de votre visage n’a lieu qu’avec votre consentement explicite (art. 9.2 a).");
        }
        vec![
            line("Responsable du traitement", format!("{controller}.")),
            line("Finalité", purpose),
            line("Base légale", basis),
            line("Conservation", retention_fr(days)),
            line(
                "Destinataires",
                format!("{name}, et Sceau, son sous-traitant, qui vérifie les documents pour son compte et ne les utilise à aucune autre fin."),
            ),
            line(
                "Vos droits",
                format!("accès, rectification, effacement, limitation et opposition, auprès de {contact}. Vous pouvez aussi saisir la CNIL (www.cnil.fr)."),
            ),
        ]
    } else {
        let mut basis = format!("the contract or steps you are taking with {name}, and its legal duty to verify (GDPR art. 6.1 b and c).");
        if identity {
            basis.push_str(" Your face is compared only with your explicit consent (art. 9.2 a).");
        }
        vec![
            line("Controller", format!("{controller}.")),
            line("Purpose", purpose),
            line("Legal basis", basis),
            line("Retention", retention_en(days)),
            line(
                "Recipients",
                format!("{name}, and Sceau, its processor, which checks the documents on its behalf and uses them for nothing else."),
            ),
            line(
                "Your rights",
                format!("access, rectification, erasure, restriction and objection, with {contact}. You may also complain to the CNIL (www.cnil.fr)."),
            ),
        ]
    };
    let policy = s.privacy_policy_url.as_ref().map(|url| {
        let words = if fr {
            format!("Politique de confidentialité de {name}")
        } else {
            format!("{name}'s privacy policy")
        };
        (url.as_str().to_owned(), words)
    });
    Notice {
        heading: if fr { "Vos données personnelles" } else { "Your personal data" },
        lines,
        policy,
    }
}

fn retention_fr(days: u32) -> String {
    match days {
        0 => "vos documents sont supprimés dès la vérification terminée.".to_owned(),
        1 => "vos documents sont conservés 1 jour après la vérification, puis supprimés.".to_owned(),
        n => format!("vos documents sont conservés {n} jours après la vérification, puis supprimés."),
    }
}

fn retention_en(days: u32) -> String {
    match days {
        0 => "your documents are deleted as soon as the verification ends.".to_owned(),
        1 => "your documents are kept 1 day after the verification, then deleted.".to_owned(),
        n => format!("your documents are kept {n} days after the verification, then deleted."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::branding::{JourneySettings, PolicyUrl, PrivacyContact, PrivacyController};

    fn company(settings: JourneySettings) -> JourneyCompany {
        JourneyCompany {
            name: "Banque Exemple SA".into(),
            workflow_display_name: None,
            settings,
            retention_days: 45,
        }
    }

    fn text(notice: &Notice) -> String {
        notice.lines.iter().map(|l| format!("{}: {}\n", l.label, l.text)).collect()
    }

    #[test]
    fn the_notice_says_what_the_company_set_and_the_real_retention() {
        let settings = JourneySettings {
            privacy_controller: Some(PrivacyController::parse("Banque Exemple SA, 1 rue de la Paix, Paris").unwrap()),
            privacy_contact: Some(PrivacyContact::parse("dpo@banque.example").unwrap()),
            privacy_policy_url: Some(PolicyUrl::parse("https://banque.example/confidentialite").unwrap()),
            ..JourneySettings::default()
        };
        let notice = notice(Lang::Fr, &company(settings), DocumentCategory::Identite);
        let all = text(&notice);
        assert!(all.contains("Banque Exemple SA, 1 rue de la Paix, Paris"), "{all}");
        assert!(all.contains("auprès de dpo@banque.example"), "{all}");
        assert!(all.contains("conservés 45 jours"), "{all}");
        assert!(all.contains("sous-traitant") && all.contains("consentement explicite"), "{all}");
        assert_eq!(notice.policy.unwrap().0, "https://banque.example/confidentialite");
    }

    #[test]
    fn without_settings_the_notice_is_built_from_what_sceau_knows() {
        let notice = notice(Lang::En, &company(JourneySettings::default()), DocumentCategory::Administratif);
        let all = text(&notice);
        assert!(all.contains("Controller: Banque Exemple SA."), "{all}");
        assert!(
            all.contains("kept 45 days") && all.contains("through whoever sent you this link"),
            "{all}"
        );
        assert!(!all.contains("face"), "no face on an administrative journey: {all}");
        assert!(notice.policy.is_none());
    }
}
