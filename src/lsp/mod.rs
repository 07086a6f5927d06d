//! `bt lsp`: a Language Server Protocol server over standard input/output (lsp-server for the
//! transport, lsp-types for the messages).
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
//! Messages are lsp-types' types: each request's params are read as its `Params` type and
//! its answer is its `Result` type, methods are the `METHOD` constants of
//! `lsp_types::request` / `lsp_types::notification` ([`answer`], [`on_notification`]). A
//! request whose params are not its method's (a field missing or of the wrong type, a URI
//! that is not one) is answered with `InvalidParams`; a notification with such params is
//! dropped. A request for a document that is not open is answered with null (`workspace/symbol`
//! looks at the open documents and the library); an unknown method with `MethodNotFound`.
//!
//! Positions are LSP's (0-based lines, UTF-16 columns); [`analysis`] converts them. A request
//! whose handler panics is answered with an error (`InternalError`) and the server goes on;
//! a client that skips the `initialized` notification is served all the same (its
//! `InitializeParams` are not read: nothing in them changes the answers). Frames that
//! are not messages (bad headers, a body that is not JSON, too long) are answered with
//! JSON-RPC errors and the server goes on ([`transport`]).

pub(crate) mod analysis;
mod documents;
mod nav;
mod refs;
mod sig;
mod transport;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, Exit,
    Notification as LspNotification, PublishDiagnostics,
};
use lsp_types::request::{
    Completion, DocumentHighlightRequest, DocumentSymbolRequest, Formatting, GotoDefinition,
    HoverRequest, Initialize, PrepareRenameRequest, References, Rename, Request as LspRequest,
    SignatureHelpRequest, WorkspaceSymbolRequest,
};
use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionList, CompletionOptions, CompletionResponse,
    Diagnostic, DiagnosticSeverity, DocumentSymbol, DocumentSymbolResponse, Hover, HoverContents,
    HoverProviderCapability, InitializeResult, MarkupContent, MarkupKind, NumberOrString, OneOf,
    PrepareRenameResponse, PublishDiagnosticsParams, Range, RenameOptions, ServerCapabilities,
    ServerInfo, SignatureHelpOptions, SymbolKind, TextDocumentPositionParams,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextEdit, Url, WorkDoneProgressOptions,
    WorkspaceSymbolResponse,
};

use analysis::{DeclKind, Lines};
use documents::{uri_path, Docs};

/// `bt lsp` arguments.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct LspArgs {
    /// Accepted for editors that pass it; standard input/output is the only transport
    #[arg(long)]
    pub(crate) stdio: bool,
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

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        document_highlight_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: WorkDoneProgressOptions::default(),
        })),
        document_symbol_provider: Some(OneOf::Left(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![" ".into(), ".".into()]),
            ..CompletionOptions::default()
        }),
        signature_help_provider: Some(SignatureHelpOptions {
            trigger_characters: Some(vec![":".into()]),
            retrigger_characters: Some(vec![" ".into()]),
            work_done_progress_options: WorkDoneProgressOptions::default(),
        }),
        workspace_symbol_provider: Some(OneOf::Left(true)),
        ..ServerCapabilities::default()
    }
}

/// The protocol loop.
pub(crate) fn serve(conn: &Connection) -> Result<(), String> {
    let init = InitializeResult {
        capabilities: capabilities(),
        server_info: Some(ServerInfo {
            name: "bt".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        }),
    };
    // The handshake by hand (not `Connection::initialize`): a client that sends a document
    // before `initialized` is served rather than dropped.
    let mut docs = Docs::new();
    let closed = || "the input ended without `exit`".to_string();
    loop {
        match conn.receiver.recv().map_err(|_| closed())? {
            Message::Request(req) if req.method == Initialize::METHOD => {
                conn.sender
                    .send(Message::Response(Response::new_ok(req.id, &init)))
                    .map_err(|e| e.to_string())?;
                break;
            }
            Message::Request(req) => {
                let resp = Response::new_err(
                    req.id,
                    ErrorCode::ServerNotInitialized as i32,
                    "the server is not initialized yet".to_string(),
                );
                conn.sender
                    .send(Message::Response(resp))
                    .map_err(|e| e.to_string())?;
            }
            Message::Notification(n) if n.method == Exit::METHOD => return Ok(()),
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
                if n.method == Exit::METHOD {
                    return Ok(());
                }
                if let Some(uri) = on_notification(&mut docs, n) {
                    let text = docs.get(&uri).map(String::as_str);
                    let diags = std::panic::catch_unwind(|| diagnostics(&uri, text))
                        .unwrap_or_else(|_| {
                            PublishDiagnosticsParams::new(uri.clone(), vec![], None)
                        });
                    let note = Notification::new(PublishDiagnostics::METHOD.to_string(), diags);
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
            ErrorCode::InternalError as i32,
            format!("bt lsp: {} failed: {what}", req.method),
        )
    })
}

