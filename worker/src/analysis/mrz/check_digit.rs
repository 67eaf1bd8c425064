//! The ICAO 9303 check digit (weights 7-3-1, modulo 10), the only integrity protection an MRZ
//! carries, kept apart so every layout computes it the same way.

/// The value ICAO gives a character: digits are themselves, `A`..`Z` are 10..35, the filler `<`
/// is 0. Anything else has no value: the text was misread and no digit can be computed over it.
pub fn char_value(c: u8) -> Option<u32> {
    match c {
        b'0'..=b'9' => Some(u32::from(c - b'0')),
        b'A'..=b'Z' => Some(u32::from(c - b'A') + 10),
        b'<' => Some(0),
        _ => None,
    }
}

/// The check digit of `data`, `None` when a character has no ICAO value.
pub fn compute(data: &[u8]) -> Option<u8> {
    const WEIGHTS: [u32; 3] = [7, 3, 1];
    let mut sum = 0u32;
    for (i, &c) in data.iter().enumerate() {
        sum += char_value(c)? * WEIGHTS[i % 3];
    }
    // The remainder is below 10, so the narrowing cannot lose anything.
    Some((sum % 10) as u8)
}

/// Whether `digit` is the check digit of `data`; `None` when it cannot be decided because a
/// character of either is unreadable. A filler `<` in the digit's place counts as 0, which
/// ICAO allows for an empty optional field and which can never hide a wrong digit elsewhere.
pub fn verify(data: &[u8], digit: u8) -> Option<bool> {
    let expected = compute(data)?;
    let found = match digit {
        b'0'..=b'9' => digit - b'0',
        b'<' => 0,
        _ => return None,
    };
    Some(expected == found)
}

/// The check digit of `data` as the character written in an MRZ, for the encoder.
pub fn digit_char(data: &[u8]) -> Option<char> {
    compute(data).map(|d| char::from(b'0' + d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn icao_specimen_values() {
        // ICAO 9303 Part 3 worked examples.
        assert_eq!(compute(b"L898902C3"), Some(6));
        assert_eq!(compute(b"740812"), Some(2));
        assert_eq!(compute(b"120415"), Some(9));
        assert_eq!(compute(b"D23145890"), Some(7));
        assert_eq!(compute(b"ZE184226B<<<<<"), Some(1));
    }

    #[test]
    fn filler_and_letters_have_their_values() {
        assert_eq!(char_value(b'<'), Some(0));
        assert_eq!(char_value(b'A'), Some(10));
        assert_eq!(char_value(b'Z'), Some(35));
        assert_eq!(compute(b"<<<<<<"), Some(0));
        assert_eq!(compute(b""), Some(0));
    }

    #[test]
    fn unreadable_characters_leave_the_digit_undecided() {
        assert_eq!(compute(b"L89?902C3"), None);
        assert_eq!(verify(b"L898902C3", b'?'), None);
        assert_eq!(verify(b"L898902C3", b'6'), Some(true));
        assert_eq!(verify(b"L898902C3", b'5'), Some(false));
        assert_eq!(verify(b"<<<<", b'<'), Some(true));
        assert_eq!(digit_char(b"L898902C3"), Some('6'));
    }
}
