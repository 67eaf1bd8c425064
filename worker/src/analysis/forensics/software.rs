//! Which programs named in a file's metadata are editors. Only programs whose purpose is to alter
//! an existing picture or PDF are listed: cameras, phone systems, scanners and document generators
//! also sign their files, and flagging them would make every genuine document suspect.

/// One editor: a lowercase token, matched as a whole word or anywhere in the name.
struct Editor {
    token: &'static str,
    whole_word: bool,
}

const fn word(token: &'static str) -> Editor {
    Editor { token, whole_word: true }
}

const fn anywhere(token: &'static str) -> Editor {
    Editor { token, whole_word: false }
}

/// Picture editors and raw developers. Retouching apps for phones (Snapseed, Picsart, Facetune…)
/// are here too: a document photo has no reason to go through them. Not listed: camera firmware,
/// phone systems ("iOS 17.1", "Android", "HDR+"), scanner apps (Adobe Scan, Microsoft Lens,
/// CamScanner) and viewers, which save files without changing what they show.
const IMAGE_EDITORS: &[Editor] = &[
    word("photoshop"),
    word("gimp"),
    word("affinity"),
    word("pixelmator"),
    anywhere("paint.net"),
    word("canva"),
    word("snapseed"),
    word("lightroom"),
    word("photopea"),
    word("pixlr"),
    word("picsart"),
    word("fotor"),
    word("krita"),
    word("paintshop"),
    word("coreldraw"),
    word("luminar"),
    word("facetune"),
    word("photoscape"),
    word("inkscape"),
    word("illustrator"),
    word("darktable"),
    word("rawtherapee"),
    anywhere("capture one"),
    word("befunky"),
    word("photodirector"),
    word("polarr"),
];

/// Programs that edit the content of existing PDFs, or picture tools a bill has no reason to come
/// from. Generators (ReportLab, wkhtmltopdf, JasperReports, iText, Microsoft Word, LibreOffice
/// Writer, printer drivers) are not listed, nor are tools whose everyday use is to create or
/// convert PDFs as much as to edit them: Adobe Acrobat (Pro, DC: it also produces PDFs from Office
/// documents), Nitro, PDFelement, Preview/Quartz, PDFsam (split and merge only). iLovePDF, Sejda
/// and Smallpdf also compress and convert, but are listed because their output replaces the
/// issuer's metadata: a genuine bill keeps its issuer's generator.
const PDF_EDITORS: &[Editor] = &[
    anywhere("pdf-xchange editor"),
    anywhere("pdf-xchange pro"),
    anywhere("phantompdf"),
    anywhere("foxit pdf editor"),
    anywhere("ilovepdf"),
    anywhere("sejda"),
    anywhere("smallpdf"),
    anywhere("pdfescape"),
    anywhere("master pdf editor"),
    anywhere("pdf candy"),
    anywhere("libreoffice draw"),
    anywhere("openoffice draw"),
    word("inkscape"),
    word("illustrator"),
    word("gimp"),
    word("photoshop"),
    word("affinity"),
    word("canva"),
    word("coreldraw"),
    anywhere("paint.net"),
];

/// True when `name` (an EXIF `Software`, XMP creator tool or history agent) is a picture editor.
pub fn is_image_editor(name: &str) -> bool {
    matches_any(name, IMAGE_EDITORS)
}

/// True when a PDF's Producer or Creator names a PDF editor. LibreOffice writes its module as the
/// Creator ("Draw" for a PDF opened and re-exported, "Writer" for a generated one).
pub fn is_pdf_editor(name: &str) -> bool {
    name.trim().eq_ignore_ascii_case("draw") || matches_any(name, PDF_EDITORS)
}

fn matches_any(name: &str, editors: &[Editor]) -> bool {
    let lower = name.to_lowercase();
    editors.iter().any(|editor| {
        if editor.whole_word {
            contains_word(&lower, editor.token)
        } else {
            lower.contains(editor.token)
        }
    })
}

/// `token` in `text` with no letter or digit glued on either side ("canva" is not in "canvas").
fn contains_word(text: &str, token: &str) -> bool {
    text.match_indices(token).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + token.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}
