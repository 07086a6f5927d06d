//! `bt lsp` signature help and workspace symbols.
//!
//! Signature help (`textDocument/signatureHelp`) finds the keyword send the cursor is in with
//! the lexer: walking back from the cursor at bracket depth 0, the keywords typed so far
//! (`d at: 1 put: ` → `at:`, `put:`) up to the start of the send (an unmatched opening
//! bracket, `.`, `:=`, `^`, `=>`, `;`, `|`, or a line that starts a new statement by the
//! language's line-continuation rule). What precedes the first keyword is the receiver: when
//! its class is inferred ([`analysis::receiver_type`], one token or `Foo new`-like) the
//! candidates are the selectors that class understands whose first parts are the typed
//! keywords; otherwise every class's. Each signature is the method's header
//! (`Dictionary >> at: key put: value`) with one parameter per keyword part and the method's
//! doc; the active parameter is the keyword being typed (the last one before the cursor, or
//! the next one when a word typed after an argument starts it: `d at: 1 pu`).
//!
//! Workspace symbols (`workspace/symbol`) are the classes and methods declared in the open
//! documents and in the library whose name contains the query (case-insensitive).

use lsp_types::{
    Documentation, Location, MarkupContent, MarkupKind, ParameterInformation, ParameterLabel,
    SignatureHelp, SignatureInformation, SymbolInformation, SymbolKind, Url,
};

use super::analysis::{self, DeclKind, Lines};
use super::documents::Docs;
use crate::cli::doc;
use crate::syntax::token::Tok;

/// At most this many signatures in one answer (a common keyword such as `at:` on a receiver
/// of unknown class matches many classes).
const MAX_SIGNATURES: usize = 24;

/// At most this many workspace symbols in one answer.
const MAX_SYMBOLS: usize = 256;

/// The keyword send around the cursor: the typed keywords and the receiver's class.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Send {
    /// The keyword parts before the cursor, in order (`["at:", "put:"]`).
    pub(crate) keywords: Vec<String>,
    /// The receiver's inferred class and side, when known.
    pub(crate) receiver: Option<(String, bool)>,
    /// A word typed right before the cursor after an argument (`d at: 1 pu`): perhaps the
    /// start of the next keyword.
    pub(crate) partial: Option<String>,
}

/// The keyword send the cursor at `offset` is typing, if any.
fn send_at(text: &str, offset: usize) -> Option<Send> {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let lexed = crate::syntax::lexer::lex(&text[..offset]);
    let toks: Vec<_> = lexed
        .tokens
        .iter()
        .filter(|t| t.kind != Tok::Eof)
        .copied()
        .collect();
    let mut depth = 0usize;
    let mut keywords: Vec<usize> = Vec::new();
    let mut start = 0usize;
    for i in (0..toks.len()).rev() {
        let t = toks[i];
        if t.kind.is_close() {
            depth += 1;
            continue;
        }
        if t.kind.is_open() || t.kind == Tok::ShiftLeft {
            if depth == 0 {
                start = i + 1;
                break;
            }
            depth -= 1;
            continue;
        }
        if depth > 0 {
            continue;
        }
        match t.kind {
            Tok::Dot
            | Tok::Assign
            | Tok::Caret
            | Tok::FatArrow
            | Tok::Semi
            | Tok::Pipe
            | Tok::Bang
            | Tok::Comma
            | Tok::Colon => {
                start = i + 1;
                break;
            }
            Tok::Keyword => keywords.push(i),
            _ => {}
        }
        // A line whose first token is not a keyword, binary operator or closing bracket
        // starts a new statement (the language's line-continuation rule).
        if t.first() && !matches!(t.kind, Tok::Keyword) && !t.kind.is_binop() {
            start = i;
            break;
        }
    }
    // After a complete statement, a new line is no longer in its send.
    if let Some(last) = toks.last() {
        if last.kind != Tok::Keyword && text[last.end as usize..offset].contains('\n') {
            return None;
        }
    }
    let first_kw = *keywords.last()?;
    let partial = match toks.as_slice() {
        [.., before, last]
            if last.kind == Tok::Ident
                && last.end as usize == offset
                && before.kind != Tok::Keyword
                && !last.first() =>
        {
            Some(text[last.start as usize..offset].to_string())
        }
        _ => None,
    };
    keywords.reverse();
    let words: Vec<String> = keywords
        .iter()
        .map(|&i| text[toks[i].start as usize..toks[i].end as usize].to_string())
        .collect();
    let recv = &toks[start.min(first_kw)..first_kw];
    let receiver = match recv {
        [] => None,
        [only] => analysis::receiver_type(text, only.end as usize),
        [open, .., close]
            if matches!(
                open.kind,
                Tok::HashParen | Tok::HashBracket | Tok::HashBrace
            ) && close.kind.is_close() =>
        {
            let before = &text[open.start as usize..close.end as usize];
            analysis::receiver_type(before, before.len())
        }
        [first, ..] if first.kind == Tok::Ident => {
            let e = &text[first.start as usize..recv[recv.len() - 1].end as usize];
            analysis::expression_class(text, e).map(|c| (c, false))
        }
        _ => None,
    };
    Some(Send {
        keywords: words,
        receiver,
        partial,
    })
}

