//! Any bytes as a PDF: forensics, the text layer and the page images never panic or run away.
#![no_main]

use libfuzzer_sys::fuzz_target;
use worker::analysis::{datamatrix, forensics, text};

fuzz_target!(|data: &[u8]| {
    let _ = forensics::inspect_pdf(data);
    let _ = text::pdf::first_page_text(data);
    let _ = datamatrix::pdf::first_page_images(data);
});
