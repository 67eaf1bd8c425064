//! The file types Sceau accepts, and the one list of those accepted for each category: the
//! server's checks, the journey page's `accept` attribute and script, the messages and the
//! OpenAPI media types all come from it.

use crate::vocabulary::{wire_enum, DocumentCategory};

/// The one list of the file types accepted for each category: the server's checks, the journey
/// page's `accept` attribute and script, the messages and the OpenAPI media types all come from
/// it. Identity documents are photos; administrative ones may also be one-page PDFs or scans.
pub fn accepted(category: DocumentCategory) -> &'static [FileKind] {
    match category {
        DocumentCategory::Identite => &[FileKind::Jpeg, FileKind::Png, FileKind::Webp],
        DocumentCategory::Administratif => &[FileKind::Pdf, FileKind::Tiff, FileKind::Jpeg, FileKind::Png, FileKind::Webp],
    }
}

/// The accepted MIME types of a category, comma-separated as an `accept` attribute wants them.
pub fn accept_attribute(category: DocumentCategory) -> String {
    let types: Vec<&str> = accepted(category).iter().map(|kind| kind.content_type()).collect();
    types.join(",")
}

/// What a category accepts, in words: one-page formats first, then photos, e.g. "a one-page
/// PDF or TIFF, or a JPEG, PNG or WebP image". `words` gives the language's connectives.
pub fn describe_accepted(category: DocumentCategory, words: &AcceptedWords) -> String {
    let (paged, photos): (Vec<FileKind>, Vec<FileKind>) = accepted(category).iter().partition(|kind| kind.is_paged());
    let list = |kinds: &[FileKind]| {
        let labels: Vec<&str> = kinds.iter().map(|kind| kind.label()).collect();
        match labels.split_last() {
            Some((last, [])) => (*last).to_owned(),
            Some((last, rest)) => format!("{} {} {last}", rest.join(", "), words.or),
            None => String::new(),
        }
    };
    let photos = format!("{} {}", words.photo_before, list(&photos)).trim().to_owned() + words.photo_after;
    if paged.is_empty() {
        photos
    } else {
        format!(
            "{} {}{}, {} {photos}",
            words.paged_before,
            list(&paged),
            words.paged_after,
            words.or
        )
    }
}

/// The words around the format names in [`describe_accepted`], per language.
pub struct AcceptedWords {
    pub or: &'static str,
    pub paged_before: &'static str,
    pub paged_after: &'static str,
    pub photo_before: &'static str,
    pub photo_after: &'static str,
}

impl AcceptedWords {
    pub const ENGLISH: AcceptedWords = AcceptedWords {
        or: "or",
        paged_before: "a one-page",
        paged_after: "",
        photo_before: "a",
        photo_after: " image",
    };
    pub const FRENCH: AcceptedWords = AcceptedWords {
        or: "ou",
        paged_before: "un",
        paged_after: " d’une page",
        photo_before: "une photo",
        photo_after: "",
    };
}

wire_enum!(
    /// A file type the service accepts, recognised from its bytes and persisted by this name.
    FileKind { Jpeg => "jpeg", Png => "png", Webp => "webp", Pdf => "pdf", Tiff => "tiff" }
);

impl FileKind {
    /// The MIME type to serve the file with.
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Jpeg => "image/jpeg",
            Self::Png => "image/png",
            Self::Webp => "image/webp",
            Self::Pdf => "application/pdf",
            Self::Tiff => "image/tiff",
        }
    }

    /// The kind served with `content_type` (see [`FileKind::content_type`]).
    pub fn from_content_type(content_type: &str) -> Option<FileKind> {
        Self::ALL.iter().copied().find(|kind| kind.content_type() == content_type)
    }

    /// The usual file name extension.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Jpeg => "jpg",
            Self::Tiff => "tif",
            other => other.as_str(),
        }
    }

    /// Whether a document of `category` may be of this kind.
    pub fn allowed_for(self, category: DocumentCategory) -> bool {
        accepted(category).contains(&self)
    }

    /// The name users know the format by, for messages ("the PNG image ...").
    pub fn label(self) -> &'static str {
        match self {
            Self::Jpeg => "JPEG",
            Self::Png => "PNG",
            Self::Webp => "WebP",
            Self::Pdf => "PDF",
            Self::Tiff => "TIFF",
        }
    }

    /// A format that can hold several pages, of which one only is accepted.
    pub fn is_paged(self) -> bool {
        matches!(self, Self::Pdf | Self::Tiff)
    }

    /// True for the kinds decoded as a single raster image.
    pub fn is_image(self) -> bool {
        !matches!(self, Self::Pdf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_allowed_per_category() {
        assert!(FileKind::Webp.allowed_for(DocumentCategory::Identite));
        assert!(!FileKind::Pdf.allowed_for(DocumentCategory::Identite));
        assert!(!FileKind::Tiff.allowed_for(DocumentCategory::Identite));
        assert!(FileKind::Tiff.allowed_for(DocumentCategory::Administratif));
        assert_eq!(
            describe_accepted(DocumentCategory::Identite, &AcceptedWords::ENGLISH),
            "a JPEG, PNG or WebP image"
        );
        assert_eq!(
            describe_accepted(DocumentCategory::Administratif, &AcceptedWords::ENGLISH),
            "a one-page PDF or TIFF, or a JPEG, PNG or WebP image"
        );
        assert_eq!(
            describe_accepted(DocumentCategory::Administratif, &AcceptedWords::FRENCH),
            "un PDF ou TIFF d’une page, ou une photo JPEG, PNG ou WebP"
        );
        assert_eq!(
            accept_attribute(DocumentCategory::Administratif),
            "application/pdf,image/tiff,image/jpeg,image/png,image/webp"
        );
        assert_eq!(serde_json::to_value(FileKind::Webp).unwrap(), "webp");
        assert_eq!(FileKind::Pdf.content_type(), "application/pdf");
        assert_eq!(FileKind::Jpeg.as_str(), "jpeg");
        assert_eq!(FileKind::from_content_type("image/tiff"), Some(FileKind::Tiff));
        assert_eq!("tif".parse::<FileKind>().ok(), None);
    }
}
