//! What a PDF page inherits from its page tree, read the same way by every module that looks at a
//! page (the seal search sizes its render with it, the text reader clips to it).

use lopdf::{Document, Object, ObjectId};

/// How many `Parent` links are followed up the page tree.
const MAX_TREE_DEPTH: usize = 32;

/// The page's `/MediaBox` array (dereferenced), its own or the nearest ancestor's; `None` when the
/// tree has none within [`MAX_TREE_DEPTH`] levels or it is not an array.
pub fn inherited_media_box(doc: &Document, page_id: ObjectId) -> Option<&Vec<Object>> {
    let mut node = doc.get_dictionary(page_id).ok()?;
    for _ in 0..MAX_TREE_DEPTH {
        if let Ok(value) = node.get(b"MediaBox") {
            return doc.dereference(value).ok()?.1.as_array().ok();
        }
        node = doc.get_dictionary(node.get(b"Parent").ok()?.as_reference().ok()?).ok()?;
    }
    None
}