/// Updates the documents; answers the URI whose diagnostics should be published. A
/// notification whose params are not its method's is dropped (there is no answer to carry
/// an error).
fn on_notification(docs: &mut Docs, n: Notification) -> Option<Url> {
    fn params<N: LspNotification>(n: Notification) -> Option<N::Params> {
        serde_json::from_value(n.params).ok()
    }
    match n.method.as_str() {
        DidOpenTextDocument::METHOD => {
            let doc = params::<DidOpenTextDocument>(n)?.text_document;
            docs.insert(doc.uri.clone(), doc.text);
            Some(doc.uri)
        }
        DidChangeTextDocument::METHOD => {
            let p = params::<DidChangeTextDocument>(n)?;
            let text = p.content_changes.into_iter().last()?.text;
            docs.insert(p.text_document.uri.clone(), text);
            Some(p.text_document.uri)
        }
        DidCloseTextDocument::METHOD => {
            let uri = params::<DidCloseTextDocument>(n)?.text_document.uri;
            docs.remove(&uri);
            Some(uri)
        }
        _ => None,
    }
}

fn diagnostics(uri: &Url, text: Option<&str>) -> PublishDiagnosticsParams {
    let Some(text) = text else {
        return PublishDiagnosticsParams::new(uri.clone(), vec![], None);
    };
    let path = uri_path(uri);
    let lines = Lines::new(text);
    let items: Vec<Diagnostic> = crate::cli::check::check_source(&path, text)
        .iter()
        .map(|d| {
            let severity = match d.severity {
                crate::diagnostic::Severity::Error => DiagnosticSeverity::ERROR,
                crate::diagnostic::Severity::Warning => DiagnosticSeverity::WARNING,
                crate::diagnostic::Severity::Hint => DiagnosticSeverity::HINT,
            };
            let mut message = d.message.clone();
            if let Some(h) = &d.hint {
                message.push_str(&format!("\nHint: {h}"));
            }
            Diagnostic {
                range: lines.range(d.span),
                severity: Some(severity),
                code: Some(NumberOrString::String(d.code.to_string())),
                source: Some("bt".to_string()),
                message,
                ..Diagnostic::default()
            }
        })
        .collect();
    PublishDiagnosticsParams::new(uri.clone(), items, None)
}

/// Answers a request of type `R`: its params read as `R::Params` (params that are not
/// answer `InvalidParams`), then `f`'s result (an `Err` answers `RequestFailed`).
fn typed<R: LspRequest>(
    req: &Request,
    f: impl FnOnce(R::Params) -> Result<R::Result, String>,
) -> Response {
    let id = req.id.clone();
    match serde_json::from_value::<R::Params>(req.params.clone()) {
        Err(e) => Response::new_err(
            id,
            ErrorCode::InvalidParams as i32,
            format!("bt lsp: the params of {} are not valid: {e}", R::METHOD),
        ),
        Ok(p) => match f(p) {
            Ok(r) => Response::new_ok(id, r),
            Err(m) => Response::new_err(id, ErrorCode::RequestFailed as i32, m),
        },
    }
}

