//! Images no check can start on (a few pixels, a uniform surface): reported as such, with the reason,
//! so the document goes to a person as `analyse_impossible` instead of being weighed as a merely poor
//! photo (`suspect`) on checks that never had anything to read.

use domain::vocabulary::{Anomaly, AnomalyCode};

use super::file::OpenedFile;
use crate::analysis::forensics::{self, THRESHOLDS};

/// The point of attention for the first side whose image cannot carry a document; PDFs are pages
/// and are judged by the other checks.
pub fn check(front: &OpenedFile<'_>, back: Option<&OpenedFile<'_>>) -> Option<Anomaly> {
    let sides = std::iter::once(("", front)).chain(back.map(|back| ("the back: ", back)));
    sides.into_iter().find_map(|(side, file)| {
        let why = forensics::unusable(file.image.as_ref()?, &THRESHOLDS)?;
        Some(Anomaly::with_detail(AnomalyCode::ImageUnusable, &format!("{side}{why}")))
    })
}