/// A candidate signature: `(owner, class side, selector, header)`.
type Candidate = (String, bool, String, String);

/// The selectors (of the receiver's class when known and it has some, else of every class)
/// whose first parts are the typed keywords (and whose next part starts with `partial`).
fn candidates(
    classes: &std::collections::BTreeMap<String, doc::ClassDoc>,
    send: &Send,
    partial: Option<&str>,
) -> Vec<Candidate> {
    let typed = &send.keywords;
    let matches = |sel: &str| {
        let parts: Vec<&str> = sel.split_inclusive(':').collect();
        parts.len() >= typed.len()
            && parts.iter().all(|p| p.ends_with(':'))
            && parts.iter().zip(typed).all(|(p, t)| p == t)
            && partial.is_none_or(|w| parts.get(typed.len()).is_some_and(|p| p.starts_with(w)))
    };
    let mut cands: Vec<Candidate> = Vec::new();
    if let Some((class, side)) = &send.receiver {
        for (sel, header, owner) in analysis::selectors_of(classes, class, *side) {
            if matches(&sel) {
                let side = *side
                    && classes.get(&owner).is_some_and(|d| {
                        d.method(&sel, true).is_some() || d.class_primitives.contains(&sel)
                    });
                cands.push((owner, side, sel, header));
            }
        }
    }
    if cands.is_empty() {
        for d in classes.values() {
            for m in &d.methods {
                if matches(&m.selector) {
                    cands.push((
                        d.name.clone(),
                        m.class_side,
                        m.selector.clone(),
                        m.header.clone(),
                    ));
                }
            }
            for (side, prims) in [(false, &d.primitives), (true, &d.class_primitives)] {
                for p in prims.iter().filter(|p| matches(p)) {
                    cands.push((d.name.clone(), side, p.clone(), p.clone()));
                }
            }
        }
    }
    cands
}

/// `textDocument/signatureHelp`.
pub(crate) fn signature_help(text: &str, offset: usize) -> Option<SignatureHelp> {
    let send = send_at(text, offset)?;
    let classes = analysis::classes_with(text);
    let typed = &send.keywords;
    // `d at: 1 pu|`: a word typed after an argument may be the next keyword's start.
    let (mut cands, active) = match &send.partial {
        Some(p) => (candidates(&classes, &send, Some(p)), typed.len()),
        None => (Vec::new(), 0),
    };
    let active = if cands.is_empty() {
        cands = candidates(&classes, &send, None);
        typed.len() - 1
    } else {
        active
    };
    if cands.is_empty() {
        return None;
    }
    let active = active as u32;
    // The selectors with as many parts as typed first (`at:` before `at:put:`).
    cands.sort_by_key(|c| c.2.matches(':').count());
    cands.truncate(MAX_SIGNATURES);
    let signatures: Vec<SignatureInformation> = cands
        .iter()
        .map(|(owner, side, sel, header)| {
            let doc_text = classes
                .get(owner)
                .and_then(|d| d.method(sel, *side))
                .map(|m| doc::clean_doc(&m.doc))
                .unwrap_or_default();
            let (label, params) = signature_label(owner, *side, sel, header);
            let parameters = params
                .iter()
                .map(|&(s, e)| ParameterInformation {
                    label: ParameterLabel::LabelOffsets([s, e]),
                    documentation: None,
                })
                .collect();
            SignatureInformation {
                label,
                documentation: (!doc_text.is_empty()).then_some(Documentation::MarkupContent(
                    MarkupContent {
                        kind: MarkupKind::Markdown,
                        value: doc_text,
                    },
                )),
                parameters: Some(parameters),
                active_parameter: Some(active),
            }
        })
        .collect();
    Some(SignatureHelp {
        signatures,
        active_signature: Some(0),
        active_parameter: Some(active),
    })
}

