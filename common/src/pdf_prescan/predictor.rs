//! The decode parameters of an inflated object stream. A predictor only rearranges the inflated
//! bytes (PNG rows each led by a filter-type byte, or TIFF differences), so the pre-scan undoes it
//! and checks the index like any other: were a predictor enough to skip the scan, one line of
//! `/DecodeParms` would let any object-stream bomb through to the parser.

use super::{find, integer_after, PrescanError, MAX_INFLATED};

/// How the rows of an inflated stream were written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Predictor {
    /// No parameters, or Predictor 1: the inflated bytes are the data.
    Identity,
    /// TIFF Predictor 2 on 8-bit samples: rows of `row` bytes, each byte the difference with the
    /// one `step` bytes before it in its row.
    Tiff { row: u64, step: u64 },
    /// PNG predictors (10 to 15): rows of `row` bytes, each led by its filter-type byte, each
    /// byte predicted from the one `step` bytes before it and from the row above.
    Png { row: u64, step: u64 },
}

impl Predictor {
    /// The predictor an object stream's dictionary (from `obj` to `stream`) names; refused when
    /// its parameters cannot be read here (an indirect dictionary, an unknown predictor, a
    /// row larger than a stream may inflate to).
    pub fn of(dictionary: &[u8]) -> Result<Self, PrescanError> {
        let Some(at) = find(dictionary, b"/DecodeParms") else {
            return Ok(Self::Identity);
        };
        let rest = &dictionary[at + b"/DecodeParms".len()..];
        let rest = trim_start(rest);
        // A filter array has an array of parameters, one per filter.
        let rest = rest.strip_prefix(b"[").map_or(rest, trim_start);
        if rest.starts_with(b"null") {
            return Ok(Self::Identity);
        }
        if !rest.starts_with(b"<<") {
            return Err(PrescanError::UnreadableParameters);
        }
        // Decode parameters hold numbers only: their dictionary ends at the first `>>`.
        let params = &rest[..find(rest, b">>").ok_or(PrescanError::UnreadableParameters)?];
        let read = |key: &[u8], default: u64| match find(params, key) {
            Some(_) => integer_after(params, key).ok_or(PrescanError::UnreadableParameters),
            None => Ok(default),
        };
        let (predictor, colors, bits, columns) = (
            read(b"/Predictor", 1)?,
            read(b"/Colors", 1)?.max(1),
            read(b"/BitsPerComponent", 8)?,
            read(b"/Columns", 1)?.max(1),
        );
        if !matches!(bits, 1 | 2 | 4 | 8 | 16) {
            return Err(PrescanError::UnreadableParameters);
        }
        let row = columns
            .checked_mul(colors)
            .and_then(|samples| samples.checked_mul(bits))
            .map(|row_bits| row_bits.div_ceil(8))
            .filter(|&row| row <= MAX_INFLATED)
            .ok_or(PrescanError::TooLarge)?;
        let step = (colors * bits).div_ceil(8);
        match predictor {
            1 => Ok(Self::Identity),
            2 if bits == 8 => Ok(Self::Tiff { row, step }),
            10..=15 => Ok(Self::Png { row, step }),
            _ => Err(PrescanError::UnreadableParameters),
        }
    }

    /// Inflated bytes that hold the first `decoded` bytes of data: whole rows, with their
    /// filter-type bytes.
    pub fn encoded_len(self, decoded: u64) -> u64 {
        match self {
            Self::Identity | Self::Tiff { .. } => decoded,
            Self::Png { row, .. } => decoded.div_ceil(row).saturating_mul(row + 1),
        }
    }

    /// Bytes of data in `encoded` inflated bytes.
    pub fn decoded_len(self, encoded: u64) -> u64 {
        match self {
            Self::Identity | Self::Tiff { .. } => encoded,
            Self::Png { row, .. } => encoded / (row + 1) * row + (encoded % (row + 1)).saturating_sub(1),
        }
    }

    /// The data of `encoded`, the inflated bytes from the start of the stream.
    pub fn decode(self, encoded: &[u8]) -> Vec<u8> {
        match self {
            Self::Identity => encoded.to_vec(),
            Self::Tiff { row, step } => {
                let (row, step) = (as_index(row), as_index(step));
                let mut data = encoded.to_vec();
                for line in data.chunks_mut(row) {
                    for i in step..line.len() {
                        line[i] = line[i].wrapping_add(line[i - step]);
                    }
                }
                data
            }
            Self::Png { row, step } => png_decode(encoded, as_index(row), as_index(step)),
        }
    }
}

