//! What a company's journeys show of it (`domain::branding`): kept on its live row, read by its
//! test account through it, set by the portal's "Parcours client" section and `sceau admin company
//! set`. The logo is stored as Sceau re-encoded it, never as uploaded, in `company_logos`.

use super::error::RepoError;
use ::domain::branding::{AccentColor, DisplayName, JourneySettings, PolicyUrl, PrivacyContact, PrivacyController, PrivacyPurpose};
use domain::ids::CompanyId;
use domain::model::Company;
use rusqlite::types::Value;
use rusqlite::{params, Connection, OptionalExtension, Row};

/// Reads the settings from a row that selected the live company's columns by their own names
/// (`display_name`, `accent_color`, `has_logo`, `privacy_*`).
pub fn settings(r: &Row<'_>) -> rusqlite::Result<JourneySettings> {
    let accent: Option<String> = r.get("accent_color")?;
    let accent_color = accent
        .map(|hex| AccentColor::parse(&hex))
        .transpose()
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e)))?;
    Ok(JourneySettings {
        display_name: r.get::<_, Option<String>>("display_name")?.map(DisplayName::stored),
        accent_color,
        has_logo: r.get("has_logo")?,
        privacy_controller: r.get::<_, Option<String>>("privacy_controller")?.map(PrivacyController::stored),
        privacy_contact: r.get::<_, Option<String>>("privacy_contact")?.map(PrivacyContact::stored),
        privacy_purpose: r.get::<_, Option<String>>("privacy_purpose")?.map(PrivacyPurpose::stored),
        privacy_policy_url: r.get::<_, Option<String>>("privacy_policy_url")?.map(PolicyUrl::stored),
    })
}

/// One setting's change: `None` keeps it, `Some(None)` clears it, `Some(Some(v))` sets it.
pub type Change<T> = Option<Option<T>>;

/// The journey settings to change; what is `None` stays as it is.
#[derive(Debug, Default)]
pub struct JourneyUpdate {
    pub display_name: Change<DisplayName>,
    pub accent_color: Change<AccentColor>,
    /// The logo as re-encoded by the sandbox (PNG), never a client's bytes.
    pub logo: Change<ReencodedLogo>,
    pub privacy_controller: Change<PrivacyController>,
    pub privacy_contact: Change<PrivacyContact>,
    pub privacy_purpose: Change<PrivacyPurpose>,
    pub privacy_policy_url: Change<PolicyUrl>,
}

impl JourneyUpdate {
    pub fn is_empty(&self) -> bool {
        self.display_name.is_none()
            && self.accent_color.is_none()
            && self.logo.is_none()
            && self.privacy_controller.is_none()
            && self.privacy_contact.is_none()
            && self.privacy_purpose.is_none()
            && self.privacy_policy_url.is_none()
    }

    /// The names of the settings this update changes, for the audit log (never their values'
    /// bytes: a logo is named, not copied).
    pub fn changed(&self) -> Vec<&'static str> {
        [
            ("displayName", self.display_name.is_some()),
            ("accentColor", self.accent_color.is_some()),
            ("logo", self.logo.is_some()),
            ("privacyController", self.privacy_controller.is_some()),
            ("privacyContact", self.privacy_contact.is_some()),
            ("privacyPurpose", self.privacy_purpose.is_some()),
            ("privacyPolicyUrl", self.privacy_policy_url.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, changed)| changed.then_some(name))
        .collect()
    }
}

/// A PNG made by Sceau from a client's logo (the sandbox's `LogoTask`): the only bytes a logo
/// column ever holds. Built only from the sandbox's answer.
#[derive(Debug, Clone)]
pub struct ReencodedLogo(Vec<u8>);

