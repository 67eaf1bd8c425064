//! The vocabulary of the API (`API.md`): enums that serialise to the exact strings clients see.
//! Parsing an unknown value is an error, so invalid input never reaches the core.

use serde::{Deserialize, Serialize};

/// Declares a string enum with its wire names, `as_str`, `FromStr`, `Display` and its JSON Schema
/// (a string `enum` of the wire names, described by the enum's doc comment).
macro_rules! wire_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $wire:tt),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, ::serde::Serialize, ::serde::Deserialize, ::utoipa::ToSchema)]
        pub enum $name { $($(#[$vmeta])* #[serde(rename = $wire)] $variant),+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The wire name of this value.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $wire),+ }
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::vocabulary::UnknownValue;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($wire => Ok($name::$variant),)+
                    _ => Err($crate::vocabulary::UnknownValue { kind: stringify!($name), value: s.chars().take(64).collect() }),
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result { f.write_str(self.as_str()) }
        }
    };
}
pub(crate) use wire_enum;

/// A string that is not one of an enum's wire names.
#[derive(Debug, Clone, thiserror::Error)]
#[error("unknown {kind} value `{value}`")]
pub struct UnknownValue {
    pub kind: &'static str,
    pub value: String,
}

wire_enum!(
    /// The nature of a document: identity or administrative.
    DocumentCategory { Identite => "identite", Administratif => "administratif" }
);

wire_enum!(
    /// `documentType`: what the document is, `inconnu` when nothing identifies it.
    DocumentType {
        CarteIdentite => "carte_identite",
        Passeport => "passeport",
        TitreSejour => "titre_sejour",
        PermisConduire => "permis_conduire",
        AutreIdentite => "autre_identite",
        JustificatifDomicile => "justificatif_domicile",
        Facture => "facture",
        AvisImposition => "avis_imposition",
        BulletinSalaire => "bulletin_salaire",
        Rib => "rib",
        ReleveCompte => "releve_compte",
        ContratTravail => "contrat_travail",
        Attestation => "attestation",
        AutreAdministratif => "autre_administratif",
        Inconnu => "inconnu",
    }
);

impl DocumentType {
    /// The category the type belongs to; `None` for `inconnu`.
    pub fn category(self) -> Option<DocumentCategory> {
        use DocumentType::*;
        match self {
            CarteIdentite | Passeport | TitreSejour | PermisConduire | AutreIdentite => Some(DocumentCategory::Identite),
            JustificatifDomicile | Facture | AvisImposition | BulletinSalaire | Rib | ReleveCompte | ContratTravail | Attestation
            | AutreAdministratif => Some(DocumentCategory::Administratif),
            Inconnu => None,
        }
    }
}

wire_enum!(
    /// The engine's technical finding; never changed after it is recorded.
    Verdict {
        Conforme => "conforme",
        SansAnomalie => "sans_anomalie",
        NonConforme => "non_conforme",
        Suspect => "suspect",
        AnalyseImpossible => "analyse_impossible",
    }
);

wire_enum!(
    /// The workflow's decision from the verdict and the client's rules.
    Decision { Conforme => "conforme", AVerifier => "a_verifier", Refuse => "refuse" }
);

wire_enum!(
    /// Outcome of a human review.
    ReviewStatus { Pending => "pending", Accepted => "accepted", Rejected => "rejected" }
);

wire_enum!(
    /// Life cycle of a batch.
    BatchStatus {
        Open => "open",
        InProgress => "in_progress",
        Ended => "ended",
        Canceled => "canceled",
        Expired => "expired",
    }
);

wire_enum!(
    /// Life cycle of one deposited document.
    ItemStatus {
        Uploading => "uploading",
        Pending => "pending",
        Processing => "processing",
        Succeeded => "succeeded",
        Errored => "errored",
        Canceled => "canceled",
        Expired => "expired",
    }
);

