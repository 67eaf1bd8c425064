//! A look at a PDF's object streams before lopdf parses it. An object stream's index says where
//! each of its objects starts; a parser that trusts it materialises every entry, so an index that
//! points thousands of entries at one large string turns kilobytes into gigabytes. This pre-scan
//! refuses such indexes (too many entries, offsets that repeat, go backwards or point past the
//! content) with bounded work: it inflates each stream at most once, up to a cap, and keeps only
//! its index. The sandbox (see [`crate::sandbox`]) still bounds whatever this does not foresee.

mod predictor;

use flate2::read::ZlibDecoder;
use predictor::Predictor;
use std::io::Read;

/// Most objects one object stream may hold: writers use a hundred or so, a few thousand at most.
pub const MAX_ENTRIES: u64 = 10_000;
/// Most bytes one object stream may inflate to.
pub const MAX_INFLATED: u64 = 64 * 1024 * 1024;
/// Most bytes all the object streams of one file may inflate to.
pub const MAX_INFLATED_TOTAL: u64 = 256 * 1024 * 1024;
/// Most object streams one file may hold.
const MAX_STREAMS: usize = 1_000;
/// Farthest an object stream's `obj` and `stream` keywords may lie from its `/ObjStm`, so a file
/// full of stray `/ObjStm` names costs a bounded search each.
const DICTIONARY_REACH: usize = 4096;

/// Why an object stream is refused. Messages are one sentence and never quote the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrescanError {
    #[error("the PDF has more than {MAX_STREAMS} object streams")]
    TooManyStreams,
    #[error("an object stream of the PDF lists more than {MAX_ENTRIES} objects")]
    TooManyEntries,
    #[error("the object streams of the PDF inflate to more than their limit")]
    TooLarge,
    #[error("an object stream's index of the PDF is malformed (repeated, decreasing or out-of-range offsets)")]
    BadIndex,
    #[error("the PDF writes an object stream's type with escapes, as files do to hide one")]
    Disguised,
    #[error("an object stream of the PDF has decode parameters this service does not read")]
    UnreadableParameters,
}

/// Checks every object stream of `pdf`; streams under a filter other than Flate are left to the
/// parser (and the sandbox).
pub fn check_object_streams(pdf: &[u8]) -> Result<(), PrescanError> {
    if has_escaped_name(pdf, b"ObjStm") {
        return Err(PrescanError::Disguised);
    }
    let mut streams = 0;
    let mut from = 0;
    let mut budget = MAX_INFLATED_TOTAL;
    while let Some(at) = find(&pdf[from..], b"/ObjStm").map(|i| i + from) {
        from = at + b"/ObjStm".len();
        streams += 1;
        if streams > MAX_STREAMS {
            return Err(PrescanError::TooManyStreams);
        }
        if let Some(stream) = ObjectStream::around(pdf, at)? {
            budget = stream.check(budget)?;
            // Its data was read once; a name inside it is not another stream.
            from = from.max(stream.end);
        }
    }
    Ok(())
}

/// The parts of one object stream the check needs.
struct ObjectStream<'a> {
    entries: u64,
    first: u64,
    flate: bool,
    predictor: Predictor,
    data: &'a [u8],
    /// Where its data ends in the file.
    end: usize,
}

impl<'a> ObjectStream<'a> {
    /// The stream whose dictionary holds the `/ObjStm` at `at`: its dictionary runs from the
    /// `obj` keyword before it to the `stream` keyword after it. None when it is not one this
    /// scan reads; refused when its decode parameters are not.
    fn around(pdf: &'a [u8], at: usize) -> Result<Option<Self>, PrescanError> {
        Self::find_around(pdf, at).transpose()
    }

    fn find_around(pdf: &'a [u8], at: usize) -> Option<Result<Self, PrescanError>> {
        let start = rfind(&pdf[at.saturating_sub(DICTIONARY_REACH)..at], b"obj")? + at.saturating_sub(DICTIONARY_REACH);
        let keyword = at + find(&pdf[at..pdf.len().min(at + DICTIONARY_REACH)], b"stream")?;
        let dictionary = &pdf[start..keyword];
        let entries = integer_after(dictionary, b"/N")?;
        let first = integer_after(dictionary, b"/First")?;
        let filters = find(dictionary, b"/Filter").map(|i| &dictionary[i..]);
        let flate = filters.is_some_and(|f| find(f, b"/FlateDecode").is_some() || find(f, b"/Fl").is_some());
        // Other filters are the parser's business (and the sandbox's).
        if filters.is_some() && !flate {
            return None;
        }
        // A predictor applies to inflated data only.
        let predictor = if flate {
            match Predictor::of(dictionary) {
                Ok(predictor) => predictor,
                Err(refused) => return Some(Err(refused)),
            }
        } else {
            Predictor::Identity
        };
        let mut body = keyword + b"stream".len();
        if pdf.get(body) == Some(&b'\r') {
            body += 1;
        }
        if pdf.get(body) == Some(&b'\n') {
            body += 1;
        }
        let end = body + find(&pdf[body..], b"endstream")?;
        Some(Ok(Self {
            entries,
            first,
            flate,
            predictor,
            data: &pdf[body..end],
            end,
        }))
    }

