//! How an identity document's front is turned, passed from the thread that reads its zone to the
//! one that looks for its portrait: a front whose portrait does not show upright is then searched
//! at that one turn, not at the three others (four detections for a front without a face).

use std::sync::{Condvar, Mutex, PoisonError};

use crate::analysis::orientation::Turn;

/// Told once; a wait returns as soon as it is.
#[derive(Default)]
pub struct FrontTurn {
    told: Mutex<Option<Option<Turn>>>,
    changed: Condvar,
}

impl FrontTurn {
    /// Tells the front's turn, `None` when its zone was not read; only the first telling counts.
    pub fn tell(&self, turn: Option<Turn>) {
        let mut told = self.told.lock().unwrap_or_else(PoisonError::into_inner);
        if told.is_none() {
            *told = Some(turn);
            self.changed.notify_all();
        }
    }

    /// Waits until the turn is told.
    pub fn wait(&self) -> Option<Turn> {
        let mut told = self.told.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(turn) = *told {
                return turn;
            }
            told = self.changed.wait(told).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// A guard that tells `None` when dropped untold: the waiting thread is never left waiting,
    /// whatever way the reading of the zone ends (a panic included).
    pub fn told_on_drop(&self) -> TellOnDrop<'_> {
        TellOnDrop(self)
    }
}

pub struct TellOnDrop<'a>(&'a FrontTurn);

impl Drop for TellOnDrop<'_> {
    fn drop(&mut self) {
        self.0.tell(None);
    }
}

/// The quarter turns clockwise that bring a front turned by `turn` upright, as the face search
/// counts them.
pub fn quarter_turns(turn: Turn) -> u8 {
    match turn {
        Turn::Upright => 0,
        Turn::Quarter => 3,
        Turn::Half => 2,
        Turn::ThreeQuarters => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_telling_counts_and_a_dropped_guard_tells_none() {
        let front = FrontTurn::default();
        std::thread::scope(|scope| {
            let waiting = scope.spawn(|| front.wait());
            front.tell(Some(Turn::Quarter));
            front.tell(None);
            assert_eq!(waiting.join().unwrap(), Some(Turn::Quarter));
        });
        let untold = FrontTurn::default();
        std::thread::scope(|scope| {
            let waiting = scope.spawn(|| untold.wait());
            drop(untold.told_on_drop());
            assert_eq!(waiting.join().unwrap(), None);
        });
    }

    #[test]
    fn the_face_search_turns_the_image_back_as_the_zone_found_it() {
        use image::{DynamicImage, RgbImage};

        let image = DynamicImage::ImageRgb8(RgbImage::from_fn(3, 2, |x, y| image::Rgb([x as u8, y as u8, 0])));
        for turn in Turn::ALL {
            let upright = turn.straighten(&image).to_rgb8();
            let rgb = image.to_rgb8();
            let by_quarters = crate::analysis::face::compare::quarter_turns(&rgb, quarter_turns(turn));
            assert_eq!(upright, *by_quarters, "{turn:?}");
        }
    }
}
