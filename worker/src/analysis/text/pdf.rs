//! The text layer of a PDF's first page, as a reader would read it, for comparing with the seal's data.
//!
//! `lopdf`'s own `Document::extract_text` decodes fonts correctly on simple files but reads a content stream as a
//! flat list of strings: words placed side by side by a text-positioning operator inside one text object come
//! out glued ("Salaire de base2 790,00 €", as Cairo or Chrome write them), text inside form XObjects is lost, a
//! font's `/Encoding` is preferred to its `/ToUnicode` map (garbage for subset fonts whose glyph names are not
//! standard), and one undecodable font fails the whole page. This walker uses `lopdf`'s decoding but follows the
//! text position (matrices, glyph widths, `TJ` adjustments) to put spaces and line breaks where the page shows
//! gaps, reads form XObjects, prefers `/ToUnicode`, and skips what it cannot decode. All work is bounded.
//!
//! Only text a reader can see counts, since the seal is compared with what the page shows: the commonest edit of
//! a PDF paints an opaque box over a value and writes another on it, leaving the sealed value in the text layer.
//! So text is dropped when it is invisible (rendering mode 3, a font under 1 pt, outside the page), when a later
//! opaque rectangle or image covers it, and when it is white with nothing dark drawn under it.

use std::collections::{BTreeMap, HashSet};

use lopdf::content::Content;
use lopdf::Encoding;
use lopdf::{Dictionary, Document, LoadOptions, Object, ObjectId};
use thiserror::Error;

use crate::analysis::pdf_tree::inherited_media_box;

/// Ceiling on any single decompressed stream (object streams at load time, content streams, font maps).
const MAX_STREAM_BYTES: usize = 32 * 1024 * 1024;
/// Most characters kept from one page; a page of a form has a few thousand.
pub const MAX_TEXT_CHARS: usize = 512 * 1024;
/// Most content-stream operations interpreted, across the page and its form XObjects.
const MAX_OPERATIONS: usize = 2_000_000;
/// How deep form XObjects are followed.
const MAX_FORM_DEPTH: usize = 4;
/// A horizontal gap wider than this share of the font size is a space between words.
const WORD_GAP: f32 = 0.15;
/// A vertical move larger than this share of the font size starts a new line.
const LINE_GAP: f32 = 0.5;
/// Glyph width, in thousandths of the font size, when the font gives none (the standard 14 fonts).
const DEFAULT_WIDTH: f32 = 500.0;

/// Why a PDF's text layer could not be read. Messages never quote the document's text.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PdfTextError {
    #[error("PDF could not be read: {0}")]
    Unreadable(String),
    #[error("PDF has no page")]
    NoPage,
}

/// The text of the first page of the PDF `bytes`, one line per line of text as positioned on the page (in content
/// order, not re-sorted). Empty when the page has no text layer (a scan): the caller then falls back to OCR.
pub fn first_page_text(bytes: &[u8]) -> Result<String, PdfTextError> {
    let options = LoadOptions {
        max_decompressed_size: Some(MAX_STREAM_BYTES),
        ..LoadOptions::default()
    };
    let doc = Document::load_mem_with_options(bytes, options).map_err(|e| PdfTextError::Unreadable(e.to_string()))?;
    let page_id = *doc.get_pages().values().next().ok_or(PdfTextError::NoPage)?;
    let content = doc
        .get_page_content_with_limit(page_id, MAX_STREAM_BYTES)
        .map_err(|e| PdfTextError::Unreadable(e.to_string()))?;
    let resources = page_resources(&doc, page_id);

    // Every font the page may use is resolved before the walk, so the copies made without `/Encoding` (see
    // [`font_info`]) live as long as the encodings that borrow them.
    let mut fonts = Vec::new();
    collect_fonts(&doc, &resources, 0, &mut HashSet::new(), &mut fonts);
    let stripped: Vec<Option<Dictionary>> = fonts
        .iter()
        .map(|font| {
            (font.has(b"ToUnicode") && font.has(b"Encoding")).then(|| {
                let mut copy = (*font).clone();
                copy.remove(b"Encoding");
                copy
            })
        })
        .collect();
    let infos: BTreeMap<usize, FontInfo<'_>> = fonts
        .iter()
        .zip(&stripped)
        .map(|(font, copy)| (address(font), font_info(&doc, font, copy.as_ref())))
        .collect();

    let mut walker = Walker {
        doc: &doc,
        fonts: &infos,
        runs: Vec::new(),
        covers: Vec::new(),
        events: 0,
        chars: 0,
        operations: 0,
        form_runs: 0,
        forms: HashSet::new(),
        last: None,
    };
    walker.run(&content, &resources, Graphics::default(), 0);
    Ok(walker.finish(media_box(&doc, page_id)))
}

/// The page's `/MediaBox`, inherited from the page tree if need be.
fn media_box(doc: &Document, page_id: ObjectId) -> Option<Rect> {
    let values = inherited_media_box(doc, page_id)?;
    let n: Vec<f32> = values.iter().filter_map(|v| get_number(doc, v)).collect();
    (n.len() == 4).then(|| Rect::spanning(&[(n[0], n[1]), (n[2], n[3])]))
}

/// Most fonts resolved for one page.
const MAX_FONTS: usize = 256;

/// A resolved dictionary's address identifies it: the document is not modified while its text is read.
fn address(dict: &Dictionary) -> usize {
    dict as *const Dictionary as usize
}

