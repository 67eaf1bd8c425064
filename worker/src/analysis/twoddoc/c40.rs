//! C40 packing (ISO/IEC 16022 §5.2.5, spec §10.3): a barcode reader unpacks C40 for codes written in C40
//! mode, but a binary 2D-Doc (spec §3.3.4) keeps its country and signer identifiers packed as C40 inside the
//! binary header, so they are unpacked here.

use thiserror::Error;

/// The C40 basic set: values 0–2 are shifts (absent from 2D-Doc identifiers), 3 is space.
const BASIC_SET: &[u8; 40] = b"\0\0\0 0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// Why C40 bytes could not be unpacked (or text packed).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum C40Error {
    #[error("C40 data has an odd number of bytes ({0})")]
    OddLength(usize),
    #[error("C40 pair {0:#06x} is out of range")]
    OutOfRange(u16),
    #[error("C40 value {0} is a shift, outside the basic set 2D-Doc identifiers use")]
    Shift(u16),
    #[error("'{0}' is outside the C40 basic set")]
    Unencodable(char),
    #[error("C40 packs characters by three; {0} characters cannot be packed without padding")]
    Incomplete(usize),
}

/// Unpacks C40 byte pairs into text of the basic set (three characters per pair).
pub fn decode(bytes: &[u8]) -> Result<String, C40Error> {
    if !bytes.len().is_multiple_of(2) {
        return Err(C40Error::OddLength(bytes.len()));
    }
    let mut text = String::with_capacity(bytes.len() / 2 * 3);
    for pair in bytes.chunks_exact(2) {
        let packed = u16::from_be_bytes([pair[0], pair[1]]);
        // The packed value is 1600·c1 + 40·c2 + c3 + 1, so 0 and anything past 64000 cannot come from three values.
        let value = packed.checked_sub(1).filter(|v| *v < 64000).ok_or(C40Error::OutOfRange(packed))?;
        for digit in [value / 1600, (value / 40) % 40, value % 40] {
            text.push(basic_char(digit)?);
        }
    }
    Ok(text)
}

/// Packs basic-set text (a multiple of three characters) into C40 byte pairs.
pub fn encode(text: &str) -> Result<Vec<u8>, C40Error> {
    let values = text.chars().map(basic_value).collect::<Result<Vec<u16>, _>>()?;
    if !values.len().is_multiple_of(3) {
        return Err(C40Error::Incomplete(values.len()));
    }
    Ok(values
        .chunks_exact(3)
        .flat_map(|t| (1600 * t[0] + 40 * t[1] + t[2] + 1).to_be_bytes())
        .collect())
}

fn basic_char(value: u16) -> Result<char, C40Error> {
    match value {
        0..=2 => Err(C40Error::Shift(value)),
        _ => Ok(char::from(BASIC_SET[usize::from(value)])),
    }
}

fn basic_value(c: char) -> Result<u16, C40Error> {
    match c {
        ' ' => Ok(3),
        '0'..='9' => Ok(4 + (c as u16 - '0' as u16)),
        'A'..='Z' => Ok(14 + (c as u16 - 'A' as u16)),
        _ => Err(C40Error::Unencodable(c)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_examples_round_trip() {
        // Spec §3.3.4: "FRA" gives 0x7BA7 and "FR0112345" gives 0x7B9D200F2D0A.
        assert_eq!(encode("FRA").unwrap(), [0x7B, 0xA7]);
        assert_eq!(decode(&[0x7B, 0xA7]).unwrap(), "FRA");
        assert_eq!(decode(&[0x7B, 0x9D, 0x20, 0x0F, 0x2D, 0x0A]).unwrap(), "FR0112345");
        assert_eq!(encode("FR0112345").unwrap(), [0x7B, 0x9D, 0x20, 0x0F, 0x2D, 0x0A]);
    }

    #[test]
    fn rejects_what_identifiers_cannot_hold() {
        assert_eq!(decode(&[0x7B]), Err(C40Error::OddLength(1)));
        assert_eq!(decode(&[0x00, 0x00]), Err(C40Error::OutOfRange(0)));
        assert_eq!(decode(&[0xFE, 0x00]), Err(C40Error::OutOfRange(0xFE00)));
        assert_eq!(decode(&[0x00, 0x01]), Err(C40Error::Shift(0)));
        assert_eq!(encode("FR"), Err(C40Error::Incomplete(2)));
        assert_eq!(encode("fra"), Err(C40Error::Unencodable('f')));
    }
}
