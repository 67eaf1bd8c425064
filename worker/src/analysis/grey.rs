//! Grey levels of a decoded image, where the pixel readers (the DataMatrix search, OCR) start: a
//! colour photo, the usual case, is converted in one integer pass with the sRGB luma weights
//! `image` uses, in a third of the time of its colour-managed conversion through floats (the
//! photographed attestation: 4.5 ms against 11 to 13), and within a level of it.

use image::{DynamicImage, GrayImage};

/// The luma weights of sRGB (Rec. 709), in ten-thousandths, as `image` applies them.
const LUMA: [u32; 3] = [2126, 7152, 722];

/// `image` in grey levels (other layouts than 8-bit RGB by `image`).
pub fn levels(image: &DynamicImage) -> GrayImage {
    match image {
        DynamicImage::ImageRgb8(rgb) => {
            let levels = rgb
                .as_raw()
                .chunks_exact(3)
                .map(|p| ((LUMA[0] * u32::from(p[0]) + LUMA[1] * u32::from(p[1]) + LUMA[2] * u32::from(p[2])) / 10_000) as u8)
                .collect();
            GrayImage::from_raw(rgb.width(), rgb.height(), levels).unwrap_or_else(|| image.to_luma8())
        }
        _ => image.to_luma8(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_colour_photo_is_greyed_as_image_greys_it() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/data/samples/administratif/sample-domicile-v03-photo.jpg"
        );
        let photo = image::open(path).expect("the photographed attestation");
        assert!(matches!(photo, DynamicImage::ImageRgb8(_)));
        let (ours, theirs) = (levels(&photo), photo.to_luma8());
        assert_eq!(ours.dimensions(), theirs.dimensions());
        let worst = ours.as_raw().iter().zip(theirs.as_raw()).map(|(a, b)| a.abs_diff(*b)).max();
        assert!(worst <= Some(1), "{worst:?}");
        let grey = DynamicImage::ImageLuma8(theirs.clone());
        assert_eq!(levels(&grey), theirs);
    }
}
