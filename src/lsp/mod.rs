//! `bt lsp`: a Language Server Protocol server over standard input/output (lsp-server).
//!
//! | request / notification | answer |
//! |---|---|
//! | `didOpen` / `didChange` (full text) / `didClose` | `publishDiagnostics`: parse errors and the checker's findings (`bt check`) |
//! | `hover` | a class (declaration, doc comment), a method (headers and docs of every class defining it), a variable (inferred class), `self.field` |
//! | `definition` | classes, methods (by selector; by the receiver's class when it is known) and fields, in the open documents and the `.bt` files beside them, then in the library; a local variable's first binding |
//! | `references`, `documentHighlight` | every occurrence of a class, selector (keyword parts), field or local variable ([`refs`]) |
//! | `prepareRename`, `rename` | the same occurrences rewritten (library classes and selectors refused) |
//! | `completion` | selectors the receiver before the cursor understands (by its inferred class); after a receiver of unknown class every selector; where an expression starts the document's variables and the classes |
//! | `signatureHelp` | inside a keyword send, the full selectors (receiver's class when inferred, else every class's) matching the keywords typed, with parameter names and doc; the active parameter is the keyword being typed ([`sig`]) |
//! | `workspace/symbol` | classes and methods of the open documents and the library whose name contains the query ([`sig`]) |
//! | `documentSymbol` | classes with their slots and methods, standalone methods |
//! | `formatting` | the whole document through `bt fmt` |
//!
//! Positions are LSP's (0-based lines, UTF-16 columns); [`analysis`] converts them. A request
//! whose handler panics is answered with an error (`InternalError`) and the server goes on;
//! a client that skips the `initialized` notification is served all the same. Frames that
//! are not messages (bad headers, a body that is not JSON, too long) are answered with
//! JSON-RPC errors and the server goes on ([`transport`]).

pub(crate) mod analysis;
mod nav;
mod refs;
mod sig;
mod transport;

use std::collections::HashMap;

use lsp_server::{Connection, Message, Notification, Request, Response};
use serde_json::{json, Value as Json};

use analysis::{DeclKind, Lines};

/// `bt lsp` arguments.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct LspArgs {
    /// Accepted for editors that pass it; standard input/output is the only transport
    #[arg(long)]
    pub stdio: bool,
}

/// Runs the server on standard input/output until the client exits: status 0 after `exit`,
/// 1 (with a line on standard error) when the input ends without it.
pub(crate) fn main(_a: LspArgs) -> i32 {
    let (conn, io) = transport::stdio();
    let code = match serve(&conn) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("bt lsp: {e}");
            1
        }
    };
    drop(conn);
    let _ = io.join();
    code
}

fn capabilities() -> Json {
    json!({
        "textDocumentSync": 1,
        "hoverProvider": true,
        "definitionProvider": true,
        "referencesProvider": true,
        "documentHighlightProvider": true,
        "renameProvider": {"prepareProvider": true},
        "documentSymbolProvider": true,
        "documentFormattingProvider": true,
        "completionProvider": {"triggerCharacters": [" ", "."]},
        "signatureHelpProvider": {"triggerCharacters": [":"], "retriggerCharacters": [" "]},
        "workspaceSymbolProvider": true
    })
}

/// The protocol loop.
pub(crate) fn serve(conn: &Connection) -> Result<(), String> {
    let init = json!({
        "capabilities": capabilities(),
        "serverInfo": {"name": "bt", "version": env!("CARGO_PKG_VERSION")}
    });
    // The handshake by hand (not `Connection::initialize`): a client that sends a document
    // before `initialized` is served rather than dropped.
    let mut docs: HashMap<String, String> = HashMap::new();
    let closed = || "the input ended without `exit`".to_string();
    loop {
        match conn.receiver.recv().map_err(|_| closed())? {
            Message::Request(req) if req.method == "initialize" => {
                conn.sender
                    .send(Message::Response(Response::new_ok(req.id, init)))
                    .map_err(|e| e.to_string())?;
                break;
            }
            Message::Request(req) => {
                let resp = Response::new_err(
                    req.id,
                    lsp_server::ErrorCode::ServerNotInitialized as i32,
                    "the server is not initialized yet".to_string(),
                );
                conn.sender
                    .send(Message::Response(resp))
                    .map_err(|e| e.to_string())?;
            }
            Message::Notification(n) if n.method == "exit" => return Ok(()),
            _ => {}
        }
    }
    for msg in &conn.receiver {
        match msg {
            Message::Request(req) => {
                if conn.handle_shutdown(&req).map_err(|e| e.to_string())? {
                    return Ok(());
                }
                let resp = guarded(&req, || answer(&docs, &req));
                conn.sender
                    .send(Message::Response(resp))
                    .map_err(|e| e.to_string())?;
            }
            Message::Notification(n) => {
                if n.method == "exit" {
                    return Ok(());
                }
                if let Some(uri) = on_notification(&mut docs, &n) {
                    let text = docs.get(&uri).map(String::as_str);
                    let diags = std::panic::catch_unwind(|| diagnostics(&uri, text))
                        .unwrap_or_else(|_| json!({"uri": uri, "diagnostics": []}));
                    let note = Notification::new("textDocument/publishDiagnostics".into(), diags);
                    conn.sender
                        .send(Message::Notification(note))
                        .map_err(|e| e.to_string())?;
                }
            }
            Message::Response(_) => {}
        }
    }
    Err(closed())
}

