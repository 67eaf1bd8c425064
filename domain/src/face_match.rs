//! What the face comparison of a selfie with its document concluded, as it is recorded: an
//! outcome, the similarity when there was one, and why it was not compared when it was not. No
//! biometric data: the score and the outcome are all that leaves the analysis.

use serde::{Deserialize, Serialize};

use crate::vocabulary::DocumentType;

/// At or above this cosine similarity the two faces are the same person (OpenCV's reference
/// threshold for SFace).
pub const MATCH_THRESHOLD: f32 = 0.363;
/// Below this one they are confidently different people; between the two a person decides.
pub const MISMATCH_THRESHOLD: f32 = 0.30;

/// Why a selfie was not compared with its document's portrait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotCheckedReason {
    /// The customer did not consent to the biometric comparison.
    NoConsent,
    /// The installation's face models could not be loaded.
    ModelsUnavailable,
    /// The operator turned the comparison off (`SCEAU_FACE_MATCH=false`).
    TurnedOff,
    NoFaceOnSelfie,
    NoFaceOnDocument,
    /// A face was found but is too small, blurred, unsure or turned away to be compared.
    SelfieTooPoor,
    PortraitTooPoor,
}

impl NotCheckedReason {
    pub const ALL: [NotCheckedReason; 7] = [
        Self::NoConsent,
        Self::ModelsUnavailable,
        Self::TurnedOff,
        Self::NoFaceOnSelfie,
        Self::NoFaceOnDocument,
        Self::SelfieTooPoor,
        Self::PortraitTooPoor,
    ];

    /// The reason as the anomaly's detail says it, in English.
    pub fn detail(self) -> &'static str {
        match self {
            Self::NoConsent => "the customer did not consent to the biometric comparison",
            Self::ModelsUnavailable => "the face models are unavailable on this installation",
            Self::TurnedOff => "face comparison is turned off on this installation",
            Self::NoFaceOnSelfie => "no face was found on the selfie",
            Self::NoFaceOnDocument => "no face was found on the document",
            Self::SelfieTooPoor => "the face on the selfie is too small, blurred or turned away to be compared",
            Self::PortraitTooPoor => "the photo on the document is too small, blurred or turned away to be compared",
        }
    }

    /// The same in French.
    pub fn detail_fr(self) -> &'static str {
        match self {
            Self::NoConsent => "la personne n’a pas consenti à la comparaison biométrique",
            Self::ModelsUnavailable => "les modèles de visage sont indisponibles sur cette installation",
            Self::TurnedOff => "la comparaison des visages est désactivée sur cette installation",
            Self::NoFaceOnSelfie => "aucun visage n’a été trouvé sur le selfie",
            Self::NoFaceOnDocument => "aucun visage n’a été trouvé sur le document",
            Self::SelfieTooPoor => "le visage du selfie est trop petit, flou ou de biais pour être comparé",
            Self::PortraitTooPoor => "la photo du document est trop petite, floue ou de biais pour être comparée",
        }
    }

    /// Whether a person must look: the selfie is kept for the reviewer, who can compare it. Not
    /// when the operator chose to compare nothing.
    pub fn needs_review(self) -> bool {
        !matches!(self, Self::TurnedOff)
    }
}

/// The outcome of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum FaceMatch {
    Match { similarity: f32 },
    Uncertain { similarity: f32 },
    Mismatch { similarity: f32 },
    NotChecked { reason: NotCheckedReason },
}

impl FaceMatch {
    /// The outcome of two faces compared with `similarity`: at or above the match threshold the
    /// same person, below the mismatch threshold confidently not, between the two a person decides.
    pub fn of_similarity(similarity: f32) -> FaceMatch {
        if similarity >= MATCH_THRESHOLD {
            Self::Match { similarity }
        } else if similarity >= MISMATCH_THRESHOLD {
            Self::Uncertain { similarity }
        } else {
            Self::Mismatch { similarity }
        }
    }

    pub fn similarity(&self) -> Option<f32> {
        match *self {
            Self::Match { similarity } | Self::Uncertain { similarity } | Self::Mismatch { similarity } => Some(similarity),
            Self::NotChecked { .. } => None,
        }
    }

    /// Whether the result must go to a human whatever the document's verdict.
    pub fn needs_review(&self) -> bool {
        match self {
            Self::NotChecked { reason } => reason.needs_review(),
            Self::Uncertain { .. } => true,
            Self::Match { .. } | Self::Mismatch { .. } => false,
        }
    }

    /// The outcome in French words, for the portal and the certificate.
    pub fn label_fr(&self) -> &'static str {
        match self {
            Self::Match { .. } => "Même personne",
            Self::Uncertain { .. } => "Ressemblance insuffisante : à vérifier",
            Self::Mismatch { .. } => "Personnes différentes",
            Self::NotChecked { .. } => "Non comparé",
        }
    }

    /// The same in English.
    pub fn label_en(&self) -> &'static str {
        match self {
            Self::Match { .. } => "Same person",
            Self::Uncertain { .. } => "Not alike enough: to be checked",
            Self::Mismatch { .. } => "Different people",
            Self::NotChecked { .. } => "Not compared",
        }
    }
}