    /// Checks the stream within what is left of the file's `budget` of inflated bytes; returns
    /// what is left after it.
    fn check(&self, budget: u64) -> Result<u64, PrescanError> {
        if self.entries > MAX_ENTRIES {
            return Err(PrescanError::TooManyEntries);
        }
        let (index, total) = if self.flate {
            inflate_index(self.data, self.first, self.predictor, budget.min(MAX_INFLATED))?
        } else {
            let cut = usize::try_from(self.first)
                .ok()
                .filter(|&f| f <= self.data.len())
                .ok_or(PrescanError::BadIndex)?;
            (self.data[..cut].to_vec(), self.data.len() as u64)
        };
        let content = total.checked_sub(self.first).ok_or(PrescanError::BadIndex)?;
        check_index(&index, self.entries, content)?;
        Ok(budget.saturating_sub(total))
    }
}

/// The first `first` bytes of the stream's data (inflated, its predictor undone), and the length
/// of its whole data; refused when it inflates beyond `cap`.
fn inflate_index(data: &[u8], first: u64, predictor: Predictor, cap: u64) -> Result<(Vec<u8>, u64), PrescanError> {
    let wanted = predictor.encoded_len(first);
    if wanted > cap {
        return Err(PrescanError::TooLarge);
    }
    let mut decoder = ZlibDecoder::new(data).take(cap + 1);
    let mut encoded = Vec::new();
    // A truncated or corrupt stream is the parser's to refuse: judge what inflated.
    let _ = (&mut decoder).take(wanted).read_to_end(&mut encoded);
    let mut rest = 0u64;
    let mut chunk = [0u8; 64 * 1024];
    loop {
        match decoder.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => rest += n as u64,
        }
    }
    let total = encoded.len() as u64 + rest;
    if total > cap {
        return Err(PrescanError::TooLarge);
    }
    let mut index = predictor.decode(&encoded);
    index.truncate(usize::try_from(first).unwrap_or(usize::MAX));
    Ok((index, predictor.decoded_len(total)))
}

/// `entries` pairs of object number and offset; offsets strictly increase and stay inside `content`.
fn check_index(index: &[u8], entries: u64, content: u64) -> Result<(), PrescanError> {
    let mut numbers = index
        .split(|b| b.is_ascii_whitespace())
        .filter(|token| !token.is_empty())
        .map(|token| std::str::from_utf8(token).ok().and_then(|t| t.parse::<u64>().ok()));
    let mut previous: Option<u64> = None;
    for _ in 0..entries {
        let (Some(Some(_number)), Some(Some(offset))) = (numbers.next(), numbers.next()) else {
            return Err(PrescanError::BadIndex);
        };
        if offset >= content.max(1) || previous.is_some_and(|p| offset <= p) {
            return Err(PrescanError::BadIndex);
        }
        previous = Some(offset);
    }
    Ok(())
}

/// The non-negative integer that follows `key` (a name followed by a delimiter) in `dictionary`.
fn integer_after(dictionary: &[u8], key: &[u8]) -> Option<u64> {
    let mut from = 0;
    while let Some(i) = find(&dictionary[from..], key).map(|i| i + from) {
        from = i + key.len();
        // `/N` must not match `/Name`: the name ends at a delimiter.
        let rest = &dictionary[from..];
        if rest.first().is_some_and(|b| b.is_ascii_alphanumeric()) {
            continue;
        }
        let digits: Vec<u8> = rest
            .iter()
            .skip_while(|b| b.is_ascii_whitespace())
            .take_while(|b| b.is_ascii_digit())
            .copied()
            .collect();
        return std::str::from_utf8(&digits).ok()?.parse().ok();
    }
    None
}

/// Whether a name written with `#xx` escapes anywhere in the file decodes to `wanted`: writers
/// escape only characters a name cannot hold, never the letters of a key.
fn has_escaped_name(pdf: &[u8], wanted: &[u8]) -> bool {
    let delimiter = |b: &u8| b.is_ascii_whitespace() || b"()<>[]{}/%".contains(b);
    let mut rest = pdf;
    while let Some(slash) = rest.iter().position(|&b| b == b'/') {
        let name_start = slash + 1;
        let len = rest[name_start..].iter().position(delimiter).unwrap_or(rest.len() - name_start);
        let name = &rest[name_start..name_start + len];
        if name.contains(&b'#') && decode_name(name) == wanted {
            return true;
        }
        rest = &rest[name_start + len..];
    }
    false
}

