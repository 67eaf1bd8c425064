//! A company's logo, re-encoded before it is ever served: the uploaded bytes (PNG or JPEG, at
//! most 200 KB) are decoded in a sandbox child ([`LogoTask`]), scaled down to what a journey page
//! shows, and written again as a plain PNG. Whatever the upload carried besides its pixels
//! (metadata, trailing data, a polyglot's second reading) is gone.

use crate::document::{self, FileKind};
use crate::sandbox::{Sandbox, SandboxError};
use crate::store::branding::ReencodedLogo;
use base64::Engine as _;
use domain::branding::MAX_LOGO_BYTES;
use image::imageops::FilterType;
use serde::{Deserialize, Serialize};
use std::io::Cursor;
use std::time::Duration;

/// The largest logo served: three times the 48 px height a journey page shows it at, for
/// high-density phone screens, and a width for a wide word mark.
pub const MAX_WIDTH: u32 = 720;
pub const MAX_HEIGHT: u32 = 144;
/// A logo's pixels, read from its header before decoding: a 200 KB file cannot honestly hold more.
const MAX_SOURCE_PIXELS: u64 = 16_000_000;

/// Why a logo was refused, in words the portal and the CLI show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum LogoError {
    #[error("the logo exceeds 200 KB")]
    TooLarge,
    #[error("the logo must be a PNG or JPEG image")]
    NotAnImage,
    #[error("the logo cannot be read: {0}")]
    Unreadable(String),
}

/// The re-encoding of one logo, run in a sandbox child: the file is the logo's bytes.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct LogoTask;

impl crate::sandbox::Task for LogoTask {
    const NAME: &'static str = "logo";
    /// The new PNG, in base64 (the child's answers are JSON).
    type Output = Result<String, LogoError>;
}

/// What the child answers to a [`LogoTask`].
pub fn answer(bytes: &[u8]) -> Result<String, LogoError> {
    reencode(bytes).map(|png| base64::engine::general_purpose::STANDARD.encode(png))
}

/// The checks that need no decoding, done by the parent before it asks a child.
pub fn precheck(bytes: &[u8]) -> Result<(), LogoError> {
    if bytes.len() > MAX_LOGO_BYTES {
        return Err(LogoError::TooLarge);
    }
    match document::sniff(bytes) {
        Some(FileKind::Png | FileKind::Jpeg) => Ok(()),
        _ => Err(LogoError::NotAnImage),
    }
}

/// Why no logo was made: the file's fault, or the sandbox's (busy, unavailable: retry later).
#[derive(Debug, thiserror::Error)]
pub enum LogoRefusal {
    #[error("{0}")]
    Logo(#[from] LogoError),
    #[error("the logo cannot be checked now: {0}")]
    Sandbox(SandboxError),
}

/// CPU time a logo's re-encoding may take: a 200 KB image takes tens of milliseconds.
pub const DEADLINE: Duration = Duration::from_secs(3);
/// Longest wait for a free child.
const WAIT: Duration = Duration::from_secs(5);

/// Re-encodes `bytes` in a child of `sandbox`: the only way a logo reaches the store.
pub async fn reencode_in(sandbox: &Sandbox, bytes: &[u8]) -> Result<ReencodedLogo, LogoRefusal> {
    precheck(bytes)?;
    let answer = match sandbox.run_within(&LogoTask, &[bytes], DEADLINE, WAIT).await {
        Ok(answer) => answer?,
        Err(SandboxError::TimedOut(_) | SandboxError::LimitExceeded(_)) => {
            return Err(LogoError::Unreadable("the image is too complex".into()).into())
        }
        Err(other) => return Err(LogoRefusal::Sandbox(other)),
    };
    let png = base64::engine::general_purpose::STANDARD
        .decode(answer)
        .map_err(|e| LogoError::Unreadable(format!("the sandbox's answer: {e}")))?;
    ReencodedLogo::from_sandbox(png).ok_or_else(|| LogoError::Unreadable("the sandbox answered no PNG".into()).into())
}

/// Decodes, scales down within [`MAX_WIDTH`] × [`MAX_HEIGHT`] and writes a fresh PNG.
pub fn reencode(bytes: &[u8]) -> Result<Vec<u8>, LogoError> {
    precheck(bytes)?;
    let format = match document::sniff(bytes) {
        Some(FileKind::Png) => image::ImageFormat::Png,
        _ => image::ImageFormat::Jpeg,
    };
    let unreadable = |e: image::ImageError| LogoError::Unreadable(e.to_string());
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(256 * 1024 * 1024);
    let mut reader = image::ImageReader::with_format(Cursor::new(bytes), format);
    reader.limits(limits.clone());
    let (width, height) = reader.into_dimensions().map_err(unreadable)?;
    if u64::from(width) * u64::from(height) > MAX_SOURCE_PIXELS {
        return Err(LogoError::Unreadable(format!("{width}×{height} pixels is too large for a logo")));
    }
    let mut reader = image::ImageReader::with_format(Cursor::new(bytes), format);
    reader.limits(limits);
    let decoded = reader.decode().map_err(unreadable)?;
    let scaled = if decoded.width() > MAX_WIDTH || decoded.height() > MAX_HEIGHT {
        decoded.resize(MAX_WIDTH, MAX_HEIGHT, FilterType::Lanczos3)
    } else {
        decoded
    };
    let mut png = Vec::new();
    scaled
        .to_rgba8()
        .write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
        .map_err(unreadable)?;
    Ok(png)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = image::RgbImage::from_fn(width, height, |x, y| image::Rgb([(x % 256) as u8, (y % 256) as u8, 90]));
        let mut bytes = Vec::new();
        image.write_to(&mut Cursor::new(&mut bytes), image::ImageFormat::Png).unwrap();
        bytes
    }

    #[test]
    fn a_logo_is_scaled_down_and_written_again_without_what_trailed_it() {
        let mut upload = png(1440, 288);
        upload.extend_from_slice(b"<script>alert(1)</script>");
        let out = reencode(&upload).unwrap();
        let decoded = image::load_from_memory(&out).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (MAX_WIDTH, MAX_HEIGHT));
        assert!(!out.windows(8).any(|w| w == b"<script>"));
        let small = reencode(&png(100, 40)).unwrap();
        assert_eq!(image::load_from_memory(&small).unwrap().width(), 100, "never scaled up");
    }

    #[test]
    fn only_small_png_and_jpeg_files_are_logos() {
        assert_eq!(reencode(b"GIF89a...."), Err(LogoError::NotAnImage));
        assert_eq!(reencode(b"%PDF-1.4"), Err(LogoError::NotAnImage));
        assert_eq!(reencode(&vec![0u8; MAX_LOGO_BYTES + 1]), Err(LogoError::TooLarge));
        let mut truncated = png(50, 50);
        truncated.truncate(60);
        assert!(matches!(reencode(&truncated), Err(LogoError::Unreadable(_))));
    }
}