/// The detail of a similarity, as the anomalies of the comparison carry it.
pub fn similarity_detail(similarity: f32) -> String {
    format!("similarity {similarity:.2}")
}

/// The French of a detail the comparison wrote in English, when it is one.
pub fn detail_fr(detail: &str) -> Option<String> {
    if let Some(reason) = NotCheckedReason::ALL.into_iter().find(|r| r.detail() == detail) {
        return Some(reason.detail_fr().to_owned());
    }
    let value = detail.strip_prefix("similarity ")?;
    value.parse::<f32>().ok()?;
    Some(format!("similarité {}", value.replace('.', ",")))
}

/// Where a face was found on a stored image, for the portal to crop it on view: a box in the
/// pixels of the image as shown (EXIF orientation applied), counted in the image turned by
/// `turns` quarter turns clockwise (a card photographed sideways). A location, nothing biometric.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FaceBox {
    pub left: f32,
    pub top: f32,
    pub width: f32,
    pub height: f32,
    pub turns: u8,
    /// The image's size as shown, before any turn.
    pub image_width: u32,
    pub image_height: u32,
}

/// The comparison as recorded: its outcome, and where each face was found.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FaceComparison {
    #[serde(flatten)]
    pub outcome: FaceMatch,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document_face: Option<FaceBox>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selfie_face: Option<FaceBox>,
}

impl From<FaceMatch> for FaceComparison {
    fn from(outcome: FaceMatch) -> Self {
        Self {
            outcome,
            document_face: None,
            selfie_face: None,
        }
    }
}

/// The types of identity document that carry their holder's portrait on the front.
pub fn carries_portrait(document_type: DocumentType) -> bool {
    matches!(
        document_type,
        DocumentType::CarteIdentite | DocumentType::Passeport | DocumentType::TitreSejour | DocumentType::PermisConduire
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outcome_is_stored_with_its_tag_and_reason() {
        let stored = serde_json::to_string(&FaceMatch::NotChecked {
            reason: NotCheckedReason::NoConsent,
        })
        .unwrap();
        assert_eq!(stored, r#"{"outcome":"not_checked","reason":"no_consent"}"#);
        let read: FaceMatch = serde_json::from_str(r#"{"outcome":"uncertain","similarity":0.33}"#).unwrap();
        assert_eq!(read.similarity(), Some(0.33));
        assert!(read.needs_review());
    }

    #[test]
    fn thresholds_split_the_scale_in_three() {
        assert_eq!(FaceMatch::of_similarity(0.5), FaceMatch::Match { similarity: 0.5 });
        assert_eq!(
            FaceMatch::of_similarity(MATCH_THRESHOLD),
            FaceMatch::Match {
                similarity: MATCH_THRESHOLD
            }
        );
        assert_eq!(FaceMatch::of_similarity(0.33), FaceMatch::Uncertain { similarity: 0.33 });
        assert_eq!(FaceMatch::of_similarity(0.1), FaceMatch::Mismatch { similarity: 0.1 });
    }

    #[test]
    fn a_human_looks_unless_the_operator_compares_nothing() {
        for reason in NotCheckedReason::ALL {
            let outcome = FaceMatch::NotChecked { reason };
            assert_eq!(outcome.needs_review(), reason != NotCheckedReason::TurnedOff);
            assert!(!reason.detail().is_empty() && !reason.detail_fr().is_empty());
        }
        assert!(!FaceMatch::Match { similarity: 0.8 }.needs_review());
    }

    #[test]
    fn a_comparison_keeps_its_outcome_flat_beside_the_boxes() {
        let comparison = FaceComparison {
            outcome: FaceMatch::Match { similarity: 0.5 },
            document_face: None,
            selfie_face: Some(FaceBox {
                left: 1.0,
                top: 2.0,
                width: 3.0,
                height: 4.0,
                turns: 0,
                image_width: 10,
                image_height: 20,
            }),
        };
        let stored = serde_json::to_value(comparison).unwrap();
        assert_eq!(stored["outcome"], "match");
        assert_eq!(stored["selfieFace"]["imageWidth"], 10);
        assert_eq!(serde_json::from_value::<FaceComparison>(stored).unwrap(), comparison);
        let older: FaceComparison = serde_json::from_str(r#"{"outcome":"not_checked","reason":"no_consent"}"#).unwrap();
        assert_eq!(
            older,
            FaceMatch::NotChecked {
                reason: NotCheckedReason::NoConsent
            }
            .into()
        );
    }

    #[test]
    fn details_read_in_french() {
        assert_eq!(detail_fr(&similarity_detail(0.214)).as_deref(), Some("similarité 0,21"));
        assert_eq!(
            detail_fr(NotCheckedReason::NoFaceOnSelfie.detail()).as_deref(),
            Some("aucun visage n’a été trouvé sur le selfie")
        );
        assert_eq!(detail_fr("similarity of a kind"), None);
        let anomaly = crate::catalogue::Anomaly::with_detail(crate::catalogue::AnomalyCode::SelfieMismatch, &similarity_detail(0.1));
        assert_eq!(
            anomaly.message_fr(),
            "Le selfie ne correspond pas à la photo de la pièce d’identité (similarité 0,10)."
        );
    }
}