/// The open document a position is in, and the position's byte offset in it.
fn at<'a>(docs: &'a Docs, p: &TextDocumentPositionParams) -> Option<(&'a str, usize)> {
    let text = docs.get(&p.text_document.uri)?;
    Some((text, Lines::new(text).offset_of(p.position)))
}

fn answer(docs: &Docs, req: &Request) -> Response {
    match req.method.as_str() {
        WorkspaceSymbolRequest::METHOD => typed::<WorkspaceSymbolRequest>(req, |p| {
            let symbols = sig::workspace_symbols(docs, &p.query);
            Ok(Some(WorkspaceSymbolResponse::Flat(symbols)))
        }),
        HoverRequest::METHOD => typed::<HoverRequest>(req, |p| {
            Ok(at(docs, &p.text_document_position_params).and_then(|(t, o)| hover(t, o)))
        }),
        GotoDefinition::METHOD => typed::<GotoDefinition>(req, |p| {
            let p = p.text_document_position_params;
            let uri = &p.text_document.uri;
            Ok(at(docs, &p).and_then(|(t, o)| nav::definition(docs, uri, t, o)))
        }),
        References::METHOD => typed::<References>(req, |p| {
            let decl = p.context.include_declaration;
            let p = p.text_document_position;
            let uri = &p.text_document.uri;
            Ok(at(docs, &p).and_then(|(t, o)| nav::references(docs, uri, t, o, decl)))
        }),
        DocumentHighlightRequest::METHOD => typed::<DocumentHighlightRequest>(req, |p| {
            Ok(at(docs, &p.text_document_position_params).and_then(|(t, o)| nav::highlights(t, o)))
        }),
        PrepareRenameRequest::METHOD => typed::<PrepareRenameRequest>(req, |p| {
            let Some((t, o)) = at(docs, &p) else {
                return Ok(None);
            };
            nav::prepare_rename(t, o).map(|r| Some(PrepareRenameResponse::Range(r)))
        }),
        Rename::METHOD => typed::<Rename>(req, |p| {
            let pos = p.text_document_position;
            let Some((t, o)) = at(docs, &pos) else {
                return Ok(None);
            };
            nav::rename(docs, &pos.text_document.uri, t, o, &p.new_name).map(Some)
        }),
        Completion::METHOD => typed::<Completion>(req, |p| {
            Ok(at(docs, &p.text_document_position).map(|(t, o)| completion(t, o)))
        }),
        SignatureHelpRequest::METHOD => typed::<SignatureHelpRequest>(req, |p| {
            Ok(at(docs, &p.text_document_position_params)
                .and_then(|(t, o)| sig::signature_help(t, o)))
        }),
        DocumentSymbolRequest::METHOD => typed::<DocumentSymbolRequest>(req, |p| {
            Ok(docs.get(&p.text_document.uri).map(|t| symbols(t)))
        }),
        Formatting::METHOD => typed::<Formatting>(req, |p| {
            Ok(docs.get(&p.text_document.uri).map(|t| formatting(t)))
        }),
        _ => Response::new_err(
            req.id.clone(),
            ErrorCode::MethodNotFound as i32,
            format!("unsupported request {}", req.method),
        ),
    }
}

fn markdown(value: String) -> HoverContents {
    HoverContents::Markup(MarkupContent {
        kind: MarkupKind::Markdown,
        value,
    })
}

fn hover(text: &str, offset: usize) -> Option<Hover> {
    let (word, span) = analysis::word_at(text, offset)?;
    let classes = analysis::classes_with(text);
    let lines = Lines::new(text);
    let with_range = |contents: HoverContents| {
        Some(Hover {
            contents,
            range: Some(lines.range(span)),
        })
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
        return None;
    }
    with_range(markdown(parts.join("\n\n---\n\n")))
}

/// A completion item: a label, its kind and detail.
fn item(label: &str, kind: CompletionItemKind, detail: Option<String>) -> CompletionItem {
    CompletionItem {
        label: label.to_string(),
        kind: Some(kind),
        detail,
        ..CompletionItem::default()
    }
}

