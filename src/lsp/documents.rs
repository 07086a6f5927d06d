//! The documents the server holds ([`Docs`]) and the mapping between `file:` URIs and paths.
//! A leaf the request handlers share (navigation, signatures and symbols in [`super::nav`]
//! and [`super::sig`], the rest in the server module).

use std::collections::HashMap;

use lsp_types::Url;

/// The open documents: their text by URI.
pub(crate) type Docs = HashMap<Url, String>;

/// The file path of a `file:` URI (percent-escapes decoded); another URI as it is.
pub(crate) fn uri_path(uri: &Url) -> String {
    match uri.to_file_path() {
        Ok(p) => p.to_string_lossy().into_owned(),
        Err(()) => uri.to_string(),
    }
}

/// The `file:` URI of an absolute path (None for a relative one).
pub(crate) fn path_uri(path: &std::path::Path) -> Option<Url> {
    Url::from_file_path(path).ok()
}