fn decode_name(name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len());
    let mut i = 0;
    while i < name.len() {
        let hex = name
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (name[i], hex) {
            (b'#', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_fixtures::bombs;

    #[test]
    fn the_bombs_are_refused_without_parsing() {
        assert_eq!(check_object_streams(&bombs::pdf_bomb_20k()), Err(PrescanError::TooManyEntries));
        assert_eq!(check_object_streams(&bombs::pdf_bomb_small()), Err(PrescanError::BadIndex));
        assert_eq!(
            check_object_streams(&bombs::pdf_object_stream_bomb(3, 100)),
            Err(PrescanError::BadIndex)
        );
        assert_eq!(check_object_streams(&bombs::pdf_bomb_escaped_name()), Err(PrescanError::Disguised));
        // Decode parameters no longer take a stream past the scan.
        assert_eq!(check_object_streams(&bombs::pdf_bomb_past_prescan()), Err(PrescanError::BadIndex));
    }

    /// The slow file of the second audit (and the same file without its decode parameters, which
    /// crashed the page-count child) is refused from its inflated size, in milliseconds.
    #[test]
    fn a_predicted_stream_is_inflated_and_refused_within_its_cap() {
        for (name, pdf) in [
            ("predictor 1", bombs::pdf_slow_page_count()),
            ("no parameters", bombs::pdf_slow_page_count_plain()),
        ] {
            let started = std::time::Instant::now();
            assert_eq!(check_object_streams(&pdf), Err(PrescanError::TooLarge), "{name}");
            eprintln!("{name}: {} bytes refused in {:?}", pdf.len(), started.elapsed());
            assert!(
                started.elapsed() < std::time::Duration::from_secs(2),
                "{name}: {:?}",
                started.elapsed()
            );
        }
    }

    #[test]
    fn png_predicted_object_streams_are_checked_after_their_predictor() {
        let objects = ["<< /A 1 >>", "(hello)", "[1 2 3]", "<< /Type /Font /Subtype /Type1 >>"];
        for filter in 0..=2 {
            let pdf = bombs::pdf_with_predicted_object_stream(&objects, filter, 5);
            assert_eq!(check_object_streams(&pdf), Ok(()), "PNG filter {filter}");
            // The parser reads the same objects: the scan judged the index lopdf uses.
            let doc = lopdf::Document::load_mem(&pdf).unwrap();
            assert!(doc.get_object((13, 0)).is_ok(), "PNG filter {filter}");
        }
        // A predicted index whose entries all point at one object is seen as such.
        let rows: Vec<u8> = b"10 0 11 0 (x)"
            .chunks(4)
            .flat_map(|row| std::iter::once(0).chain(row.iter().copied()))
            .collect();
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut encoder, &rows).unwrap();
        let mut pdf =
            b"4 0 obj << /Type /ObjStm /N 2 /First 10 /Filter /FlateDecode /DecodeParms << /Predictor 10 /Columns 4 >> >>\nstream\n"
                .to_vec();
        pdf.extend(encoder.finish().unwrap());
        pdf.extend(b"\nendstream\nendobj\n");
        assert_eq!(check_object_streams(&pdf), Err(PrescanError::BadIndex));
        let mut pdf = bombs::pdf_with_predicted_object_stream(&objects, 2, 4);
        let at = find(&pdf, b"/Predictor 12").unwrap();
        pdf[at + b"/Predictor 1".len()] = b'9';
        assert_eq!(check_object_streams(&pdf), Err(PrescanError::UnreadableParameters));
    }

    #[test]
    fn escaped_names_are_decoded() {
        assert!(has_escaped_name(b"<< /Type /Obj#53tm >>", b"ObjStm"));
        assert!(has_escaped_name(b"<</Type/#4Fbj#53tm/N 3>>", b"ObjStm"));
        assert!(!has_escaped_name(b"<< /Type /ObjStm /BaseFont /Arial#20Bold >>", b"ObjStm"));
        assert_eq!(decode_name(b"A#20B#zz"), b"A B#zz");
    }

    #[test]
    fn sound_object_streams_pass() {
        let pdf = bombs::pdf_with_object_stream(&["<< /A 1 >>", "(hello)", "[1 2 3]"]);
        assert_eq!(check_object_streams(&pdf), Ok(()));
        // The same file parses, and holds the objects of its stream.
        let doc = lopdf::Document::load_mem(&pdf).unwrap();
        assert_eq!(doc.get_pages().len(), 1);
        assert!(doc.get_object((11, 0)).is_ok());
        assert_eq!(check_object_streams(&crate::test_fixtures::blank_pdf(2)), Ok(()));
    }

    #[test]
    fn offsets_past_the_content_or_backwards_are_refused() {
        assert_eq!(check_index(b"10 0 11 5", 2, 10), Ok(()));
        assert_eq!(check_index(b"10 0 11 10", 2, 10), Err(PrescanError::BadIndex));
        assert_eq!(check_index(b"10 5 11 2", 2, 10), Err(PrescanError::BadIndex));
        assert_eq!(check_index(b"10 0", 2, 10), Err(PrescanError::BadIndex));
        assert_eq!(check_index(b"10 x 11 2", 2, 10), Err(PrescanError::BadIndex));
    }

    #[test]
    fn keys_are_read_whole() {
        assert_eq!(integer_after(b"<< /Name 5 /N 3 /First 12 >>", b"/N"), Some(3));
        assert_eq!(integer_after(b"<< /First 12 >>", b"/First"), Some(12));
        assert_eq!(integer_after(b"<< /N /x >>", b"/N"), None);
    }
}
