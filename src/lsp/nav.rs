//! `bt lsp` navigation across files: the sources a request looks at (the open documents, the
//! `.bt` files beside the current one, the built-in library), references, document
//! highlights, rename, and go-to-definition (classes, methods, fields, local variables, and
//! into the library).
//!
//! The library's sources are compiled into `bt`; for an editor to open them they are written
//! once per version to `$XDG_CACHE_HOME/bt/stdlib-VERSION/` (else `~/.cache/…`, else the
//! temporary directory) the first time a definition leads there.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use lsp_types::{
    DocumentHighlight, DocumentHighlightKind, GotoDefinitionResponse, Location, Range, TextEdit,
    Url, WorkspaceEdit,
};

use super::analysis::{self, DeclKind, Lines};
use super::documents::{self, Docs};
use super::refs::{self, Key, Occurrence};

/// The open documents (this one first), then the other `.bt` files of its directory.
pub(crate) fn workspace(docs: &Docs, uri: &Url) -> Vec<(Url, String)> {
    let mut sources: Vec<(Url, String)> =
        docs.iter().map(|(u, t)| (u.clone(), t.clone())).collect();
    sources.sort_by(|a, b| (a.0 != *uri, &a.0).cmp(&(b.0 != *uri, &b.0)));
    if let Some(dir) = Path::new(&documents::uri_path(uri)).parent() {
        if let Ok(rd) = std::fs::read_dir(dir) {
            let mut files: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
            files.sort();
            for f in files {
                let Some(u) = documents::path_uri(&f) else {
                    continue;
                };
                if f.extension().is_some_and(|x| x == "bt") && !sources.iter().any(|(s, _)| *s == u)
                {
                    if let Ok(t) = std::fs::read_to_string(&f) {
                        sources.push((u, t));
                    }
                }
            }
        }
    }
    sources
}

/// The directory the library's sources are written to (an absolute one: a relative
/// `XDG_CACHE_HOME` or `HOME` is passed over, as the XDG rules say).
fn library_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(".cache"))
                .filter(|p| p.is_absolute())
        })
        .unwrap_or_else(std::env::temp_dir);
    base.join("bt")
        .join(format!("stdlib-{}", env!("CARGO_PKG_VERSION")))
}

/// The library's files as `(uri, text)`, written to [`library_dir`] (once per process; a
/// file already there with the same text is left alone). Empty when it cannot be written.
pub(crate) fn library() -> &'static [(Url, String)] {
    static LIB: std::sync::OnceLock<Vec<(Url, String)>> = std::sync::OnceLock::new();
    LIB.get_or_init(|| {
        let dir = library_dir();
        if std::fs::create_dir_all(&dir).is_err() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (name, src) in crate::interp::stdlib::FILES.iter() {
            let path = dir.join(name);
            let same = std::fs::read_to_string(&path).is_ok_and(|t| t == *src);
            if same || std::fs::write(&path, src).is_ok() {
                if let Some(u) = documents::path_uri(&path) {
                    out.push((u, src.to_string()));
                }
            }
        }
        out
    })
}

/// The class that answers the selector of a send (the class defining it on the receiver's
/// inferred class or its superclasses), when the receiver's class is known.
pub(crate) fn owner_of_send(text: &str, occ: &Occurrence) -> Option<String> {
    let Key::Selector(sel) = &occ.key else {
        return None;
    };
    if occ.decl {
        return None;
    }
    let start = occ.spans.first()?.start as usize;
    let (class, side) = analysis::receiver_type(text, start)?;
    let classes = analysis::classes_with(text);
    analysis::selectors_of(&classes, &class, side)
        .into_iter()
        .find(|(s, _, _)| s == sel)
        .map(|(_, _, owner)| owner)
}

fn location(uri: &Url, text: &str, span: crate::syntax::ast::Span) -> Location {
    Location::new(uri.clone(), Lines::new(text).range(span))
}

/// `textDocument/definition`.
pub(crate) fn definition(
    docs: &Docs,
    uri: &Url,
    text: &str,
    offset: usize,
) -> Option<GotoDefinitionResponse> {
    let occs = refs::occurrences(text);
    let occ = refs::at(&occs, offset);
    // A local variable: its first binding in the scope.
    if let Some(
        o @ Occurrence {
            key: Key::Var(..), ..
        },
    ) = occ
    {
        return occs
            .iter()
            .find(|d| d.key == o.key && d.decl)
            .map(|d| GotoDefinitionResponse::Scalar(location(uri, text, d.spans[0])));
    }
    let (word, span) = match (occ, analysis::word_at(text, offset)) {
        (Some(o), _) => match &o.key {
            Key::Class(n) | Key::Selector(n) | Key::Field(_, n) => (n.clone(), o.spans[0]),
            Key::Var(..) => return None,
        },
        (None, Some(w)) => w,
        (None, None) => return None,
    };
    let field = matches!(
        occ,
        Some(Occurrence {
            key: Key::Field(..),
            ..
        })
    ) || text[..span.start as usize].ends_with("self.");
    let here_class = analysis::enclosing_class(text, offset);
    let owner = occ.and_then(|o| owner_of_send(text, o));
    let find = |sources: &[(Url, String)]| {
        let mut found = Vec::new();
        for (u, t) in sources {
            for d in analysis::declarations(t) {
                let hit = match d.kind {
                    DeclKind::Class => !field && d.name == word,
                    DeclKind::Slot => field && d.name == word && d.class == here_class,
                    DeclKind::Method => {
                        !field
                            && (d.name == word
                                || (word.ends_with(':')
                                    && d.name.split_inclusive(':').any(|p| p == word)))
                            && owner.as_ref().is_none_or(|o| d.class.as_ref() == Some(o))
                    }
                };
                if hit {
                    found.push(location(u, t, d.name_span));
                }
            }
        }
        found
    };
    let mut found = find(&workspace(docs, uri));
    if found.is_empty() && !field {
        found = find(library());
    }
    match found.len() {
        0 => None,
        1 => Some(GotoDefinitionResponse::Scalar(found.remove(0))),
        _ => Some(GotoDefinitionResponse::Array(found)),
    }
}