/// The label of a signature (`Dictionary >> at: key put: value`) and, per keyword part, its
/// `[start, end)` in the label in UTF-16 units (the keyword and its parameter, with a type
/// annotation when the header has one). A header without parameter names (a primitive's
/// bare selector) gets `_` for each.
fn signature_label(
    owner: &str,
    class_side: bool,
    selector: &str,
    header: &str,
) -> (String, Vec<(u32, u32)>) {
    let header = header.trim();
    let header = header.strip_prefix("class ").unwrap_or(header).trim_start();
    let body = if header.contains(' ') || !header.ends_with(':') {
        header.to_string()
    } else {
        selector
            .split_inclusive(':')
            .map(|p| format!("{p} _"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let side = if class_side { " class" } else { "" };
    let prefix = format!("{owner}{side} >> ");
    let label = format!("{prefix}{body}");
    // Keyword parts of the header: `word:` not followed by `:` or `=`, at bracket depth 0.
    let b = body.as_bytes();
    let mut kw_starts: Vec<usize> = Vec::new();
    let mut ret = body.len();
    let mut depth = 0i32;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'(' | b'[' | b'{' | b'<' => depth += 1,
            b')' | b']' | b'}' | b'>' if depth > 0 => depth -= 1,
            b'-' if depth == 0 && b.get(i + 1) == Some(&b'>') => {
                ret = i;
                break;
            }
            _ => {}
        }
        let word_start = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if depth == 0 && word_start && (c.is_ascii_alphabetic() || c == b'_') {
            let mut e = i;
            while e < b.len() && (b[e].is_ascii_alphanumeric() || b[e] == b'_') {
                e += 1;
            }
            if b.get(e) == Some(&b':') && !matches!(b.get(e + 1), Some(b':' | b'=')) {
                kw_starts.push(i);
            }
            i = e;
            continue;
        }
        i += 1;
    }
    let units = |s: &str| s.encode_utf16().count() as u32;
    let base = units(&prefix);
    let mut params = Vec::new();
    for (k, &s) in kw_starts.iter().enumerate() {
        let end = kw_starts.get(k + 1).copied().unwrap_or(ret);
        let part = body[s..end].trim_end();
        let s16 = base + units(&body[..s]);
        params.push((s16, s16 + units(part)));
    }
    (label, params)
}

/// A declared class or method: `(name, kind, class, location)`.
type Symbol = (String, DeclKind, Option<String>, Location);

/// The declarations of the library's files, once.
fn library_symbols() -> &'static [Symbol] {
    static LIB: std::sync::OnceLock<Vec<Symbol>> = std::sync::OnceLock::new();
    LIB.get_or_init(|| {
        let mut out = Vec::new();
        for (u, t) in super::nav::library() {
            out.extend(declared(u, t));
        }
        out
    })
}

fn declared(uri: &Url, text: &str) -> Vec<Symbol> {
    let lines = Lines::new(text);
    analysis::declarations(text)
        .into_iter()
        .filter(|d| d.kind != DeclKind::Slot)
        .map(|d| {
            let loc = Location::new(uri.clone(), lines.range(d.name_span));
            (d.name, d.kind, d.class, loc)
        })
        .collect()
}