/// A row or step checked against [`MAX_INFLATED`] fits any address space this runs in.
fn as_index(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Undoes the PNG filters of each row (None, Sub, Up, Average, Paeth); an unknown filter type is
/// taken as None, as decoders do.
fn png_decode(encoded: &[u8], row: usize, step: usize) -> Vec<u8> {
    let mut data: Vec<u8> = Vec::with_capacity(encoded.len());
    let mut above = vec![0u8; row];
    for line in encoded.chunks(row + 1) {
        let Some((&filter, bytes)) = line.split_first() else {
            break;
        };
        let mut current = bytes.to_vec();
        for i in 0..current.len() {
            let left = if i >= step { current[i - step] } else { 0 };
            let up = above[i];
            let upper_left = if i >= step { above[i - step] } else { 0 };
            let predicted = match filter {
                1 => left,
                2 => up,
                3 => ((u16::from(left) + u16::from(up)) / 2) as u8,
                4 => paeth(left, up, upper_left),
                _ => 0,
            };
            current[i] = current[i].wrapping_add(predicted);
        }
        above[..current.len()].copy_from_slice(&current);
        data.extend_from_slice(&current);
    }
    data
}

fn paeth(left: u8, up: u8, upper_left: u8) -> u8 {
    let estimate = i16::from(left) + i16::from(up) - i16::from(upper_left);
    let (to_left, to_up, to_upper_left) = (
        (estimate - i16::from(left)).abs(),
        (estimate - i16::from(up)).abs(),
        (estimate - i16::from(upper_left)).abs(),
    );
    if to_left <= to_up && to_left <= to_upper_left {
        left
    } else if to_up <= to_upper_left {
        up
    } else {
        upper_left
    }
}

fn trim_start(bytes: &[u8]) -> &[u8] {
    let skip = bytes.iter().take_while(|b| b.is_ascii_whitespace()).count();
    &bytes[skip..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_read_from_the_dictionary() {
        assert_eq!(Predictor::of(b"<< /Type /ObjStm /N 3 >>"), Ok(Predictor::Identity));
        assert_eq!(Predictor::of(b"<< /DecodeParms << /Predictor 1 >> >>"), Ok(Predictor::Identity));
        assert_eq!(
            Predictor::of(b"<< /DecodeParms [ << /Predictor 12 /Columns 5 >> ] >>"),
            Ok(Predictor::Png { row: 5, step: 1 })
        );
        assert_eq!(
            Predictor::of(b"<</DecodeParms<</Predictor 2/Colors 3/Columns 4>>>>"),
            Ok(Predictor::Tiff { row: 12, step: 3 })
        );
        assert_eq!(Predictor::of(b"<< /DecodeParms [null] >>"), Ok(Predictor::Identity));
        assert_eq!(Predictor::of(b"<< /DecodeParms 7 0 R >>"), Err(PrescanError::UnreadableParameters));
        assert_eq!(
            Predictor::of(b"<< /DecodeParms << /Predictor 9 >> >>"),
            Err(PrescanError::UnreadableParameters)
        );
        assert_eq!(
            Predictor::of(b"<< /DecodeParms << /Predictor 12 /Columns 99999999999999 /Colors 99999999 >> >>"),
            Err(PrescanError::TooLarge)
        );
    }

    #[test]
    fn png_rows_are_unfiltered() {
        let png = Predictor::Png { row: 3, step: 1 };
        // None, then Sub (1 2 3 from 1 1 1), then Up (+1 on each byte above).
        let encoded = [0, 7, 8, 9, 1, 1, 1, 1, 2, 1, 1, 1];
        assert_eq!(png.decode(&encoded), [7, 8, 9, 1, 2, 3, 2, 3, 4]);
        assert_eq!(png.encoded_len(4), 8);
        assert_eq!(png.decoded_len(12), 9);
        assert_eq!(png.decoded_len(10), 7);
        assert_eq!(paeth(10, 20, 10), 20);
        let tiff = Predictor::Tiff { row: 2, step: 1 };
        assert_eq!(tiff.decode(&[5, 1, 7, 2]), [5, 6, 7, 9]);
    }
}
