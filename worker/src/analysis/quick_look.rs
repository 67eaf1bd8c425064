//! The journey's quick look at a photo as soon as it is uploaded (`common::photo_quality` has the
//! pixel checks), with what only the engine's eyes can add: a face on the selfie, and which side
//! of an identity card a photo shows. It runs in the gateway's sandbox children, so it takes the
//! face detector alone (not the embedder: nothing is compared, no embedding is made) and reads the
//! zone once, upright. Like the rest of the look, it only ever advises.

use common::document::{self, FileKind};
use common::photo_quality::{self, QualityTask};
use domain::journey::{JourneySide, UploadWarning};
use image::{DynamicImage, RgbImage};

use super::face::compare::{self, Found};
use super::face::{quality, FaceModels};
use super::mrz::read::read_zone;

/// Lines of a card's back zone (ICAO TD1: three lines of 30 characters, always on the back).
const BACK_ZONE_LINES: usize = 3;
/// A face at least this sure is a holder's portrait, not a pattern of the card's background.
const PORTRAIT_SCORE: f32 = 0.85;

/// What the child answers to a [`QualityTask`]: the warnings, or why the bytes could not be
/// looked at (then there is nothing to say).
pub fn answer(task: QualityTask, bytes: &[u8]) -> Result<Vec<UploadWarning>, String> {
    let Some(kind @ (FileKind::Jpeg | FileKind::Png | FileKind::Webp)) = document::sniff(bytes) else {
        // A PDF or a TIFF is a scan or a file, not a photo to take again.
        return Ok(Vec::new());
    };
    let image = document::decode_image_checked(kind, bytes).map_err(|e| e.to_string())?;
    let warnings = photo_quality::look(task.side, &image.to_luma8());
    if !warnings.is_empty() {
        // The customer is asked to take it again already, and faces and zones are not told
        // reliably on a poor photo.
        return Ok(warnings);
    }
    Ok(what_it_shows(task, &image)?.into_iter().collect())
}

/// The face and side warning of a photo whose pixels are fine.
fn what_it_shows(task: QualityTask, image: &DynamicImage) -> Result<Option<UploadWarning>, String> {
    match task.side {
        JourneySide::Selfie if task.face_match => Ok(selfie_faces(&image.to_rgb8())?),
        JourneySide::Front => Ok(front_is_back(image)?.then_some(UploadWarning::WrongSide)),
        JourneySide::Back => Ok(back_is_front(image)?.then_some(UploadWarning::WrongSide)),
        JourneySide::Selfie | JourneySide::Document => Ok(None),
    }
}

/// A selfie must show one face: none leaves nothing to compare, a second one is a second person.
fn selfie_faces(rgb: &RgbImage) -> Result<Option<UploadWarning>, String> {
    Ok(match main_face(rgb, None)? {
        None => Some(UploadWarning::NoFace),
        Some(found) if found.faces > 1 => Some(UploadWarning::SeveralFaces),
        Some(_) => None,
    })
}

/// A front showing a card's back zone and no portrait is the back. The zone is read first: most
/// fronts have none, and then no face is looked for.
fn front_is_back(image: &DynamicImage) -> Result<bool, String> {
    if !shows_back_zone(image) {
        return Ok(false);
    }
    // The zone reads upright, so the card is: its portrait would show upright too.
    Ok(!main_face(&image.to_rgb8(), Some(0))?.is_some_and(|found| is_portrait(&found)))
}

/// A back showing a portrait and no zone at all is the front (a back's small "ghost" portrait
/// sits beside its zone). The zone is read first, upright: most backs have one, and then no face
/// is looked for; when a portrait shows at a quarter turn, the zone is read that way too.
fn back_is_front(image: &DynamicImage) -> Result<bool, String> {
    if read_zone(image).is_ok() {
        return Ok(false);
    }
    let rgb = image.to_rgb8();
    let Some(found) = main_face(&rgb, None)?.filter(is_portrait) else {
        return Ok(false);
    };
    if found.turns == 0 {
        return Ok(true);
    }
    let turned = DynamicImage::ImageRgb8(found.turned.into_owned());
    Ok(read_zone(&turned).is_err())
}

fn shows_back_zone(image: &DynamicImage) -> bool {
    read_zone(image).is_ok_and(|zone| zone.lines.len() == BACK_ZONE_LINES)
}