/// `workspace/symbol`: classes and methods of the open documents, then of the library,
/// whose name contains `query` (ignoring case).
pub(crate) fn workspace_symbols(docs: &Docs, query: &str) -> Vec<SymbolInformation> {
    let q = query.to_lowercase();
    let mut uris: Vec<&Url> = docs.keys().collect();
    uris.sort();
    let mut here = Vec::new();
    for u in uris {
        here.extend(declared(u, &docs[u]));
    }
    let mut out = Vec::new();
    for (name, kind, class, loc) in here.iter().chain(library_symbols()) {
        if out.len() >= MAX_SYMBOLS {
            break;
        }
        if !name.to_lowercase().contains(&q) {
            continue;
        }
        // `deprecated` is a field of the protocol's (left out, as `tags` is).
        #[allow(deprecated)]
        let symbol = SymbolInformation {
            name: name.clone(),
            kind: if *kind == DeclKind::Class {
                SymbolKind::CLASS
            } else {
                SymbolKind::METHOD
            },
            tags: None,
            deprecated: None,
            location: loc.clone(),
            container_name: class.clone(),
        };
        out.push(symbol);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_send_at_the_cursor() {
        let t = "d := Dictionary new\nd at: 1 put: ";
        let s = send_at(t, t.len()).unwrap();
        assert_eq!(s.keywords, vec!["at:", "put:"]);
        assert_eq!(s.receiver, Some(("Dictionary".into(), false)));
        // Inside parentheses: the inner send; before the first keyword: none.
        let t = "x := 3\nd at: (x between: 1 and: ";
        let s = send_at(t, t.len()).unwrap();
        assert_eq!(s.keywords, vec!["between:", "and:"]);
        assert_eq!(s.receiver, Some(("Integer".into(), false)));
        assert_eq!(send_at("d foo", 5), None);
        // A new line starting with an identifier is a new statement.
        let t = "d at: 1\ne ifTrue: ";
        assert_eq!(send_at(t, t.len()).unwrap().keywords, vec!["ifTrue:"]);
        // A continuation line starting with a keyword extends the send.
        let t = "1\n  to: 10\n  do: ";
        let s = send_at(t, t.len()).unwrap();
        assert_eq!(s.keywords, vec!["to:", "do:"]);
        assert_eq!(s.receiver, Some(("Integer".into(), false)));
        // A word after an argument may start the next keyword.
        let t = "d := Dictionary new\nd at: 1 pu";
        assert_eq!(send_at(t, t.len()).unwrap().partial.as_deref(), Some("pu"));
        let h = signature_help(t, t.len()).unwrap();
        assert_eq!(h.active_parameter, Some(1), "{h:?}");
        assert_eq!(h.signatures[0].label, "Dictionary >> at: key put: value");
        // … or be a unary send in the argument: the keywords typed stand.
        let t = "d := Dictionary new\nd at: d si";
        let h = signature_help(t, t.len()).unwrap();
        assert_eq!(h.active_parameter, Some(0), "{h:?}");
        assert_eq!(h.signatures[0].label, "Dictionary >> at: key");
        // Half-typed code never panics.
        let t = "\"abc ×\" at: (  #( 1 ] put: [:x | x ";
        for i in 0..=t.len() {
            let _ = send_at(t, i);
            let _ = signature_help(t, i);
        }
    }

    #[test]
    fn labels_and_parameters() {
        let (l, p) = signature_label("Dictionary", false, "at:put:", "at: key put: value");
        assert_eq!(l, "Dictionary >> at: key put: value");
        let spans: Vec<&str> = p.iter().map(|&(s, e)| &l[s as usize..e as usize]).collect();
        assert_eq!(spans, vec!["at: key", "put: value"]);
        let (l, p) = signature_label(
            "A",
            true,
            "at:put:",
            "class at: i :: Integer put: v -> Self",
        );
        let spans: Vec<&str> = p.iter().map(|&(s, e)| &l[s as usize..e as usize]).collect();
        assert_eq!(spans, vec!["at: i :: Integer", "put: v"]);
        let (l, _) = signature_label("B", false, "at:put:", "at:put:");
        assert_eq!(l, "B >> at: _ put: _");
    }
}