/// The font dictionaries of `resources` and of the form XObjects they name, recursively.
fn collect_fonts<'a>(
    doc: &'a Document,
    resources: &[&'a Dictionary],
    depth: usize,
    forms: &mut HashSet<usize>,
    out: &mut Vec<&'a Dictionary>,
) {
    for res in resources {
        if let Some(font_dict) = get_dict(doc, res, b"Font") {
            for (_, value) in font_dict.iter() {
                let Some(font) = doc.dereference(value).ok().and_then(|(_, o)| o.as_dict().ok()) else {
                    continue;
                };
                if out.len() < MAX_FONTS && !out.iter().any(|f| address(f) == address(font)) {
                    out.push(font);
                }
            }
        }
        if depth >= MAX_FORM_DEPTH {
            continue;
        }
        let Some(xobjects) = get_dict(doc, res, b"XObject") else { continue };
        for (_, value) in xobjects.iter() {
            let Some(stream) = doc.dereference(value).ok().and_then(|(_, o)| o.as_stream().ok()) else {
                continue;
            };
            let is_form = stream.dict.get(b"Subtype").and_then(Object::as_name).is_ok_and(|s| s == b"Form");
            if !is_form || !forms.insert(address(&stream.dict)) {
                continue;
            }
            if let Some(form_resources) = get_dict(doc, &stream.dict, b"Resources") {
                collect_fonts(doc, &[form_resources], depth + 1, forms, out);
            }
        }
    }
}

/// The page's resource dictionaries, nearest first (its own, then inherited from the page tree).
fn page_resources(doc: &Document, page_id: ObjectId) -> Vec<&Dictionary> {
    let Ok((own, inherited)) = doc.get_page_resources(page_id) else {
        return Vec::new();
    };
    own.into_iter()
        .chain(inherited.into_iter().filter_map(|id| doc.get_dictionary(id).ok()))
        .collect()
}

/// A dictionary entry, following references.
fn get_dict<'a>(doc: &'a Document, dict: &'a Dictionary, key: &[u8]) -> Option<&'a Dictionary> {
    let object = dict.get(key).ok()?;
    doc.dereference(object).ok()?.1.as_dict().ok()
}

fn get_number(doc: &Document, object: &Object) -> Option<f32> {
    doc.dereference(object).ok()?.1.as_float().ok().filter(|f| f.is_finite())
}

/// What the walker needs of a font: how to turn its codes into text, and how far each glyph moves the pen.
struct FontInfo<'a> {
    encoding: Option<Encoding<'a>>,
    /// Bytes per character code: 2 for composite (Type0) fonts, 1 otherwise.
    code_len: usize,
    widths: Widths,
}

enum Widths {
    /// Simple fonts: `/FirstChar` and `/Widths`.
    Simple { first: u32, widths: Vec<f32>, missing: f32 },
    /// Composite fonts: the descendant's `/W` ranges and `/DW`.
    Composite {
        ranges: Vec<(u32, u32, f32)>,
        singles: BTreeMap<u32, f32>,
        default: f32,
    },
}

impl Widths {
    fn of(&self, code: u32) -> f32 {
        match self {
            Widths::Simple { first, widths, missing } => code
                .checked_sub(*first)
                .and_then(|i| widths.get(i as usize))
                .copied()
                .filter(|w| *w > 0.0)
                .unwrap_or(*missing),
            Widths::Composite { ranges, singles, default } => singles
                .get(&code)
                .copied()
                .or_else(|| ranges.iter().find(|(lo, hi, _)| (*lo..=*hi).contains(&code)).map(|(_, _, w)| *w))
                .unwrap_or(*default),
        }
    }
}

/// How to read a font. `without_encoding` is the font's copy without `/Encoding`, made when it has a `/ToUnicode`.
fn font_info<'a>(doc: &'a Document, font: &'a Dictionary, without_encoding: Option<&'a Dictionary>) -> FontInfo<'a> {
    // A `/ToUnicode` map is the PDF's own statement of what the glyphs mean (ISO 32000-1 §9.10.2): it wins over
    // `/Encoding`, which lopdf would otherwise read first.
    let source = without_encoding.unwrap_or(font);
    let encoding = source.get_font_encoding_with_limit(doc, MAX_STREAM_BYTES).ok();
    let composite = font.get(b"Subtype").and_then(Object::as_name).is_ok_and(|s| s == b"Type0");
    let widths = if composite {
        composite_widths(doc, font)
    } else {
        simple_widths(doc, font)
    };
    FontInfo {
        encoding,
        code_len: if composite { 2 } else { 1 },
        widths,
    }
}

fn simple_widths(doc: &Document, font: &Dictionary) -> Widths {
    let first = font.get(b"FirstChar").ok().and_then(|o| get_number(doc, o)).unwrap_or(0.0).max(0.0) as u32;
    let widths = font
        .get(b"Widths")
        .ok()
        .and_then(|o| doc.dereference(o).ok())
        .and_then(|(_, o)| o.as_array().ok())
        .map(|a| a.iter().map(|w| get_number(doc, w).unwrap_or(0.0)).collect())
        .unwrap_or_default();
    let missing = get_dict(doc, font, b"FontDescriptor")
        .and_then(|d| d.get(b"MissingWidth").ok())
        .and_then(|o| get_number(doc, o))
        .filter(|w| *w > 0.0)
        .unwrap_or(DEFAULT_WIDTH);
    Widths::Simple { first, widths, missing }
}

fn composite_widths(doc: &Document, font: &Dictionary) -> Widths {
    let descendant = font
        .get(b"DescendantFonts")
        .ok()
        .and_then(|o| doc.dereference(o).ok())
        .and_then(|(_, o)| o.as_array().ok())
        .and_then(|a| a.first())
        .and_then(|o| doc.dereference(o).ok())
        .and_then(|(_, o)| o.as_dict().ok());
    let default = descendant
        .and_then(|d| d.get(b"DW").ok())
        .and_then(|o| get_number(doc, o))
        .unwrap_or(1000.0);
    let mut ranges = Vec::new();
    let mut singles = BTreeMap::new();
    let w = descendant
        .and_then(|d| d.get(b"W").ok())
        .and_then(|o| doc.dereference(o).ok())
        .and_then(|(_, o)| o.as_array().ok());
    if let Some(w) = w {
        // `/W` alternates `c [w1 w2 …]` (widths of c, c+1, …) and `c_first c_last w` (ISO 32000-1 §9.7.4.3).
        let mut i = 0;
        while i < w.len() {
            let Some(start) = get_number(doc, &w[i]).map(|f| f as u32) else {
                break;
            };
            match w.get(i + 1).and_then(|o| doc.dereference(o).ok()).map(|(_, o)| o) {
                Some(Object::Array(list)) => {
                    for (k, width) in list.iter().enumerate().take(65_536) {
                        if let Some(width) = get_number(doc, width) {
                            singles.insert(start.saturating_add(k as u32), width);
                        }
                    }
                    i += 2;
                }
                Some(last) => {
                    let (Some(last), Some(width)) = (get_number(doc, last), w.get(i + 2).and_then(|o| get_number(doc, o))) else {
                        break;
                    };
                    ranges.push((start, last as u32, width));
                    i += 3;
                }
                None => break,
            }
        }
    }
    Widths::Composite { ranges, singles, default }
}