/// An occurrence in a file: `(uri, text, occurrence)`.
type Located = (Url, String, Occurrence);

/// Every occurrence of the name under `offset` over the workspace (a variable: this
/// document only).
fn all_occurrences(
    docs: &Docs,
    uri: &Url,
    text: &str,
    offset: usize,
) -> Option<(Key, Vec<Located>)> {
    let occs = refs::occurrences(text);
    let key = refs::at(&occs, offset)?.key.clone();
    let mut out = Vec::new();
    if let Key::Var(..) = key {
        for o in occs.into_iter().filter(|o| o.key == key) {
            out.push((uri.clone(), text.to_string(), o));
        }
        return Some((key, out));
    }
    for (u, t) in workspace(docs, uri) {
        let occs = if u == *uri {
            occs.clone()
        } else {
            refs::occurrences(&t)
        };
        for o in occs.into_iter().filter(|o| o.key == key) {
            out.push((u.clone(), t.clone(), o));
        }
    }
    Some((key, out))
}

/// `textDocument/references`.
pub(crate) fn references(
    docs: &Docs,
    uri: &Url,
    text: &str,
    offset: usize,
    include_declaration: bool,
) -> Option<Vec<Location>> {
    let (_, occs) = all_occurrences(docs, uri, text, offset)?;
    let mut out = Vec::new();
    for (u, t, o) in occs {
        if o.decl && !include_declaration {
            continue;
        }
        for s in &o.spans {
            out.push(location(&u, &t, *s));
        }
    }
    Some(out)
}

/// `textDocument/documentHighlight`: the occurrences in this document (a declaration is a
/// "write", others "read").
pub(crate) fn highlights(text: &str, offset: usize) -> Option<Vec<DocumentHighlight>> {
    let occs = refs::occurrences(text);
    let key = refs::at(&occs, offset).map(|o| o.key.clone())?;
    let lines = Lines::new(text);
    let mut out = Vec::new();
    for o in occs.iter().filter(|o| o.key == key) {
        for s in &o.spans {
            out.push(DocumentHighlight {
                range: lines.range(*s),
                kind: Some(if o.decl {
                    DocumentHighlightKind::WRITE
                } else {
                    DocumentHighlightKind::READ
                }),
            });
        }
    }
    Some(out)
}

/// Why a name cannot be renamed: it is the library's (renaming it would break the program).
fn library_owned(key: &Key) -> Option<String> {
    let lib = crate::cli::doc::library();
    match key {
        Key::Class(n) if lib.contains_key(n) => Some(format!("`{n}` is a class of the library")),
        Key::Selector(s)
            if lib.values().any(|d| {
                d.methods.iter().any(|m| m.selector == *s)
                    || d.primitives.contains(s)
                    || d.class_primitives.contains(s)
            }) =>
        {
            Some(format!("`{s}` is a selector of the library"))
        }
        _ => None,
    }
}

/// `textDocument/prepareRename`: the range of the name under the cursor, or an error.
pub(crate) fn prepare_rename(text: &str, offset: usize) -> Result<Range, String> {
    let occs = refs::occurrences(text);
    let Some(o) = refs::at(&occs, offset) else {
        return Err("no name to rename here".to_string());
    };
    if let Some(why) = library_owned(&o.key) {
        return Err(format!("{why}: it cannot be renamed"));
    }
    let lines = Lines::new(text);
    let span = o
        .spans
        .iter()
        .find(|s| s.start as usize <= offset && offset <= s.end as usize)
        .copied()
        .unwrap_or(o.spans[0]);
    Ok(lines.range(span))
}

/// `textDocument/rename`: a workspace edit replacing every occurrence.
pub(crate) fn rename(
    docs: &Docs,
    uri: &Url,
    text: &str,
    offset: usize,
    new_name: &str,
) -> Result<WorkspaceEdit, String> {
    let Some((key, occs)) = all_occurrences(docs, uri, text, offset) else {
        return Err("no name to rename here".to_string());
    };
    if let Some(why) = library_owned(&key) {
        return Err(format!("{why}: it cannot be renamed"));
    }
    refs::valid_new_name(&key, new_name)?;
    let mut changes: HashMap<Url, Vec<TextEdit>> = HashMap::new();
    for (u, t, o) in occs {
        let lines = Lines::new(&t);
        let edits = changes.entry(u).or_default();
        for (i, s) in o.spans.iter().enumerate() {
            edits.push(TextEdit::new(
                lines.range(*s),
                refs::replacement(&key, new_name, i),
            ));
        }
    }
    Ok(WorkspaceEdit::new(changes))
}
