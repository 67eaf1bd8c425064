//! The rules of a verification journey: when its link is open, which files it asks for, which
//! are required, and which consultation image each becomes.

use crate::vocabulary::{wire_enum, DocumentCategory, ImageSide, VerificationStatus};
use chrono::{DateTime, Utc};

/// Whether a session in `status` still takes uploads and a submit.
pub fn is_open(status: VerificationStatus) -> bool {
    matches!(status, VerificationStatus::Created | VerificationStatus::Started)
}

/// The status a session shows: `expired` for one still open past `expires_at`, the stored one
/// otherwise. The one expiry rule of the owner's view and of the journey.
pub fn current_status(stored: VerificationStatus, expires_at: DateTime<Utc>, now: DateTime<Utc>) -> VerificationStatus {
    if is_open(stored) && expires_at <= now {
        VerificationStatus::Expired
    } else {
        stored
    }
}

wire_enum!(
    /// One file a journey asks its customer for, named as in its upload URL.
    JourneySide {
        Front => "front",
        Back => "back",
        Selfie => "selfie",
        Document => "document",
    }
);

wire_enum!(
    /// What the quick look at an uploaded photo found that may keep it from being read: a warning
    /// the page shows beside the file, with a way to take it again; never a refusal.
    UploadWarning {
        /// Too few pixels to read the document's text (or to see the face).
        LowResolution => "low_resolution",
        /// Out of focus or shaken: edges and print are smeared.
        Blurry => "blurry",
        /// A patch of light burnt out part of the document.
        Glare => "glare",
        /// No face on the selfie (with face match on): nothing to compare with the portrait.
        NoFace => "no_face",
        /// More than one face on the selfie: the customer's must be alone in the frame.
        SeveralFaces => "several_faces",
        /// The other side of an identity card: a front with a card's back zone (three lines of
        /// 30 characters) and no face, or a back with a face and no zone.
        WrongSide => "wrong_side",
    }
);

/// One file of a journey, and whether it must be there before submitting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JourneyFile {
    pub side: JourneySide,
    pub required: bool,
}

const IDENTITY: &[JourneyFile] = &[
    JourneyFile {
        side: JourneySide::Front,
        required: true,
    },
    JourneyFile {
        side: JourneySide::Back,
        required: false,
    },
    JourneyFile {
        side: JourneySide::Selfie,
        required: true,
    },
];

const ADMINISTRATIVE: &[JourneyFile] = &[JourneyFile {
    side: JourneySide::Document,
    required: true,
}];

impl JourneySide {
    /// The files a journey of `category` asks for, its main file first; `back` is the only
    /// optional one.
    pub fn of(category: DocumentCategory) -> &'static [JourneyFile] {
        match category {
            DocumentCategory::Identite => IDENTITY,
            DocumentCategory::Administratif => ADMINISTRATIVE,
        }
    }

    /// The main file of a journey of `category`: the one analysed as the document's front.
    pub fn main(category: DocumentCategory) -> JourneySide {
        match category {
            DocumentCategory::Identite => JourneySide::Front,
            DocumentCategory::Administratif => JourneySide::Document,
        }
    }

    /// Whether a journey of `category` takes this file.
    pub fn belongs_to(self, category: DocumentCategory) -> bool {
        JourneySide::of(category).iter().any(|file| file.side == self)
    }

    /// The consultation image this file becomes: the administrative `document` is the recto, so
    /// the images API (`recto`, `verso`, `selfie`) serves every journey file.
    pub fn image_side(self) -> ImageSide {
        match self {
            JourneySide::Front | JourneySide::Document => ImageSide::Recto,
            JourneySide::Back => ImageSide::Verso,
            JourneySide::Selfie => ImageSide::Selfie,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_session_expires_at_its_deadline_a_closed_one_keeps_its_status() {
        let now = Utc::now();
        let past = now - chrono::Duration::seconds(1);
        assert_eq!(current_status(VerificationStatus::Started, past, now), VerificationStatus::Expired);
        assert_eq!(current_status(VerificationStatus::Created, now, now), VerificationStatus::Expired);
        assert_eq!(
            current_status(VerificationStatus::Submitted, past, now),
            VerificationStatus::Submitted
        );
        assert_eq!(
            current_status(VerificationStatus::Created, now + chrono::Duration::minutes(1), now),
            VerificationStatus::Created
        );
    }

    #[test]
    fn each_category_asks_for_its_files_main_first() {
        for category in DocumentCategory::ALL {
            let files = JourneySide::of(*category);
            assert_eq!(files[0].side, JourneySide::main(*category));
            assert!(files[0].required);
        }
        assert!(JourneySide::Back.belongs_to(DocumentCategory::Identite));
        assert!(!JourneySide::Back.belongs_to(DocumentCategory::Administratif));
        assert!(!JourneySide::Document.belongs_to(DocumentCategory::Identite));
        assert_eq!(JourneySide::Document.image_side(), ImageSide::Recto);
        assert!("recto".parse::<JourneySide>().is_err());
    }
}