/// An affine matrix `[a b c d e f]` as PDF writes them.
#[derive(Clone, Copy, Debug)]
struct Matrix([f32; 6]);

impl Matrix {
    const IDENTITY: Matrix = Matrix([1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);

    /// `self × other`: first this transformation, then `other`.
    fn then(self, other: Matrix) -> Matrix {
        let [a, b, c, d, e, f] = self.0;
        let [a2, b2, c2, d2, e2, f2] = other.0;
        Matrix([
            a * a2 + b * c2,
            a * b2 + b * d2,
            c * a2 + d * c2,
            c * b2 + d * d2,
            e * a2 + f * c2 + e2,
            e * b2 + f * d2 + f2,
        ])
    }

    fn apply(&self, (x, y): (f32, f32)) -> (f32, f32) {
        let [a, b, c, d, e, f] = self.0;
        (a * x + c * y + e, b * x + d * y + f)
    }

    fn translate(tx: f32, ty: f32) -> Matrix {
        Matrix([1.0, 0.0, 0.0, 1.0, tx, ty])
    }

    fn from_operands(doc: &Document, operands: &[Object]) -> Option<Matrix> {
        if operands.len() != 6 {
            return None;
        }
        let mut m = [0.0; 6];
        for (slot, o) in m.iter_mut().zip(operands) {
            *slot = get_number(doc, o)?;
        }
        Some(Matrix(m))
    }

    /// How much a unit length along the text's x axis measures on the page.
    fn scale(&self) -> f32 {
        let [a, b, ..] = self.0;
        (a * a + b * b).sqrt()
    }
}

/// An axis-aligned rectangle on the page.
#[derive(Clone, Copy, Debug)]
struct Rect {
    x0: f32,
    y0: f32,
    x1: f32,
    y1: f32,
}

impl Rect {
    fn spanning(points: &[(f32, f32)]) -> Rect {
        let mut r = Rect {
            x0: f32::INFINITY,
            y0: f32::INFINITY,
            x1: f32::NEG_INFINITY,
            y1: f32::NEG_INFINITY,
        };
        for &(x, y) in points {
            r.x0 = r.x0.min(x);
            r.y0 = r.y0.min(y);
            r.x1 = r.x1.max(x);
            r.y1 = r.y1.max(y);
        }
        r
    }

    /// The unit square `(x, y, w, h)` of user space through `m`.
    fn transformed(m: &Matrix, x: f32, y: f32, w: f32, h: f32) -> Rect {
        Rect::spanning(&[m.apply((x, y)), m.apply((x + w, y)), m.apply((x, y + h)), m.apply((x + w, y + h))])
    }

    fn contains(&self, (x, y): (f32, f32)) -> bool {
        (self.x0..=self.x1).contains(&x) && (self.y0..=self.y1).contains(&y)
    }
}

/// The text state of ISO 32000-1 §9.3.
#[derive(Clone, Copy)]
struct TextState {
    char_spacing: f32,
    word_spacing: f32,
    /// `Tz` / 100.
    horizontal_scaling: f32,
    leading: f32,
    font_size: f32,
    /// Address of the current font's dictionary, a key of the walker's fonts.
    font: Option<usize>,
    /// `Tr`: 3 (neither fill nor stroke) and 7 (clip only) draw nothing.
    render_mode: i64,
}

impl Default for TextState {
    fn default() -> Self {
        TextState {
            char_spacing: 0.0,
            word_spacing: 0.0,
            horizontal_scaling: 1.0,
            leading: 0.0,
            font_size: 0.0,
            font: None,
            render_mode: 0,
        }
    }
}

/// The graphics state `q` saves and `Q` restores, as far as visibility needs it.
#[derive(Clone, Copy)]
struct Graphics {
    ctm: Matrix,
    text: TextState,
    /// The fill colour is white (gray 1, RGB 1 1 1, CMYK 0 0 0 0).
    white_fill: bool,
    /// Fills hide what is under them: constant alpha 1 and a normal blend mode.
    opaque: bool,
}

impl Default for Graphics {
    fn default() -> Self {
        Graphics {
            ctm: Matrix::IDENTITY,
            text: TextState::default(),
            white_fill: false,
            opaque: true,
        }
    }
}

/// Where the last shown glyph ended, on the page, and how big its font was there.
#[derive(Clone, Copy)]
struct Pen {
    x: f32,
    y: f32,
    /// Unit vector of the text direction, to tell a move along the line from a move to another line.
    dir: (f32, f32),
    size: f32,
}

/// One shown string, kept until the whole page is read: something drawn later may cover it.
struct Run {
    text: String,
    /// What separates it from the previous run, from their positions.
    separator: Option<char>,
    /// When it was drawn, among runs and covers.
    order: usize,
    /// Points at mid-height of the run (start, middle, end): it is hidden when a cover holds all three.
    probes: [(f32, f32); 3],
    white: bool,
    /// Drawn invisibly (rendering mode, size): never shown.
    invisible: bool,
}

/// A filled area. An opaque rectangle or image hides the text drawn before it inside its area; any fill (a
/// rounded banner too) may be the dark background that makes later white text legible.
struct Cover {
    rect: Rect,
    order: usize,
    white: bool,
    /// A rectangle or image, opaque: it hides what it covers. Other shapes only count as backgrounds, since their
    /// bounding box is larger than what they paint.
    hides: bool,
}

/// Most covers recorded; past it, later ones hide nothing (text is kept rather than lost).
const MAX_COVERS: usize = 10_000;
/// Most run-against-cover tests when deciding what is hidden; past it, the remaining text is kept.
const MAX_COVER_TESTS: usize = 20_000_000;
/// Most form XObjects read per page, however often they are drawn.
const MAX_FORM_RUNS: usize = 1_000;
/// A font smaller than this on the page (in points) cannot be read.
const MIN_VISIBLE_SIZE: f32 = 1.0;

/// The state while a content stream is read.
struct State {
    g: Graphics,
    saved: Vec<Graphics>,
    tm: Matrix,
    tlm: Matrix,
    /// Rectangles of the path being built, on the page; `None` once it has other segments.
    path: Option<Vec<Rect>>,
    /// Bounding box of every point of the path being built, on the page.
    path_box: Option<Rect>,
}

impl State {
    fn add_points(&mut self, points: &[(f32, f32)]) {
        let mut all: Vec<(f32, f32)> = points.iter().map(|p| self.g.ctm.apply(*p)).collect();
        if let Some(r) = self.path_box {
            all.extend([(r.x0, r.y0), (r.x1, r.y1)]);
        }
        self.path_box = Some(Rect::spanning(&all));
    }

