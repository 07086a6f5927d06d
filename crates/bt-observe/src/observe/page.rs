//! The live page served at `/`: HTML, script and style compiled into the binary
//! (`include_str!`), so the observer needs no file on disk and no external asset.
//!
//! The script (page/app.js) opens `/runtime/events`, draws the tree, colours states,
//! highlights what the last diff changed, filters by class name and shows a panel for the
//! selected node (status fetched lazily from `/runtime/status`).

pub(crate) const INDEX_HTML: &str = include_str!("page/index.html");
pub(crate) const APP_JS: &str = include_str!("page/app.js");
pub(crate) const STYLE_CSS: &str = include_str!("page/style.css");