impl ReencodedLogo {
    /// Wraps the PNG the sandbox answered; refuses anything that does not start as a PNG does.
    pub fn from_sandbox(png: Vec<u8>) -> Option<Self> {
        png.starts_with(b"\x89PNG\r\n\x1a\n").then_some(Self(png))
    }

    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

/// Applies `update` to the company (a live company; a test account's settings are its company's).
pub fn set_journey(tx: &Connection, id: &CompanyId, update: &JourneyUpdate) -> Result<Company, RepoError> {
    let live = super::companies::live_company(tx, id)?;
    fn text<T>(change: &Change<T>, as_str: impl Fn(&T) -> String) -> Option<Option<Value>> {
        change.as_ref().map(|value| value.as_ref().map(|v| Value::Text(as_str(v))))
    }
    let columns = [
        ("display_name", text(&update.display_name, |v| v.as_str().to_owned())),
        ("accent_color", text(&update.accent_color, AccentColor::hex)),
        ("privacy_controller", text(&update.privacy_controller, |v| v.as_str().to_owned())),
        ("privacy_contact", text(&update.privacy_contact, |v| v.as_str().to_owned())),
        ("privacy_purpose", text(&update.privacy_purpose, |v| v.as_str().to_owned())),
        ("privacy_policy_url", text(&update.privacy_policy_url, |v| v.as_str().to_owned())),
    ];
    for (column, change) in columns {
        if let Some(value) = change {
            tx.execute(
                &format!("UPDATE companies SET {column} = ?2 WHERE id = ?1"),
                params![live.as_str(), value],
            )?;
        }
    }
    match &update.logo {
        None => {}
        Some(None) => {
            tx.execute("DELETE FROM company_logos WHERE company_id = ?1", [live.as_str()])?;
        }
        Some(Some(logo)) => {
            tx.execute(
                "INSERT INTO company_logos (company_id, png) VALUES (?1, ?2)
                 ON CONFLICT (company_id) DO UPDATE SET png = excluded.png",
                params![live.as_str(), logo.bytes()],
            )?;
        }
    }
    super::companies::get(tx, id)
}

/// The logo the journeys of `account` show (its live company's), if one is set.
pub fn logo(c: &Connection, account: &CompanyId) -> Result<Option<Vec<u8>>, RepoError> {
    let logo: Option<Vec<u8>> = c
        .query_row(
            "SELECT l.png FROM companies c JOIN company_logos l ON l.company_id = coalesce(c.test_of, c.id) WHERE c.id = ?1",
            [account.as_str()],
            |r| r.get("png"),
        )
        .optional()?;
    Ok(logo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::envelope::MasterKeys;
    use crate::store::companies::{account, create, get};
    use crate::store::test_support::memory;
    use domain::vocabulary::{Licence, Mode};

    #[test]
    fn journey_settings_are_set_cleared_and_shared_with_the_test_account() {
        let (conn, now) = (memory(), chrono::Utc::now());
        let id = create(&conn, "Acme", Licence::Group, &MasterKeys::ephemeral(), now)
            .unwrap()
            .company
            .id;
        let update = JourneyUpdate {
            display_name: Some(Some(DisplayName::parse("Banque Exemple").unwrap())),
            accent_color: Some(Some(AccentColor::parse("#AA0033").unwrap())),
            logo: Some(ReencodedLogo::from_sandbox(b"\x89PNG\r\n\x1a\nrest".to_vec())),
            privacy_contact: Some(Some(PrivacyContact::parse("dpo@banque.example").unwrap())),
            ..JourneyUpdate::default()
        };
        let set = set_journey(&conn, &id, &update).unwrap();
        assert_eq!(set.journey.display_name.as_ref().map(DisplayName::as_str), Some("Banque Exemple"));
        assert_eq!(set.journey.accent_color.map(|c| c.hex()), Some("#aa0033".to_owned()));
        assert!(set.journey.has_logo && !set.journey.privacy_incomplete());

        let test = account(&conn, &id, Mode::Test, now).unwrap();
        let seen_by_test = get(&conn, &test).unwrap();
        assert_eq!(seen_by_test.journey, set.journey, "the test account shows what the company set");
        assert_eq!(logo(&conn, &test).unwrap().as_deref(), Some(&b"\x89PNG\r\n\x1a\nrest"[..]));

        let clear = JourneyUpdate {
            display_name: Some(None),
            logo: Some(None),
            ..JourneyUpdate::default()
        };
        assert_eq!(clear.changed(), ["displayName", "logo"]);
        let cleared = set_journey(&conn, &test, &clear).unwrap();
        assert!(cleared.journey.display_name.is_none() && !cleared.journey.has_logo);
        assert!(cleared.journey.accent_color.is_some(), "what the update did not name stays");
        assert_eq!(logo(&conn, &id).unwrap(), None);
    }

    #[test]
    fn only_a_png_from_the_sandbox_is_a_logo() {
        assert!(ReencodedLogo::from_sandbox(b"GIF89a".to_vec()).is_none());
    }
}
