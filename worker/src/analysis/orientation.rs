//! Which way up a photographed page is. Phones send photos turned by a quarter or a half turn with
//! no EXIF orientation; the readers that assume upright lines (the MRZ's, Tesseract's) are given the
//! page straightened, the turn found by what the page carries: a DataMatrix symbol says it for free
//! (its finder pattern has a bottom-left corner), an MRZ by being readable one way only.

use std::borrow::Cow;

use image::DynamicImage;

/// How far the page in an image is turned clockwise from upright.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Turn {
    #[default]
    Upright,
    /// A quarter turn clockwise: the page's top is on the image's right.
    Quarter,
    Half,
    /// Three quarters clockwise (a quarter anticlockwise): the page's top is on the image's left.
    ThreeQuarters,
}

impl Turn {
    /// Every turn, the likeliest first: upright, then the two ways a phone held sideways turns a
    /// page, then upside down.
    pub const ALL: [Turn; 4] = [Turn::Upright, Turn::Quarter, Turn::ThreeQuarters, Turn::Half];

    /// The turn of a line of the page that reads left to right when upright, going from `from` to
    /// `to` in the image's coordinates (y grows downwards). The nearest quarter turn wins, so a
    /// photo a few degrees askew is still upright.
    pub fn of_baseline(from: (f32, f32), to: (f32, f32)) -> Turn {
        let (dx, dy) = (to.0 - from.0, to.1 - from.1);
        if dx.abs() >= dy.abs() {
            if dx >= 0.0 {
                Turn::Upright
            } else {
                Turn::Half
            }
        } else if dy > 0.0 {
            Turn::Quarter
        } else {
            Turn::ThreeQuarters
        }
    }

    /// The image turned back so that the page is upright: borrowed when it already is, else a
    /// copy, as the caller keeps the original for the forensic checks of the file as sent.
    pub fn straighten(self, image: &DynamicImage) -> Cow<'_, DynamicImage> {
        match self {
            Turn::Upright => Cow::Borrowed(image),
            Turn::Quarter => Cow::Owned(image.rotate270()),
            Turn::Half => Cow::Owned(image.rotate180()),
            Turn::ThreeQuarters => Cow::Owned(image.rotate90()),
        }
    }

    /// `image` as this turn would show an upright page: the inverse of [`Turn::straighten`] (tests).
    #[cfg(test)]
    pub fn apply(self, image: &DynamicImage) -> DynamicImage {
        match self {
            Turn::Upright => image.clone(),
            Turn::Quarter => image.rotate90(),
            Turn::Half => image.rotate180(),
            Turn::ThreeQuarters => image.rotate270(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Turn;
    use image::{DynamicImage, GrayImage, Luma};

    #[test]
    fn a_baseline_gives_the_nearest_quarter_turn() {
        assert_eq!(Turn::of_baseline((10.0, 10.0), (200.0, 14.0)), Turn::Upright);
        assert_eq!(Turn::of_baseline((10.0, 10.0), (16.0, 200.0)), Turn::Quarter);
        assert_eq!(Turn::of_baseline((200.0, 10.0), (10.0, 3.0)), Turn::Half);
        assert_eq!(Turn::of_baseline((10.0, 200.0), (12.0, 10.0)), Turn::ThreeQuarters);
    }

    #[test]
    fn straighten_undoes_every_turn() {
        // An asymmetric 3×2 image: one black pixel at its top-left corner.
        let upright = DynamicImage::ImageLuma8(GrayImage::from_fn(3, 2, |x, y| Luma([if (x, y) == (0, 0) { 0 } else { 255 }])));
        for turn in Turn::ALL {
            let turned = turn.apply(&upright);
            assert_eq!(*turn.straighten(&turned), upright, "{turn:?}");
        }
        assert_eq!(
            (Turn::Quarter.apply(&upright).width(), Turn::Quarter.apply(&upright).height()),
            (2, 3)
        );
    }
}