/// Runs a request's handler; a panic becomes an error answer (the server goes on).
fn guarded(req: &Request, f: impl FnOnce() -> Response) -> Response {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let what = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Response::new_err(
            req.id.clone(),
            lsp_server::ErrorCode::InternalError as i32,
            format!("bt lsp: {} failed: {what}", req.method),
        )
    })
}

/// Updates the documents; answers the URI whose diagnostics should be published.
fn on_notification(docs: &mut HashMap<String, String>, n: &Notification) -> Option<String> {
    let uri = n.params["textDocument"]["uri"].as_str()?.to_string();
    match n.method.as_str() {
        "textDocument/didOpen" => {
            let text = n.params["textDocument"]["text"].as_str()?.to_string();
            docs.insert(uri.clone(), text);
        }
        "textDocument/didChange" => {
            let changes = n.params["contentChanges"].as_array()?;
            let text = changes.last()?["text"].as_str()?.to_string();
            docs.insert(uri.clone(), text);
        }
        "textDocument/didClose" => {
            docs.remove(&uri);
        }
        _ => return None,
    }
    Some(uri)
}

/// A file path for a `file://` URI (percent-escapes decoded).
pub(crate) fn uri_path(uri: &str) -> String {
    let p = uri.strip_prefix("file://").unwrap_or(uri);
    let b = p.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&p[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(crate) fn path_uri(path: &std::path::Path) -> String {
    format!("file://{}", path.display()).replace(' ', "%20")
}

fn diagnostics(uri: &str, text: Option<&str>) -> Json {
    let Some(text) = text else {
        return json!({"uri": uri, "diagnostics": []});
    };
    let path = uri_path(uri);
    let lines = Lines::new(text);
    let items: Vec<Json> = crate::cli::check::check_source(&path, text)
        .iter()
        .map(|d| {
            let severity = match d.severity {
                crate::diagnostic::Severity::Error => 1,
                crate::diagnostic::Severity::Warning => 2,
                crate::diagnostic::Severity::Hint => 4,
            };
            let mut message = d.message.clone();
            if let Some(h) = &d.hint {
                message.push_str(&format!("\nHint: {h}"));
            }
            json!({
                "range": lines.range(d.span),
                "severity": severity,
                "code": d.code,
                "source": "bt",
                "message": message,
            })
        })
        .collect();
    json!({"uri": uri, "diagnostics": items})
}

fn answer(docs: &HashMap<String, String>, req: &Request) -> Response {
    let id = req.id.clone();
    let p = &req.params;
    if req.method == "workspace/symbol" {
        let query = p["query"].as_str().unwrap_or("");
        return Response::new_ok(id, sig::workspace_symbols(docs, query));
    }
    let uri = p["textDocument"]["uri"].as_str().unwrap_or("").to_string();
    let Some(text) = docs.get(&uri) else {
        return Response::new_ok(id, Json::Null);
    };
    let lines = Lines::new(text);
    let offset = lines.offset(
        p["position"]["line"].as_u64().unwrap_or(0) as u32,
        p["position"]["character"].as_u64().unwrap_or(0) as u32,
    );
    let result = match req.method.as_str() {
        "textDocument/hover" => hover(text, offset),
        "textDocument/definition" => nav::definition(docs, &uri, text, offset),
        "textDocument/references" => {
            let decl = p["context"]["includeDeclaration"].as_bool().unwrap_or(true);
            nav::references(docs, &uri, text, offset, decl)
        }
        "textDocument/documentHighlight" => nav::highlights(text, offset),
        "textDocument/prepareRename" | "textDocument/rename" => {
            let r = if req.method.ends_with("prepareRename") {
                nav::prepare_rename(text, offset)
            } else {
                let new = p["newName"].as_str().unwrap_or("");
                nav::rename(docs, &uri, text, offset, new)
            };
            return match r {
                Ok(v) => Response::new_ok(id, v),
                Err(m) => Response::new_err(id, lsp_server::ErrorCode::RequestFailed as i32, m),
            };
        }
        "textDocument/completion" => completion(text, offset),
        "textDocument/signatureHelp" => sig::signature_help(text, offset),
        "textDocument/documentSymbol" => symbols(text),
        "textDocument/formatting" => formatting(text),
        _ => {
            return Response::new_err(
                id,
                lsp_server::ErrorCode::MethodNotFound as i32,
                format!("unsupported request {}", req.method),
            )
        }
    };
    Response::new_ok(id, result)
}

fn markdown(value: String) -> Json {
    json!({"contents": {"kind": "markdown", "value": value}})
}

fn hover(text: &str, offset: usize) -> Json {
    let Some((word, span)) = analysis::word_at(text, offset) else {
        return Json::Null;
    };
    let classes = analysis::classes_with(text);
    let lines = Lines::new(text);
    let with_range = |mut h: Json| {
        h["range"] = lines.range(span);
        h
    };
    // `self.field`
    if text[..span.start as usize].ends_with("self.") {
        if let Some(cls) = analysis::enclosing_class(text, offset) {
            if let Some(s) = classes
                .get(&cls)
                .and_then(|d| d.slots.iter().find(|s| s.name == word))
            {
                let ty =
                    s.ty.as_deref()
                        .map(|t| format!(" :: {t}"))
                        .unwrap_or_default();
                return with_range(markdown(format!(
                    "```bt\n{}: {}{ty}\n```\n{}",
                    s.kind, s.name, s.doc
                )));
            }
        }
    }
    if word.starts_with(|c: char| c.is_ascii_uppercase()) && !word.ends_with(':') {
        if let Some(d) = classes.get(&word) {
            let sup = d.superclass.as_deref().unwrap_or("ProtoObject");
            return with_range(markdown(format!(
                "```bt\n{sup} subclass: {}\n```\n{}",
                d.name,
                crate::cli::doc::clean_doc(&d.doc)
            )));
        }
    }
    let occs = refs::occurrences(text);
    let occ = refs::at(&occs, offset);
    // A variable: its inferred class, else where it is bound.
    if !word.ends_with(':') && word.starts_with(|c: char| c.is_ascii_lowercase()) {
        if let Some(t) = analysis::variable_type(text, &word) {
            return with_range(markdown(format!("```bt\n{word} :: {t}\n```\n(inferred)")));
        }
        if let Some(
            o @ refs::Occurrence {
                key: refs::Key::Var(..),
                ..
            },
        ) = occ
        {
            if let Some(d) = occs.iter().find(|d| d.key == o.key && d.decl) {
                let line = lines.position(d.spans[0].start as usize).0 + 1;
                return with_range(markdown(format!(
                    "```bt\n{word}\n```\nvariable, bound on line {line}"
                )));
            }
        }
    }
    // A send: the whole selector (a keyword part stands for the selector of its send) and,
    // when the receiver's class is known, the class answering it.
    let (word, owner) = match occ {
        Some(
            o @ refs::Occurrence {
                key: refs::Key::Selector(sel),
                ..
            },
        ) => (sel.clone(), nav::owner_of_send(text, o)),
        _ => (word, None),
    };
    // A selector: every class defining it (a keyword part matches the selectors holding it).
    let mut parts = Vec::new();
    for d in classes.values() {
        if owner.as_ref().is_some_and(|o| *o != d.name) {
            continue;
        }
        for m in &d.methods {
            let hit = m.selector == word
                || (word.ends_with(':') && m.selector.split_inclusive(':').any(|p| p == word));
            if hit && parts.len() < 8 {
                let side = if m.class_side { " class" } else { "" };
                let mut s = format!("```bt\n{}{side} >> {}\n```", d.name, m.header);
                if !m.doc.is_empty() {
                    s.push('\n');
                    s.push_str(&crate::cli::doc::clean_doc(&m.doc));
                }
                parts.push(s);
            }
        }
    }
    if parts.is_empty() {
        return Json::Null;
    }
    with_range(markdown(parts.join("\n\n---\n\n")))
}

fn completion(text: &str, offset: usize) -> Json {
    // The receiver is what precedes the word being typed.
    let mut start = offset.min(text.len());
    let b = text.as_bytes();
    while start > 0 && (b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_') {
        start -= 1;
    }
    let prefix = &text[start..offset.min(text.len())];
    let classes = analysis::classes_with(text);
    let mut items: Vec<Json> = Vec::new();
    let field_access = text[..start].ends_with("self.");
    if field_access {
        if let Some(d) = analysis::enclosing_class(text, offset).and_then(|c| classes.get(&c)) {
            for s in &d.slots {
                items.push(json!({"label": s.name, "kind": 5, "detail": format!("{}: {}", s.kind, s.name)}));
            }
        }
        return json!({"isIncomplete": false, "items": items});
    }
    // The first word of a line starts an expression: no receiver before it.
    let line_start = text[..start]
        .rsplit('\n')
        .next()
        .is_none_or(|l| l.trim().is_empty());
    let receiver = if line_start {
        None
    } else {
        analysis::receiver_type(text, start)
    };
    match receiver {
        Some((class, class_side)) if classes.contains_key(&class) => {
            for (sel, header, owner) in analysis::selectors_of(&classes, &class, class_side) {
                if sel.starts_with(prefix) {
                    items.push(json!({
                        "label": sel,
                        "kind": 2,
                        "detail": format!("{owner}{} >> {header}", if class_side { " class" } else { "" }),
                    }));
                }
            }
        }
        // A receiver of unknown class (`zzz `, `(a foo) `): every selector known.
        _ if !line_start && follows_receiver(&text[..start]) => {
            let mut sels = std::collections::BTreeSet::new();
            for d in classes.values() {
                sels.extend(d.methods.iter().map(|m| m.selector.as_str()));
                sels.extend(d.primitives.iter().map(String::as_str));
            }
            for sel in sels.into_iter().filter(|s| s.starts_with(prefix)) {
                items.push(json!({"label": sel, "kind": 2}));
            }
        }
        // Where an expression starts: the variables of the document, then class names.
        _ => {
            let mut vars = std::collections::BTreeSet::new();
            for o in refs::occurrences(text) {
                if let refs::Key::Var(name, _) = o.key {
                    if name.starts_with(prefix) && name != prefix {
                        vars.insert(name);
                    }
                }
            }
            for v in vars {
                items.push(json!({"label": v, "kind": 6}));
            }
            for d in classes.values() {
                if d.name.starts_with(prefix) {
                    items.push(json!({"label": d.name, "kind": 7}));
                }
            }
        }
    }
    json!({"isIncomplete": false, "items": items})
}

/// Does the text before the word being typed end with a receiver (an identifier, literal or
/// closing bracket on the same line, not a keyword, `:=` or operator)?
fn follows_receiver(before: &str) -> bool {
    let line = before.rsplit('\n').next().unwrap_or("");
    let t = line.trim_end();
    if t.len() == line.len() {
        return false; // no blank before the word: not a message position
    }
    let Some(last) = t.chars().last() else {
        return false;
    };
    last.is_ascii_alphanumeric() || last == '_' || matches!(last, ')' | ']' | '}' | '"' | '\'')
}

fn symbols(text: &str) -> Json {
    let lines = Lines::new(text);
    let decls = analysis::declarations(text);
    let mut out: Vec<Json> = Vec::new();
    for d in decls.iter().filter(|d| d.kind == DeclKind::Class) {
        let children: Vec<Json> = decls
            .iter()
            .filter(|m| {
                m.kind != DeclKind::Class
                    && m.class.as_deref() == Some(&d.name)
                    && m.span.start >= d.span.start
                    && m.span.end <= d.span.end
            })
            .map(|m| {
                json!({
                    "name": m.name,
                    "detail": m.detail,
                    "kind": if m.kind == DeclKind::Slot { 8 } else { 6 },
                    "range": lines.range(m.span),
                    "selectionRange": lines.range(m.name_span),
                })
            })
            .collect();
        out.push(json!({
            "name": d.name,
            "detail": d.detail,
            "kind": 5,
            "range": lines.range(d.span),
            "selectionRange": lines.range(d.name_span),
            "children": children,
        }));
    }
    for m in decls.iter().filter(|m| {
        m.kind == DeclKind::Method
            && !decls.iter().any(|c| {
                c.kind == DeclKind::Class
                    && m.span.start >= c.span.start
                    && m.span.end <= c.span.end
            })
    }) {
        out.push(json!({
            "name": format!("{} >> {}", m.class.as_deref().unwrap_or("?"), m.name),
            "detail": m.detail,
            "kind": 6,
            "range": lines.range(m.span),
            "selectionRange": lines.range(m.name_span),
        }));
    }
    Json::Array(out)
}

/// The whole document through `bt fmt`; nothing for a document that does not parse.
fn formatting(text: &str) -> Json {
    if !crate::cli::fmt::refusal(text, false).is_empty() {
        return json!([]);
    }
    match crate::fmt::format_source(text, false) {
        Ok(new) if new != text => {
            let end = Lines::new(text).position(text.len());
            json!([{
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": end.0, "character": end.1}},
                "newText": new
            }])
        }
        _ => json!([]),
    }
}
