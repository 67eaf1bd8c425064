//! What a client company shows its customers on the journey: its name, colour and logo, and the
//! privacy notice GDPR art. 13 asks of it. Each value is parsed once, where it is set (portal or
//! CLI), so the pages only ever render checked text.

use serde::{Deserialize, Serialize};

/// Why a journey setting was refused: the field (as the portal and the CLI name it) and a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct InvalidSetting {
    pub field: &'static str,
    pub message: String,
}

fn invalid(field: &'static str, message: impl Into<String>) -> InvalidSetting {
    InvalidSetting {
        field,
        message: message.into(),
    }
}

/// Text shown to customers: trimmed, 1 to `max` characters, no control character (a line break
/// would be collapsed by the page anyway; a bidirectional override could disguise the name).
fn plain_text(field: &'static str, raw: &str, max: usize) -> Result<String, InvalidSetting> {
    let text = raw.trim();
    if text.is_empty() || text.chars().count() > max {
        return Err(invalid(field, format!("must have 1 to {max} characters")));
    }
    if text
        .chars()
        .any(|c| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c) || ('\u{2066}'..='\u{2069}').contains(&c))
    {
        return Err(invalid(field, "must not contain control or direction characters"));
    }
    Ok(text.to_owned())
}

macro_rules! text_setting {
    ($(#[$doc:meta])* $name:ident, $field:literal, $max:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub const MAX_CHARS: usize = $max;

            pub fn parse(raw: &str) -> Result<Self, InvalidSetting> {
                plain_text($field, raw, $max).map(Self)
            }

            /// A value read back from the store, checked when it was written.
            pub fn stored(raw: String) -> Self {
                Self(raw)
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }
    };
}

text_setting!(
    /// The name customers know the company by, on every journey page and in its title.
    DisplayName, "displayName", 80
);
text_setting!(
    /// Who decides what the customer's data is for (GDPR art. 13.1 a): a legal entity's name.
    PrivacyController, "privacyController", 200
);
text_setting!(
    /// Where a customer exercises their rights: the data protection officer's address, an e-mail.
    PrivacyContact, "privacyContact", 200
);
text_setting!(
    /// Why the documents are asked for, in the company's words (GDPR art. 13.1 c).
    PrivacyPurpose, "privacyPurpose", 500
);

/// The company's privacy policy: an https URL with a host, at most 2,048 characters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PolicyUrl(String);

impl PolicyUrl {
    pub fn parse(raw: &str) -> Result<Self, InvalidSetting> {
        let raw = raw.trim();
        crate::return_url::ReturnUrl::parse(raw, |_| false)
            .map(|url| Self(url.as_str().to_owned()))
            .map_err(|_| invalid("privacyPolicyUrl", "must be an https URL of at most 2,048 characters"))
    }

    pub fn stored(raw: String) -> Self {
        Self(raw)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The journey's accent colour, `#rrggbb` (stored lower case).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccentColor([u8; 3]);

impl AccentColor {
    pub fn parse(raw: &str) -> Result<Self, InvalidSetting> {
        let hex = raw.trim().strip_prefix('#').unwrap_or("");
        let refused = || invalid("accentColor", "must be a colour as #RRGGBB");
        if hex.len() != 6 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(refused());
        }
        let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).map_err(|_| refused());
        Ok(Self([byte(0)?, byte(2)?, byte(4)?]))
    }

    /// `#rrggbb`.
    pub fn hex(&self) -> String {
        let [r, g, b] = self.0;
        format!("#{r:02x}{g:02x}{b:02x}")
    }

    /// The text colour that reads on this colour: white or near black, whichever contrasts more
    /// (WCAG 2 relative luminance), so a pale brand colour still gives a legible button.
    pub fn text_hex(&self) -> &'static str {
        fn channel(c: u8) -> f64 {
            let c = f64::from(c) / 255.0;
            if c <= 0.039_28 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        }
        let [r, g, b] = self.0;
        let luminance = 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
        let on_white = 1.05 / (luminance + 0.05);
        let on_black = (luminance + 0.05) / (0.005_6 + 0.05);
        if on_white >= on_black {
            "#ffffff"
        } else {
            "#111111"
        }
    }
}

impl Serialize for AccentColor {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.hex())
    }
}

impl<'de> Deserialize<'de> for AccentColor {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        Self::parse(&raw).map_err(serde::de::Error::custom)
    }
}

/// The largest logo a company may give, in bytes, before Sceau re-encodes it.
pub const MAX_LOGO_BYTES: usize = 200 * 1024;

/// What the journey shows of its company, as set in the portal or by the CLI; `None` where the
/// company has set nothing (the pages then use its name and Sceau's colours).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JourneySettings {
    pub display_name: Option<DisplayName>,
    pub accent_color: Option<AccentColor>,
    /// Whether a logo (re-encoded by Sceau) is stored; its bytes are served apart.
    pub has_logo: bool,
    pub privacy_controller: Option<PrivacyController>,
    pub privacy_contact: Option<PrivacyContact>,
    pub privacy_purpose: Option<PrivacyPurpose>,
    pub privacy_policy_url: Option<PolicyUrl>,
}

impl JourneySettings {
    /// A live journey needs at least who the controller is or whom to ask: without either, the
    /// portal's dashboard warns the company (the customer still sees a notice built from its name).
    pub fn privacy_incomplete(&self) -> bool {
        self.privacy_controller.is_none() && self.privacy_contact.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_accent_colour_is_hex_and_picks_a_legible_text() {
        let blue = AccentColor::parse("#0B4F9C").unwrap();
        assert_eq!(blue.hex(), "#0b4f9c");
        assert_eq!(blue.text_hex(), "#ffffff");
        assert_eq!(
            AccentColor::parse("#ffe600").unwrap().text_hex(),
            "#111111",
            "yellow takes dark text"
        );
        for bad in ["0b4f9c", "#0b4f9", "#0b4f9cc", "#gggggg", "red", "", "#+1+1+1"] {
            assert_eq!(AccentColor::parse(bad).unwrap_err().field, "accentColor", "{bad}");
        }
    }

    #[test]
    fn names_are_trimmed_bounded_and_free_of_control_characters() {
        assert_eq!(DisplayName::parse("  Banque Exemple ").unwrap().as_str(), "Banque Exemple");
        assert!(DisplayName::parse("").is_err());
        assert!(DisplayName::parse(&"x".repeat(81)).is_err());
        assert!(DisplayName::parse(&"é".repeat(80)).is_ok(), "characters, not bytes");
        assert!(DisplayName::parse("Banque\u{202e}elpmexE").is_err(), "a direction override");
        assert!(PrivacyContact::parse("dpo@banque.example\n").is_ok(), "trailing line break trimmed");
        assert!(PrivacyContact::parse("dpo@\nbanque.example").is_err());
    }

    #[test]
    fn a_policy_is_an_https_url() {
        assert!(PolicyUrl::parse("https://banque.example/confidentialite").is_ok());
        assert!(PolicyUrl::parse("http://banque.example/confidentialite").is_err());
        assert!(PolicyUrl::parse("javascript:alert(1)").is_err());
    }
}
