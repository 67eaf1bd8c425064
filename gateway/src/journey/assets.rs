//! The journey's only CSS and JavaScript, kept in their own files and inlined in each page (one
//! request per page, nothing to build or cache-bust). The Content-Security-Policy allows exactly
//! these by hash, computed from the files (see `pages`).

/// Mobile first: one column, large touch targets, WCAG AA contrast, a visible focus ring.
pub const CSS: &str = include_str!("journey.css");

/// Uploads each file as soon as it is chosen (checked first for type and size), shows a preview
/// and the XMLHttpRequest upload progress, submits, then polls the session status. Plain ES5 so
/// old phone browsers run it; no dependency.
/// `show` and `poll` live outside `if(form){…}`: the "being checked" page (a reload after submit)
/// has no form but polls too, and a function declared in a block would not exist there.
pub const JS: &str = include_str!("journey.js");