impl ItemStatus {
    /// A terminal state is final: the first one recorded wins.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Succeeded | Self::Errored | Self::Canceled | Self::Expired)
    }
}

wire_enum!(
    /// Why a document ended `errored`.
    ItemError {
        IaDesactivee => "ia_desactivee",
        UnreadableDocument => "unreadable_document",
        UnsupportedDocument => "unsupported_document",
        EngineFailure => "engine_failure",
    }
);

wire_enum!(
    /// How much an anomaly weighs on the verdict.
    Severity { Info => "info", Warning => "warning", Reject => "reject" }
);

wire_enum!(
    /// Life cycle of a verification session (journey).
    VerificationStatus {
        Created => "created",
        Started => "started",
        Submitted => "submitted",
        Completed => "completed",
        Expired => "expired",
    }
);

wire_enum!(
    /// The images a consultation may keep.
    ImageSide { Recto => "recto", Verso => "verso", Selfie => "selfie" }
);

wire_enum!(
    /// The licence of a company; API keys require `group`.
    Licence { Standard => "standard", Group => "group" }
);

pub use crate::catalogue::{Anomaly, AnomalyCode};
pub use crate::error_code::ErrorCode;
pub use crate::journey::JourneySide;

wire_enum!(
    /// `twoDDoc.signatureStatus`: what checking a seal's signature concluded.
    SignatureStatus {
        /// The signature verifies with a trusted certificate valid at the signature date.
        Valid => "valid",
        /// The signature does not verify: the seal was altered or forged.
        Invalid => "invalid",
        /// The authority is trusted but does not know this certificate id.
        UnknownCertificate => "unknown_certificate",
        /// The authority is not in the trust list (or is the test authority and the operator does not accept it).
        UntrustedAuthority => "untrusted_authority",
        /// The signature verifies, but the certificate was not valid at the signature date.
        CertificateExpired => "certificate_expired",
        /// The signature could not be checked (the seal could not be read, or a key type this
        /// verifier does not support).
        NotChecked => "not_checked",
    }
);

wire_enum!(
    /// `twoDDoc.readStatus`: whether a seal seen on the document could be read.
    ReadStatus {
        /// Decoded and parsed.
        Read => "read",
        /// A code is there but could not be decoded (image quality, a code drawn as vectors).
        Unreadable => "unreadable",
        /// Decoded, but not a valid 2D-Doc.
        Malformed => "malformed",
    }
);

/// What the analysis says of a 2D-Doc seal (`twoDDoc` of a consultation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TwoDDoc {
    pub present: bool,
    /// The certificate belongs to an authority of the ANTS trust list.
    pub trusted: bool,
    pub signature_verified: bool,
    pub signature_status: SignatureStatus,
    pub data_matches: bool,
    pub read_status: ReadStatus,
    /// Why the 2D-Doc could not be read, in words.
    #[schema(required = true)]
    pub read_status_message: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_round_trip() {
        for v in Verdict::ALL {
            assert_eq!(v.as_str().parse::<Verdict>().unwrap(), *v);
            assert_eq!(serde_json::to_value(v).unwrap(), v.as_str());
        }
        assert_eq!(Decision::AVerifier.as_str(), "a_verifier");
        assert!("CONFORME".parse::<Verdict>().is_err());
    }

    #[test]
    fn terminal_states() {
        assert!(ItemStatus::Succeeded.is_terminal());
        assert!(!ItemStatus::Processing.is_terminal());
    }
}

wire_enum!(
    /// Which of a company's two sets of data a key acts on (API.md, Test mode): `live`, the real
    /// journeys, batches and results; `test`, what integrators try things on, never counted as acts.
    Mode { Live => "live", Test => "test" }
);

impl Default for Mode {
    /// What a message written before test mode existed was for.
    fn default() -> Self {
        Mode::Live
    }
}

impl Mode {
    /// `livemode` in webhook events.
    pub fn is_live(self) -> bool {
        self == Mode::Live
    }
}