fn is_portrait(found: &Found<'_>) -> bool {
    found.face.score >= PORTRAIT_SCORE && found.face.eye_distance() >= quality::MIN_EYE_DISTANCE
}

/// The main face of `rgb`, by the detector alone: upright, then at the quarter turn `known_turns`
/// names, or at all three when it names none.
fn main_face(rgb: &RgbImage, known_turns: Option<u8>) -> Result<Option<Found<'_>>, String> {
    let detector = FaceModels::shared_detector().map_err(|e| e.to_string())?;
    compare::find(detector, rgb, || known_turns).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::time::Instant;

    const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/samples/identite");
    const FACES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/faces");

    fn file(path: &Path) -> Vec<u8> {
        std::fs::read(path).unwrap()
    }

    fn look(side: JourneySide, bytes: &[u8]) -> Vec<UploadWarning> {
        let started = Instant::now();
        let warnings = answer(QualityTask { side, face_match: true }, bytes).unwrap();
        eprintln!("{side:?}: {warnings:?} in {:?}", started.elapsed());
        warnings
    }

    fn png(image: &DynamicImage) -> Vec<u8> {
        let mut bytes = Vec::new();
        image
            .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
            .unwrap();
        bytes
    }

    /// The specimen card's zone alone on a blank card: what the back of a card looks like.
    fn card_back() -> Vec<u8> {
        let front = image::load_from_memory(&file(&Path::new(SAMPLES).join("sample-cni-td1-valide.png"))).unwrap();
        let mut back = image::RgbImage::from_pixel(front.width(), front.height(), image::Rgb([236, 238, 244]));
        let band = front.to_rgb8();
        let top = front.height() * 7 / 10;
        image::imageops::replace(
            &mut back,
            &image::imageops::crop_imm(&band, 0, top, front.width(), front.height() - top).to_image(),
            0,
            i64::from(top),
        );
        png(&DynamicImage::ImageRgb8(back))
    }

    #[test]
    fn a_selfie_shows_one_face() {
        assert_eq!(look(JourneySide::Selfie, &file(&Path::new(FACES).join("selfies/obama2.jpg"))), []);
        assert_eq!(
            look(JourneySide::Selfie, &file(&Path::new(FACES).join("selfies/two-people.jpg"))),
            [UploadWarning::SeveralFaces]
        );
        // A card where the face should be: its drawn silhouette is no face.
        assert_eq!(
            look(JourneySide::Selfie, &file(&Path::new(SAMPLES).join("sample-cni-td1-valide.png"))),
            [UploadWarning::NoFace]
        );
        // With face match off, the selfie's face is not looked for.
        let off = QualityTask {
            side: JourneySide::Selfie,
            face_match: false,
        };
        assert_eq!(
            answer(off, &file(&Path::new(SAMPLES).join("sample-cni-td1-valide.png"))),
            Ok(vec![])
        );
    }

    #[test]
    fn the_side_of_a_card_is_told_when_it_shows() {
        // A card's back sent as its front, and its front as its back.
        assert_eq!(look(JourneySide::Front, &card_back()), [UploadWarning::WrongSide]);
        let front = file(&Path::new(FACES).join("cards/obama-obama-flat.jpg"));
        assert_eq!(look(JourneySide::Back, &front), [UploadWarning::WrongSide]);
        // The right sides: a card's front, a passport's page (its zone has two lines), a back.
        assert_eq!(look(JourneySide::Front, &front), []);
        assert_eq!(
            look(
                JourneySide::Front,
                &file(&Path::new(SAMPLES).join("sample-passeport-td3-valide.jpg"))
            ),
            []
        );
        assert_eq!(look(JourneySide::Back, &card_back()), []);
        // A back with a small portrait beside its zone (a "ghost" image) is still a back; as a
        // front, a zone beside a face cannot be told from a front: nothing is said.
        let ghost = {
            let mut back = image::load_from_memory(&card_back()).unwrap().to_rgb8();
            let face = image::load_from_memory(&file(&Path::new(FACES).join("selfies/obama2.jpg"))).unwrap();
            let face = face.resize(200, 200, image::imageops::FilterType::Triangle).to_rgb8();
            image::imageops::replace(&mut back, &face, 60, 60);
            png(&DynamicImage::ImageRgb8(back))
        };
        assert_eq!(look(JourneySide::Back, &ghost), []);
        assert_eq!(look(JourneySide::Front, &ghost), []);
    }
}