    fn clear_path(&mut self) {
        self.path = Some(Vec::new());
        self.path_box = None;
    }
}

/// Most nested `q` kept; deeper saves are ignored rather than grown without bound.
const MAX_SAVED_STATES: usize = 256;

struct Walker<'d, 'f> {
    doc: &'d Document,
    fonts: &'f BTreeMap<usize, FontInfo<'d>>,
    runs: Vec<Run>,
    covers: Vec<Cover>,
    /// Counter giving runs and covers their drawing order.
    events: usize,
    chars: usize,
    operations: usize,
    form_runs: usize,
    /// Forms being read, so a form that draws itself does not loop.
    forms: HashSet<usize>,
    last: Option<Pen>,
}

impl<'d> Walker<'d, '_> {
    fn full(&self) -> bool {
        self.chars >= MAX_TEXT_CHARS || self.operations >= MAX_OPERATIONS
    }

    fn next_event(&mut self) -> usize {
        self.events += 1;
        self.events
    }

    /// Reads one content stream; `resources` are searched in order for the names it uses.
    fn run(&mut self, content: &[u8], resources: &[&'d Dictionary], graphics: Graphics, depth: usize) {
        let Ok(content) = Content::decode(content) else {
            tracing::debug!("a PDF content stream could not be parsed; its text is skipped");
            return;
        };
        let mut state = State {
            g: graphics,
            saved: Vec::new(),
            tm: Matrix::IDENTITY,
            tlm: Matrix::IDENTITY,
            path: Some(Vec::new()),
            path_box: None,
        };
        for op in &content.operations {
            if self.full() {
                return;
            }
            self.operations += 1;
            let num = |i: usize| op.operands.get(i).and_then(|o| get_number(self.doc, o));
            match op.operator.as_str() {
                "q" if state.saved.len() < MAX_SAVED_STATES => state.saved.push(state.g),
                "Q" => {
                    if let Some(g) = state.saved.pop() {
                        state.g = g;
                    }
                }
                "cm" => {
                    if let Some(m) = Matrix::from_operands(self.doc, &op.operands) {
                        state.g.ctm = m.then(state.g.ctm);
                    }
                }
                "gs" => {
                    if let Some(name) = op.operands.first().and_then(|o| o.as_name().ok()) {
                        if let Some(opaque) = self.ext_gstate_opaque(resources, name) {
                            state.g.opaque = opaque;
                        }
                    }
                }
                "g" | "rg" | "k" | "sc" | "scn" => state.g.white_fill = is_white(op.operator.as_str(), &op.operands, self.doc),
                "re" => {
                    if let (Some(x), Some(y), Some(w), Some(h)) = (num(0), num(1), num(2), num(3)) {
                        let rect = Rect::transformed(&state.g.ctm, x, y, w, h);
                        if let Some(path) = state.path.as_mut() {
                            path.push(rect);
                        }
                        state.add_points(&[(x, y), (x + w, y + h)]);
                    }
                }
                "m" | "l" | "c" | "v" | "y" | "h" => {
                    state.path = None;
                    let values: Vec<f32> = op.operands.iter().filter_map(|o| get_number(self.doc, o)).collect();
                    let points: Vec<(f32, f32)> = values.chunks_exact(2).map(|p| (p[0], p[1])).collect();
                    state.add_points(&points);
                }
                "f" | "F" | "f*" | "B" | "B*" | "b" | "b*" => {
                    match (state.path.take(), state.path_box) {
                        (Some(rects), _) if !rects.is_empty() => {
                            for rect in rects {
                                self.cover(rect, state.g.white_fill, state.g.opaque);
                            }
                        }
                        (_, Some(area)) => self.cover(area, state.g.white_fill, false),
                        _ => {}
                    }
                    state.clear_path();
                }
                "n" | "S" | "s" => state.clear_path(),
                "BT" => {
                    state.tm = Matrix::IDENTITY;
                    state.tlm = Matrix::IDENTITY;
                }
                "Tf" => {
                    state.g.text.font = op
                        .operands
                        .first()
                        .and_then(|o| o.as_name().ok())
                        .and_then(|n| self.font(resources, n));
                    state.g.text.font_size = num(1).unwrap_or(0.0);
                }
                "Tc" => state.g.text.char_spacing = num(0).unwrap_or(0.0),
                "Tw" => state.g.text.word_spacing = num(0).unwrap_or(0.0),
                "Tz" => state.g.text.horizontal_scaling = num(0).unwrap_or(100.0) / 100.0,
                "TL" => state.g.text.leading = num(0).unwrap_or(0.0),
                "Tr" => state.g.text.render_mode = op.operands.first().and_then(|o| o.as_i64().ok()).unwrap_or(0),
                "Td" | "TD" => {
                    let (tx, ty) = (num(0).unwrap_or(0.0), num(1).unwrap_or(0.0));
                    if op.operator == "TD" {
                        state.g.text.leading = -ty;
                    }
                    state.tlm = Matrix::translate(tx, ty).then(state.tlm);
                    state.tm = state.tlm;
                }
                "Tm" => {
                    if let Some(m) = Matrix::from_operands(self.doc, &op.operands) {
                        state.tlm = m;
                        state.tm = m;
                    }
                }
                "T*" => next_line(&mut state),
                "Tj" => {
                    if let Some(Object::String(bytes, _)) = op.operands.first() {
                        self.show(&mut state, bytes);
                    }
                }
                "'" => {
                    next_line(&mut state);
                    if let Some(Object::String(bytes, _)) = op.operands.first() {
                        self.show(&mut state, bytes);
                    }
                }
                "\"" => {
                    state.g.text.word_spacing = num(0).unwrap_or(0.0);
                    state.g.text.char_spacing = num(1).unwrap_or(0.0);
                    next_line(&mut state);
                    if let Some(Object::String(bytes, _)) = op.operands.get(2) {
                        self.show(&mut state, bytes);
                    }
                }
                "TJ" => {
                    let Some(Object::Array(items)) = op.operands.first() else {
                        continue;
                    };
                    for item in items {
                        match item {
                            Object::String(bytes, _) => self.show(&mut state, bytes),
                            other => {
                                // A number moves the pen back by thousandths of the font size: a large negative
                                // one is how some producers write the space between words.
                                if let Some(n) = get_number(self.doc, other) {
                                    let tx = -n / 1000.0 * state.g.text.font_size * state.g.text.horizontal_scaling;
                                    state.tm = Matrix::translate(tx, 0.0).then(state.tm);
                                }
                            }
                        }
                    }
                }
                "Do" => {
                    if let Some(name) = op.operands.first().and_then(|o| o.as_name().ok()) {
                        self.xobject(&state, resources, name, depth);
                    }
                }
                // An inline image paints its unit square like an image XObject.
                "BI" => {
                    let masked = matches!(op.operands.first(), Some(Object::Stream(s)) if is_mask(&s.dict));
                    let area = Rect::transformed(&state.g.ctm, 0.0, 0.0, 1.0, 1.0);
                    self.cover(area, false, state.g.opaque && !masked);
                }
                _ => {}
            }
        }
    }

    fn cover(&mut self, rect: Rect, white: bool, hides: bool) {
        if self.covers.len() < MAX_COVERS {
            let order = self.next_event();
            self.covers.push(Cover { rect, order, white, hides });
        }
    }

    /// Whether the named graphics state makes fills opaque; `None` when it does not set transparency.
    fn ext_gstate_opaque(&self, resources: &[&'d Dictionary], name: &[u8]) -> Option<bool> {
        let doc = self.doc;
        let gs = resources.iter().find_map(|res| {
            let states = get_dict(doc, res, b"ExtGState")?;
            doc.dereference(states.get(name).ok()?).ok()?.1.as_dict().ok()
        })?;
        let alpha = gs.get(b"ca").ok().and_then(|o| get_number(doc, o));
        let blend = gs.get(b"BM").ok().and_then(|o| doc.dereference(o).ok()).map(|(_, o)| match o {
            Object::Name(n) => n.as_slice() == b"Normal" || n.as_slice() == b"Compatible",
            Object::Array(a) => a
                .first()
                .and_then(|n| n.as_name().ok())
                .is_some_and(|n| n == b"Normal" || n == b"Compatible"),
            _ => true,
        });
        if alpha.is_none() && blend.is_none() {
            return None;
        }
        Some(alpha.is_none_or(|a| a >= 0.99) && blend.unwrap_or(true))
    }

    /// The font named `name` in the first of `resources` that defines it.
    fn font(&self, resources: &[&'d Dictionary], name: &[u8]) -> Option<usize> {
        resources.iter().find_map(|res| {
            let fonts = get_dict(self.doc, res, b"Font")?;
            let font = self.doc.dereference(fonts.get(name).ok()?).ok()?.1.as_dict().ok()?;
            let key = address(font);
            self.fonts.contains_key(&key).then_some(key)
        })
    }

    /// Draws the XObject `name`: an opaque image covers its area; a form is read, with its own resources first
    /// and the caller's as a fallback.
    fn xobject(&mut self, state: &State, resources: &[&'d Dictionary], name: &[u8], depth: usize) {
        let doc = self.doc;
        let stream = resources.iter().find_map(|res| {
            let xobjects = get_dict(doc, res, b"XObject")?;
            doc.dereference(xobjects.get(name).ok()?).ok()?.1.as_stream().ok()
        });
        let Some(stream) = stream else { return };
        match stream.dict.get(b"Subtype").and_then(Object::as_name) {
            Ok(b"Image") => {
                let area = Rect::transformed(&state.g.ctm, 0.0, 0.0, 1.0, 1.0);
                self.cover(area, false, state.g.opaque && !is_mask(&stream.dict));
                return;
            }
            Ok(b"Form") => {}
            _ => return,
        }
        let key = address(&stream.dict);
        if depth >= MAX_FORM_DEPTH || self.form_runs >= MAX_FORM_RUNS || !self.forms.insert(key) {
            return;
        }
        self.form_runs += 1;
        let Ok(content) = stream.get_plain_content_with_limit(MAX_STREAM_BYTES) else {
            self.forms.remove(&key);
            return;
        };
        let matrix = stream
            .dict
            .get(b"Matrix")
            .ok()
            .and_then(|o| doc.dereference(o).ok())
            .and_then(|(_, o)| o.as_array().ok())
            .and_then(|a| Matrix::from_operands(doc, a))
            .unwrap_or(Matrix::IDENTITY);
        let mut nested: Vec<&'d Dictionary> = get_dict(doc, &stream.dict, b"Resources").into_iter().collect();
        nested.extend_from_slice(resources);
        let graphics = Graphics {
            ctm: matrix.then(state.g.ctm),
            ..state.g
        };
        self.run(&content, &nested, graphics, depth + 1);
        self.forms.remove(&key);
    }

    /// Shows one string: decodes it, notes how it is separated from the previous text, and moves the pen by the
    /// glyphs' widths.
    fn show(&mut self, state: &mut State, bytes: &[u8]) {
        let Some(font) = state.g.text.font.and_then(|key| self.fonts.get(&key)) else {
            return;
        };
        let text = font
            .encoding
            .as_ref()
            .and_then(|e| e.bytes_to_string(bytes).ok())
            .unwrap_or_default();

        let start = state.tm.then(state.g.ctm);
        let size = state.g.text.font_size.abs() * vertical_scale(&start);
        let dir = direction(&start);
        let pen = Pen {
            x: start.0[4],
            y: start.0[5],
            dir,
            size,
        };
        let separator = self.separator(pen);

        let t = state.g.text;
        let mut advance = 0.0;
        for code_bytes in bytes.chunks(font.code_len) {
            let code = code_bytes.iter().fold(0u32, |acc, b| acc << 8 | u32::from(*b));
            let width = font.widths.of(code) / 1000.0 * t.font_size;
            let word = if font.code_len == 1 && code == 32 { t.word_spacing } else { 0.0 };
            advance += (width + t.char_spacing + word) * t.horizontal_scaling;
        }
        state.tm = Matrix::translate(advance, 0.0).then(state.tm);
        let end = state.tm.then(state.g.ctm);
        self.last = Some(Pen {
            x: end.0[4],
            y: end.0[5],
            dir,
            size,
        });

        // Mid-height of the glyphs, in text space a third of the font size above the baseline.
        let lift = t.font_size * 0.3;
        let probe = |m: &Matrix| m.apply((0.0, lift));
        let middle = Matrix::translate(advance / 2.0, 0.0).then(start);
        let text: String = text
            .chars()
            .filter(|c| *c != '\u{fffd}' && (!c.is_control() || *c == '\t'))
            .map(|c| if c == '\t' { ' ' } else { c })
            .take(MAX_TEXT_CHARS - self.chars)
            .collect();
        self.chars += text.chars().count();
        let order = self.next_event();
        self.runs.push(Run {
            text,
            separator,
            order,
            probes: [probe(&start), probe(&middle), probe(&end)],
            white: state.g.white_fill,
            invisible: matches!(t.render_mode, 3 | 7) || size < MIN_VISIBLE_SIZE,
        });
    }

    /// The separator the gap from the previous glyph to `next` calls for: a line break when the text moved to
    /// another line, a space when it jumped ahead on the same line, nothing when it goes straight on.
    fn separator(&self, next: Pen) -> Option<char> {
        let last = self.last?;
        let size = last.size.max(next.size).max(0.1);
        let (dx, dy) = (next.x - last.x, next.y - last.y);
        let along = dx * last.dir.0 + dy * last.dir.1;
        let across = -dx * last.dir.1 + dy * last.dir.0;
        if across.abs() > LINE_GAP * size {
            Some('\n')
        } else if along > WORD_GAP * size || along < -size {
            Some(' ')
        } else {
            None
        }
    }

    /// The visible text, runs joined by their separators; a hidden run leaves at least a space behind.
    fn finish(self, page: Option<Rect>) -> String {
        let mut budget = MAX_COVER_TESTS;
        let mut out = String::new();
        let mut gap: Option<char> = None;
        for run in &self.runs {
            let off_page = page.is_some_and(|p| !run.probes.iter().any(|pt| p.contains(*pt)));
            let hidden = run.invisible || off_page || self.covered(run, &mut budget) || (run.white && !self.on_dark(run, &mut budget));
            let separator = match (run.separator, gap) {
                (Some('\n'), _) | (_, Some('\n')) => Some('\n'),
                (Some(c), _) | (None, Some(c)) => Some(c),
                (None, None) => None,
            };
            if hidden {
                gap = separator.or(Some(' '));
                continue;
            }
            gap = None;
            match separator {
                Some('\n') if !out.is_empty() && !out.ends_with('\n') => {
                    while out.ends_with(' ') {
                        out.pop();
                    }
                    out.push('\n');
                }
                Some(' ') if !out.is_empty() && !out.ends_with(char::is_whitespace) && !run.text.starts_with(char::is_whitespace) => {
                    out.push(' ')
                }
                _ => {}
            }
            out.push_str(&run.text);
        }
        out.trim().to_owned()
    }

    /// Whether an opaque rectangle or image drawn after `run` hides it.
    fn covered(&self, run: &Run, budget: &mut usize) -> bool {
        self.covers
            .iter()
            .filter(|c| c.hides && c.order > run.order)
            .any(|c| spend(budget) && run.probes.iter().all(|p| c.rect.contains(*p)))
    }

    /// Whether something dark was drawn under a white `run`, making it legible.
    fn on_dark(&self, run: &Run, budget: &mut usize) -> bool {
        if *budget == 0 {
            return true;
        }
        self.covers
            .iter()
            .filter(|c| c.order < run.order && !c.white)
            .any(|c| spend(budget) && run.probes.iter().all(|p| c.rect.contains(*p)))
    }
}

/// Counts one containment test; false once the budget is spent, so nothing more is hidden.
fn spend(budget: &mut usize) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    true
}

/// An image that paints only through a mask (stencil masks, soft masks, colour-key masks) is not opaque.
fn is_mask(dict: &Dictionary) -> bool {
    dict.get(b"ImageMask").and_then(Object::as_bool).unwrap_or(false)
        || dict.get(b"IM").and_then(Object::as_bool).unwrap_or(false)
        || dict.has(b"SMask")
        || dict.has(b"Mask")
}

/// Whether a fill-colour operator sets white: gray 1, RGB 1 1 1, CMYK 0 0 0 0 (`sc`/`scn` read by their count).
fn is_white(operator: &str, operands: &[Object], doc: &Document) -> bool {
    let values: Vec<f32> = operands.iter().filter_map(|o| get_number(doc, o)).collect();
    if values.len() != operands.len() {
        return false; // A pattern name: not a plain white.
    }
    match (operator, values.as_slice()) {
        ("g" | "sc" | "scn", [gray]) => *gray >= 0.98,
        ("rg" | "sc" | "scn", [r, g, b]) => [r, g, b].iter().all(|v| **v >= 0.98),
        ("k" | "sc" | "scn", [c, m, y, k]) => [c, m, y, k].iter().all(|v| **v <= 0.02),
        _ => false,
    }
}

fn next_line(state: &mut State) {
    state.tlm = Matrix::translate(0.0, -state.g.text.leading).then(state.tlm);
    state.tm = state.tlm;
}

/// How much the text's vertical unit measures on the page: the font size's scale.
fn vertical_scale(m: &Matrix) -> f32 {
    let [_, _, c, d, ..] = m.0;
    (c * c + d * d).sqrt()
}

fn direction(m: &Matrix) -> (f32, f32) {
    let scale = m.scale();
    if scale > f32::EPSILON {
        (m.0[0] / scale, m.0[1] / scale)
    } else {
        (1.0, 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::test_fixtures::{helvetica, one_page_pdf, PdfFixture};
    use lopdf::{dictionary, Stream};

    fn samples() -> std::path::PathBuf {
        let dir = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/samples/administratif"));
        assert!(dir.is_dir(), "reference data missing at {}", dir.display());
        dir
    }

    fn sample_text(name: &str) -> String {
        let bytes = std::fs::read(samples().join(name)).unwrap();
        first_page_text(&bytes).unwrap()
    }

    /// The lines of `pdftotext -layout`, each with its runs of spaces reduced to one: what the text should say.
    fn lines(text: &str) -> Vec<String> {
        text.lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|l| !l.is_empty())
            .collect()
    }

    #[test]
    fn reads_the_samples_like_pdftotext() {
        let facture = sample_text("sample-facture-v04.pdf");
        let facture_lines = lines(&facture);
        for expected in [
            "EAUX DE DÉMONSTRATION",
            "1 rue de la Démo, 13001 Marseille",
            "Régie - SIRET 78901234100010",
            "Monsieur Victor DEMO",
            "15 RUE DE LA DEMONSTRATION",
            "13001 MARSEILLE",
            "Facture n° E2026110077",
            "Numéro client : EAU4410099",
            "Montant TTC à payer 38,65 €",
            "Prélèvement automatique le 18/11/2026.",
        ] {
            assert!(
                facture_lines.iter().any(|l| l == expected),
                "{expected:?} not in {facture_lines:#?}"
            );
        }
        let bulletin = lines(&sample_text("sample-bulletin-v03-montant-different.pdf"));
        for expected in [
            "DÉMO CONSEIL SAS",
            "Madame Ines DEMONSTRATION",
            "Net imposable 2 910,05 €",
            "Période du 01/10/2026 au 31/10/2026",
        ] {
            assert!(bulletin.iter().any(|l| l == expected), "{expected:?} not in {bulletin:#?}");
        }
        let avis = lines(&sample_text("sample-avis-impot-v04-rfr-modifie.pdf"));
        for expected in [
            "Référence de l'avis : 2675C01112223",
            "Numéro fiscal du déclarant 1 3123456789012",
            "Revenu fiscal de référence 12 900 €",
        ] {
            assert!(avis.iter().any(|l| l == expected), "{expected:?} not in {avis:#?}");
        }
        // Only the first page: the two-page invoice's terms are on page 2.
        let two_pages = sample_text("sample-facture-deux-pages.pdf");
        assert!(two_pages.contains("Monsieur Victor DEMO"));
        assert!(!two_pages.contains("Conditions générales"));
    }

    /// A one-page PDF with the given fonts and content.
    fn pdf(fonts: Dictionary, content: &str) -> Vec<u8> {
        one_page_pdf(dictionary! { "Font" => fonts }, content)
    }

    #[test]
    fn separates_words_placed_by_positioning_inside_one_text_object() {
        // As Cairo writes it: label and amount in one BT, the amount placed with Td; lines moved with Tm and Td;
        // a y-flipped CTM.
        let content = "1 0 0 -1 0 842 cm BT 10 0 0 -10 50 100 Tm /F1 1 Tf (Salaire de base)Tj 42.7 0 Td (2 790,00 \\200)Tj \
                       -42.7 -1.5 Td (Net imposable)Tj 42.2 0 Td (2 910,05 \\200)Tj 12 0 0 -12 300 300 Tm (Madame Ines)Tj \
                       0 -1.3 Td (3 RUE DU BANC)Tj ET";
        let text = first_page_text(&pdf(helvetica(), content)).unwrap();
        assert_eq!(
            lines(&text),
            vec![
                "Salaire de base 2 790,00 €",
                "Net imposable 2 910,05 €",
                "Madame Ines",
                "3 RUE DU BANC"
            ],
            "{text:?}"
        );
    }

    #[test]
    fn reads_kerned_words_and_tj_spaces() {
        // Letters kerned apart by small TJ adjustments stay one word; a large one is a space (TeX writes them).
        let content = "BT /F1 12 Tf 50 700 Td [(Nu)-20(m)15(\\351ro)-600(fiscal)] TJ 0 -20 Td [(A)(B)(C)] TJ ET";
        let text = first_page_text(&pdf(helvetica(), content)).unwrap();
        assert_eq!(lines(&text), vec!["Numéro fiscal", "ABC"], "{text:?}");
    }

    #[test]
    fn prefers_to_unicode_and_reads_forms() {
        // A subset font whose /Differences use private glyph names: only its /ToUnicode says what they are.
        let cmap = "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n\
                    /CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n\
                    /CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n\
                    1 begincodespacerange\n<00> <FF>\nendcodespacerange\n\
                    3 beginbfchar\n<01> <0044>\n<02> <00C9>\n<03> <004D>\nendbfchar\n\
                    endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n";
        let mut doc_fonts = helvetica();
        doc_fonts.set(
            "F2",
            dictionary! {
                "Type" => "Font", "Subtype" => "TrueType", "BaseFont" => "ABCDEF+Sub", "FirstChar" => 1,
                "Widths" => vec![600.into(), 600.into(), 600.into()],
                "Encoding" => dictionary! { "Type" => "Encoding", "Differences" => vec![1.into(), "g1".into(), "g2".into(), "g3".into()] },
            },
        );
        let mut fixture = PdfFixture::new();
        let cmap_id = fixture.document().add_object(Stream::new(dictionary! {}, cmap.as_bytes().to_vec()));
        if let Ok(Object::Dictionary(f2)) = doc_fonts.get_mut(b"F2") {
            f2.set("ToUnicode", cmap_id);
        }
        let form = Stream::new(
            dictionary! { "Type" => "XObject", "Subtype" => "Form", "BBox" => vec![0.into(), 0.into(), 100.into(), 100.into()] },
            b"BT /F1 10 Tf 0 0 Td (dans un formulaire) Tj ET".to_vec(),
        );
        let form_id = fixture.document().add_object(form);
        let resources = dictionary! { "Font" => doc_fonts, "XObject" => dictionary! { "Fm1" => form_id } };
        let bytes = fixture
            .page(resources, "BT /F2 10 Tf 50 700 Td <010203> Tj ET q 1 0 0 1 50 600 cm /Fm1 Do Q")
            .bytes();

        let text = first_page_text(&bytes).unwrap();
        assert_eq!(lines(&text), vec!["DÉM", "dans un formulaire"], "{text:?}");
    }

    #[test]
    fn a_form_drawing_itself_does_not_loop() {
        let mut fixture = PdfFixture::new();
        let form_id = fixture.document().new_object_id();
        let form = Stream::new(
            dictionary! { "Type" => "XObject", "Subtype" => "Form", "Resources" => dictionary! { "XObject" => dictionary! { "Me" => form_id } } },
            b"/Me Do".to_vec(),
        );
        fixture.document().objects.insert(form_id, Object::Stream(form));
        let resources = dictionary! { "Font" => helvetica(), "XObject" => dictionary! { "Me" => form_id } };
        let bytes = fixture.page(resources, "BT /F1 10 Tf (ok) Tj ET /Me Do").bytes();
        assert_eq!(first_page_text(&bytes).unwrap(), "ok");
    }

    #[test]
    fn text_a_reader_cannot_see_is_left_out() {
        // The whiteout edit: the sealed amount stays in the text layer under a white box, the new one on top.
        let whiteout = "BT /F1 10 Tf 50 700 Td (Net imposable) Tj 200 0 Td (2 210,05) Tj ET \
                        1 1 1 rg 245 695 60 15 re f 0 0 0 rg BT /F1 10 Tf 250 700 Td (2 910,05) Tj ET";
        assert_eq!(first_page_text(&pdf(helvetica(), whiteout)).unwrap(), "Net imposable 2 910,05");
        // A black redaction box hides the text too; a box drawn first is a background and hides nothing.
        let background = "0.9 g 40 690 300 20 re f 0 g BT /F1 10 Tf 50 700 Td (on a grey band) Tj ET 0 g 45 650 100 20 re f \
                          BT /F1 10 Tf 50 655 Td (under a black box) Tj ET 0 g 45 650 100 20 re f";
        assert_eq!(first_page_text(&pdf(helvetica(), background)).unwrap(), "on a grey band");
        // A translucent highlight does not hide; an opaque image does.
        let highlight = "BT /F1 10 Tf 50 700 Td (highlighted) Tj ET q /Half gs 1 1 0 rg 45 695 80 15 re f Q";
        let mut fixture = PdfFixture::new();
        let image = Stream::new(
            dictionary! { "Type" => "XObject", "Subtype" => "Image", "Width" => 1, "Height" => 1, "ColorSpace" => "DeviceGray", "BitsPerComponent" => 8 },
            vec![255],
        );
        let image_id = fixture.document().add_object(image);
        let resources = dictionary! {
            "Font" => helvetica(), "XObject" => dictionary! { "Im1" => image_id },
            "ExtGState" => dictionary! { "Half" => dictionary! { "ca" => 0.4 } },
        };
        let content = format!("{highlight} BT /F1 10 Tf 50 600 Td (under an image) Tj ET q 200 0 0 30 40 590 cm /Im1 Do Q");
        let bytes = fixture.page(resources, content).bytes();
        assert_eq!(first_page_text(&bytes).unwrap(), "highlighted");

        // Invisible rendering, a microscopic font, text off the page, white on white: all left out. White on a
        // dark band is legible and kept.
        let hidden = "BT /F1 10 Tf 50 700 Td (visible) Tj ET BT 3 Tr /F1 10 Tf 50 680 Td (mode three) Tj 0 Tr ET \
                      BT /F1 0.5 Tf 50 660 Td (tiny) Tj ET BT /F1 10 Tf 50 2000 Td (off the page) Tj ET \
                      1 g BT /F1 10 Tf 50 640 Td (white) Tj ET 0 g 40 600 200 20 re f 1 g BT /F1 10 Tf 50 605 Td (banner) Tj ET";
        assert_eq!(
            lines(&first_page_text(&pdf(helvetica(), hidden)).unwrap()),
            vec!["visible", "banner"]
        );
        // A curved dark shape is a background for white text, but its bounding box hides nothing.
        let curved =
            "BT /F1 10 Tf 50 614 Td (under the curve) Tj ET 0 0 0.5 rg 40 600 m 240 600 l 240 620 l 40 620 l 30 610 40 600 40 600 c f \
                      1 g BT /F1 10 Tf 50 605 Td (on the curve) Tj ET";
        assert_eq!(
            lines(&first_page_text(&pdf(helvetica(), curved)).unwrap()),
            vec!["under the curve", "on the curve"]
        );
    }

    #[test]
    fn bad_input_is_an_error_and_no_text_is_empty() {
        assert!(matches!(first_page_text(b"not a pdf"), Err(PdfTextError::Unreadable(_))));
        assert_eq!(first_page_text(&pdf(helvetica(), "0 0 m 10 10 l S")).unwrap(), "");
        // A font name the resources do not define: its text is skipped, not an error.
        assert_eq!(
            first_page_text(&pdf(helvetica(), "BT /F9 10 Tf (x) Tj ET BT /F1 10 Tf (y) Tj ET")).unwrap(),
            "y"
        );
    }
}
