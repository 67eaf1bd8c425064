//! Photos turned by a quarter or a half turn, with no EXIF orientation, as phones send them: the
//! verdict of a turned photo is the verdict of the upright one (issue 13, item 3).

use std::io::Cursor;

use domain::vocabulary::{DocumentCategory, Verdict};
use image::{DynamicImage, ImageFormat};

use super::corpus::photo_of;
use super::{analyse, engine, input, shared_data};

/// The samples that are photographs or scans of one page, with their category.
const TURNED: [(&str, DocumentCategory); 4] = [
    ("identite/sample-passeport-td3-valide.jpg", DocumentCategory::Identite),
    ("identite/sample-cni-td1-valide.png", DocumentCategory::Identite),
    ("identite/sample-passeport-td3-cle-fausse.png", DocumentCategory::Identite),
    ("administratif/sample-domicile-v03-photo.jpg", DocumentCategory::Administratif),
];

fn encoded(image: &DynamicImage) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, ImageFormat::Png).expect("encode");
    out.into_inner()
}

fn turns(upright: &DynamicImage) -> [(u32, DynamicImage); 3] {
    [(90, upright.rotate90()), (180, upright.rotate180()), (270, upright.rotate270())]
}

/// The samples turned, plus a photo of a page that carries no seal (its orientation comes from its
/// text alone): the invoice of the samples without a 2D-Doc, rendered and photographed.
fn uprights() -> Vec<(String, DocumentCategory, DynamicImage)> {
    let mut all: Vec<_> = TURNED
        .iter()
        .map(|(path, category)| {
            let image = image::open(shared_data().join("samples").join(path)).expect("sample");
            ((*path).to_owned(), *category, image)
        })
        .collect();
    let pdf = std::fs::read(shared_data().join("samples/administratif/sample-facture-sans-2ddoc.pdf")).expect("sample");
    let photo = image::load_from_memory(&photo_of(&pdf)).expect("photo");
    all.push((
        "a photo of sample-facture-sans-2ddoc.pdf".to_owned(),
        DocumentCategory::Administratif,
        photo,
    ));
    all
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turned_photo_has_the_verdict_of_the_upright_one() {
    let engine = engine();
    let mut wrong = Vec::new();
    for (path, category, upright) in uprights() {
        let expected = analyse(&engine, input(category, encoded(&upright))).await.expect("upright");
        assert_ne!(expected.verdict, Verdict::AnalyseImpossible, "{path}: the upright photo is read");
        for (degrees, turned) in turns(&upright) {
            let report = analyse(&engine, input(category, encoded(&turned))).await.expect("turned");
            let same = (report.verdict, report.document_type, &report.anomalies)
                == (expected.verdict, expected.document_type, &expected.anomalies);
            if !same {
                wrong.push(format!(
                    "{path} turned {degrees}°: {:?} {:?} {:?}, upright {:?} {:?} {:?}",
                    report.verdict, report.document_type, report.anomalies, expected.verdict, expected.document_type, expected.anomalies
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