fn completion(text: &str, offset: usize) -> CompletionResponse {
    // The receiver is what precedes the word being typed.
    let mut start = offset.min(text.len());
    let b = text.as_bytes();
    while start > 0 && (b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_') {
        start -= 1;
    }
    let prefix = &text[start..offset.min(text.len())];
    let classes = analysis::classes_with(text);
    let mut items: Vec<CompletionItem> = Vec::new();
    let list = |items| {
        CompletionResponse::List(CompletionList {
            is_incomplete: false,
            items,
        })
    };
    let field_access = text[..start].ends_with("self.");
    if field_access {
        if let Some(d) = analysis::enclosing_class(text, offset).and_then(|c| classes.get(&c)) {
            for s in &d.slots {
                let detail = format!("{}: {}", s.kind, s.name);
                items.push(item(&s.name, CompletionItemKind::FIELD, Some(detail)));
            }
        }
        return list(items);
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
                    let side = if class_side { " class" } else { "" };
                    let detail = format!("{owner}{side} >> {header}");
                    items.push(item(&sel, CompletionItemKind::METHOD, Some(detail)));
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
                items.push(item(sel, CompletionItemKind::METHOD, None));
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
                items.push(item(&v, CompletionItemKind::VARIABLE, None));
            }
            for d in classes.values() {
                if d.name.starts_with(prefix) {
                    items.push(item(&d.name, CompletionItemKind::CLASS, None));
                }
            }
        }
    }
    list(items)
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

/// A document symbol (`deprecated` is a field of the protocol's, left out as `tags` is).
#[allow(deprecated)]
fn doc_symbol(
    name: String,
    detail: &str,
    kind: SymbolKind,
    range: Range,
    selection_range: Range,
    children: Option<Vec<DocumentSymbol>>,
) -> DocumentSymbol {
    DocumentSymbol {
        name,
        detail: Some(detail.to_string()),
        kind,
        tags: None,
        deprecated: None,
        range,
        selection_range,
        children,
    }
}

fn symbols(text: &str) -> DocumentSymbolResponse {
    let lines = Lines::new(text);
    let decls = analysis::declarations(text);
    let mut out: Vec<DocumentSymbol> = Vec::new();
    for d in decls.iter().filter(|d| d.kind == DeclKind::Class) {
        let children: Vec<DocumentSymbol> = decls
            .iter()
            .filter(|m| {
                m.kind != DeclKind::Class
                    && m.class.as_deref() == Some(&d.name)
                    && m.span.start >= d.span.start
                    && m.span.end <= d.span.end
            })
            .map(|m| {
                let kind = if m.kind == DeclKind::Slot {
                    SymbolKind::FIELD
                } else {
                    SymbolKind::METHOD
                };
                let (range, name_range) = (lines.range(m.span), lines.range(m.name_span));
                doc_symbol(m.name.clone(), &m.detail, kind, range, name_range, None)
            })
            .collect();
        out.push(doc_symbol(
            d.name.clone(),
            &d.detail,
            SymbolKind::CLASS,
            lines.range(d.span),
            lines.range(d.name_span),
            Some(children),
        ));
    }
    for m in decls.iter().filter(|m| {
        m.kind == DeclKind::Method
            && !decls.iter().any(|c| {
                c.kind == DeclKind::Class
                    && m.span.start >= c.span.start
                    && m.span.end <= c.span.end
            })
    }) {
        out.push(doc_symbol(
            format!("{} >> {}", m.class.as_deref().unwrap_or("?"), m.name),
            &m.detail,
            SymbolKind::METHOD,
            lines.range(m.span),
            lines.range(m.name_span),
            None,
        ));
    }
    DocumentSymbolResponse::Nested(out)
}

/// The whole document through `bt fmt`; nothing for a document that does not parse.
fn formatting(text: &str) -> Vec<TextEdit> {
    if !crate::cli::fmt::refusal(text, false).is_empty() {
        return vec![];
    }
    match crate::fmt::format_source(text, false) {
        Ok(new) if new != text => {
            let lines = Lines::new(text);
            let whole = Range::new(lines.lsp_position(0), lines.lsp_position(text.len()));
            vec![TextEdit::new(whole, new)]
        }
        _ => vec![],
    }
}
