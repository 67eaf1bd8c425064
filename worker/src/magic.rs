//! Test mode's magic documents (`test-documents/`, outcomes in `domain::test_mode`): a test key's
//! document that is one of them, byte for byte, gets its documented outcome without the engine,
//! so an integrator can meet every verdict and every item error end to end; any other gets
//! `analyse_impossible` (`not_analysed_in_test_mode`). A live key's document always meets the engine.

use common::messages::JobOutcome;
use domain::test_mode::{self, MagicOutcome, MAGIC_DOCUMENTS};
use domain::vocabulary::DocumentCategory;

/// The magic documents' bytes, by file name.
const FILES: &[(&str, &[u8])] = &[
    ("conforme.png", include_bytes!("../../test-documents/conforme.png")),
    ("sans_anomalie.png", include_bytes!("../../test-documents/sans_anomalie.png")),
    ("non_conforme.png", include_bytes!("../../test-documents/non_conforme.png")),
    ("suspect.png", include_bytes!("../../test-documents/suspect.png")),
    (
        "analyse_impossible.png",
        include_bytes!("../../test-documents/analyse_impossible.png"),
    ),
    (
        "unreadable_document.png",
        include_bytes!("../../test-documents/unreadable_document.png"),
    ),
    (
        "unsupported_document.png",
        include_bytes!("../../test-documents/unsupported_document.png"),
    ),
    ("engine_failure.png", include_bytes!("../../test-documents/engine_failure.png")),
    ("ia_desactivee.png", include_bytes!("../../test-documents/ia_desactivee.png")),
];

/// The outcome of a test key's document: the one a magic document stands for, made up for any other.
pub fn test_outcome(front: &[u8], category: DocumentCategory) -> JobOutcome {
    outcome(front, category).unwrap_or_else(|| JobOutcome::Analysed {
        report: Box::new(test_mode::not_analysed()),
    })
}

/// The outcome `front` stands for when it is a magic document; `None` for any other file.
fn outcome(front: &[u8], category: DocumentCategory) -> Option<JobOutcome> {
    let (name, _) = FILES.iter().find(|(_, bytes)| *bytes == front)?;
    let (_, magic) = MAGIC_DOCUMENTS.iter().find(|(file, _)| file == name)?;
    Some(match *magic {
        MagicOutcome::Verdict(verdict) => JobOutcome::Analysed {
            report: Box::new(test_mode::report(verdict, category)),
        },
        MagicOutcome::Error(error) => JobOutcome::Errored {
            error,
            message: format!("test mode: the magic document {name}"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_magic_document_is_shipped_and_known_by_its_bytes_only() {
        let names: Vec<&str> = FILES.iter().map(|(name, _)| *name).collect();
        let documented: Vec<&str> = MAGIC_DOCUMENTS.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, documented);
        for (name, bytes) in FILES {
            assert!(outcome(bytes, DocumentCategory::Identite).is_some(), "{name}");
            let mut other = bytes.to_vec();
            other.push(0);
            assert!(outcome(&other, DocumentCategory::Identite).is_none(), "{name} with a byte more");
        }
    }
}
