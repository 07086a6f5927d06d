//! What `bt lsp` knows about a source text: positions (LSP lines and UTF-16 columns ⇄ byte
//! offsets), the word under the cursor, the declarations of a file (classes, slots, methods,
//! with spans), a light type inference for variables (literals, `Foo new`/`spawn`/keyword
//! constructors, class methods' `-> T` annotations, `x :: T`), and the selectors a class
//! understands (its declarations, the library's, inherited ones).

use std::collections::BTreeMap;

use crate::cli::doc::{self, ClassDoc};
use crate::syntax::ast::{Item, Member, Span};

/// Line starts of a text, for offset ⇄ (line, UTF-16 column) conversion.
pub(crate) struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Lines<'a> {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines { text, starts }
    }

    /// `(line, character)` of a byte offset (0-based, UTF-16 columns as LSP counts them).
    pub(crate) fn position(&self, offset: usize) -> (u32, u32) {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let mut end = offset;
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let col: usize = self.text[start..end].chars().map(char::len_utf16).sum();
        (line as u32, col as u32)
    }

    /// The byte offset of an LSP position (clamped to the text).
    pub(crate) fn offset(&self, line: u32, character: u32) -> usize {
        let Some(&start) = self.starts.get(line as usize) else {
            return self.text.len();
        };
        let mut units = 0u32;
        for (i, c) in self.text[start..].char_indices() {
            if c == '\n' || units >= character {
                return start + i;
            }
            units += c.len_utf16() as u32;
        }
        self.text.len()
    }

    /// The byte offset of an LSP position (clamped to the text).
    pub(crate) fn offset_of(&self, p: lsp_types::Position) -> usize {
        self.offset(p.line, p.character)
    }

    /// The LSP position of a byte offset.
    pub(crate) fn lsp_position(&self, offset: usize) -> lsp_types::Position {
        let (line, character) = self.position(offset);
        lsp_types::Position { line, character }
    }

    /// The LSP range of a span.
    pub(crate) fn range(&self, span: Span) -> lsp_types::Range {
        lsp_types::Range {
            start: self.lsp_position(span.start as usize),
            end: self.lsp_position(span.end as usize),
        }
    }
}

fn word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifier (with a trailing `:` for a keyword part) around `offset`, and its span.
pub(crate) fn word_at(text: &str, offset: usize) -> Option<(String, Span)> {
    let b = text.as_bytes();
    let mut s = offset.min(b.len());
    while s > 0 && word_char(b[s - 1] as char) {
        s -= 1;
    }
    let mut e = offset.min(b.len());
    while e < b.len() && word_char(b[e] as char) {
        e += 1;
    }
    if s == e {
        return None;
    }
    if e < b.len() && b[e] == b':' && b.get(e + 1) != Some(&b'=') && b.get(e + 1) != Some(&b':') {
        e += 1;
    }
    Some((
        text[s..e].to_string(),
        Span {
            start: s as u32,
            end: e as u32,
        },
    ))
}

/// A declaration found in a file.
#[derive(Clone, Debug)]
pub(crate) struct Decl {
    pub(crate) kind: DeclKind,
    pub(crate) name: String,
    /// The class a slot or method belongs to.
    pub(crate) class: Option<String>,
    /// The span to jump to (the name).
    pub(crate) name_span: Span,
    /// The whole declaration.
    pub(crate) span: Span,
    pub(crate) detail: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DeclKind {
    Class,
    Slot,
    Method,
}

/// Every class, slot and method declared in `text`.
pub(crate) fn declarations(text: &str) -> Vec<Decl> {
    // Library files too: their `=> @primitive` bodies are not errors here.
    let opts = crate::syntax::Options {
        allow_primitives: true,
    };
    let (module, _) = crate::syntax::parse_with(text, opts);
    let mut out = Vec::new();
    for item in &module.items {
        match item {
            Item::Class(c) => {
                out.push(Decl {
                    kind: DeclKind::Class,
                    name: c.name.name.to_string(),
                    class: None,
                    name_span: c.name.span,
                    span: c.span,
                    detail: format!("{} subclass: {}", c.superclass.name, c.name.name),
                });
                for m in &c.members {
                    match m {
                        Member::Field(s) | Member::State(s) | Member::ClassState(s) => {
                            let kind = match m {
                                Member::Field(_) => "field",
                                Member::State(_) => "state",
                                _ => "classState",
                            };
                            out.push(Decl {
                                kind: DeclKind::Slot,
                                name: s.name.name.to_string(),
                                class: Some(c.name.name.to_string()),
                                name_span: s.name.span,
                                span: s.span,
                                detail: format!("{kind}: {}", s.name.name),
                            });
                        }
                        Member::Method(md) => out.push(Decl {
                            kind: DeclKind::Method,
                            name: md.selector.to_string(),
                            class: Some(c.name.name.to_string()),
                            name_span: md.selector_span,
                            span: md.span,
                            detail: doc::method_header(md),
                        }),
                        Member::Expect(_) => {}
                    }
                }
            }
            Item::Method(sm) => out.push(Decl {
                kind: DeclKind::Method,
                name: sm.method.selector.to_string(),
                class: Some(sm.class_name.name.to_string()),
                name_span: sm.method.selector_span,
                span: sm.method.span,
                detail: doc::method_header(&sm.method),
            }),
            _ => {}
        }
    }
    out
}

/// Class docs for the library plus the classes declared in `text`.
pub(crate) fn classes_with(text: &str) -> BTreeMap<String, ClassDoc> {
    let mut all = doc::library().clone();
    for (name, d) in doc::docs_for_sources(&[("<buffer>".into(), text.to_string())], false) {
        match all.get_mut(&name) {
            Some(existing) if d.superclass.is_none() => existing.methods.extend(d.methods),
            _ => {
                all.insert(name, d);
            }
        }
    }
    all
}

/// Every selector a class understands on one side, with the header and the defining class,
/// walking up the superclass chain (first definition wins).
pub(crate) fn selectors_of(
    classes: &BTreeMap<String, ClassDoc>,
    class: &str,
    class_side: bool,
) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut cur = Some(class.to_string());
    let mut guard = 0;
    while let Some(c) = cur.take() {
        guard += 1;
        if guard > 64 {
            break;
        }
        let Some(d) = classes.get(&c) else { break };
        for m in d.methods.iter().filter(|m| m.class_side == class_side) {
            if seen.insert(m.selector.clone()) {
                out.push((m.selector.clone(), m.header.clone(), c.clone()));
            }
        }
        let prims = if class_side {
            &d.class_primitives
        } else {
            &d.primitives
        };
        for p in prims {
            if seen.insert(p.clone()) {
                out.push((p.clone(), p.clone(), c.clone()));
            }
        }
        cur = d.superclass.clone();
    }
    if class_side {
        // A class also answers the instance protocol of Class and Object.
        for (s, h, c) in selectors_of(classes, "Class", false) {
            if seen.insert(s.clone()) {
                out.push((s, h, c));
            }
        }
    }
    out
}

/// The class of a literal or simple expression written just before `offset` (the receiver
/// of a message being typed), as `(class, class_side)`.
pub(crate) fn receiver_type(text: &str, offset: usize) -> Option<(String, bool)> {
    let before = text[..offset.min(text.len())].trim_end();
    let last = before.chars().last()?;
    match last {
        '"' => return Some(("String".into(), false)),
        ')' if before.contains("#(") => return Some(("List".into(), false)),
        ']' if before.contains("#[") && !before.contains(':') => {
            return Some(("Array".into(), false))
        }
        '}' if before.contains("#{") => return Some(("Dictionary".into(), false)),
        _ => {}
    }
    let start = before
        .char_indices()
        .rev()
        .find(|&(_, c)| !(word_char(c) || c == '.' || c == '$' || c == '#'))
        .map(|(i, c)| i + c.len_utf8())
        .unwrap_or(0);
    let tok = &before[start..];
    if tok.is_empty() {
        return None;
    }
    if tok.starts_with('$') {
        return Some(("Character".into(), false));
    }
    if tok.starts_with('#') {
        return Some(("Symbol".into(), false));
    }
    if tok.chars().all(|c| c.is_ascii_digit()) {
        return Some(("Integer".into(), false));
    }
    if tok.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Some(("Float".into(), false));
    }
    let tok = tok.trim_start_matches('.');
    match tok {
        "true" => return Some(("True".into(), false)),
        "false" => return Some(("False".into(), false)),
        "nil" => return Some(("UndefinedObject".into(), false)),
        "self" => return enclosing_class(text, offset).map(|c| (c, false)),
        _ => {}
    }
    if tok.starts_with(|c: char| c.is_ascii_uppercase()) {
        return Some((tok.to_string(), true));
    }
    variable_type(text, tok).map(|c| (c, false))
}

/// The class whose body holds `offset` (the last column-0 `… subclass: Name` above it).
pub(crate) fn enclosing_class(text: &str, offset: usize) -> Option<String> {
    let before = &text[..offset.min(text.len())];
    for line in before.lines().rev() {
        if line.starts_with(|c: char| c.is_ascii_alphabetic()) {
            let (_, name) = line.split_once(" subclass: ")?;
            let name: String = name.chars().take_while(|c| word_char(*c)).collect();
            return (!name.is_empty()).then_some(name);
        }
    }
    None
}

/// The inferred class of variable `name` from its assignments in `text`: `x :: T := …`,
/// a literal, `Foo new`, `Foo spawn…`, `Foo key: …` (a constructor), or a class method whose
/// header declares `-> T`.
pub(crate) fn variable_type(text: &str, name: &str) -> Option<String> {
    let classes = classes_with(text);
    variable_type_in(text, name, &classes, 0)
}

fn variable_type_in(
    text: &str,
    name: &str,
    classes: &BTreeMap<String, ClassDoc>,
    depth: usize,
) -> Option<String> {
    if depth > 8 {
        return None;
    }
    let mut found = None;
    for line in text.lines() {
        let t = line.trim_start();
        let Some(rest) = t.strip_prefix(name) else {
            continue;
        };
        let rest = rest.trim_start();
        if let Some(ann) = rest.strip_prefix("::") {
            let ty: String = ann
                .trim_start()
                .chars()
                .take_while(|c| word_char(*c))
                .collect();
            if !ty.is_empty() {
                found = Some(ty);
                continue;
            }
        }
        let Some(rhs) = rest.strip_prefix(":=") else {
            continue;
        };
        if let Some(t) = expression_type(text, rhs.trim(), classes, depth) {
            found = Some(t);
        }
    }
    found
}

/// The inferred class of an expression's text (`Foo new`, `p origin`), as for a variable's
/// right-hand side.
pub(crate) fn expression_class(text: &str, e: &str) -> Option<String> {
    let classes = classes_with(text);
    expression_type(text, e.trim(), &classes, 0)
}

fn expression_type(
    text: &str,
    e: &str,
    classes: &BTreeMap<String, ClassDoc>,
    depth: usize,
) -> Option<String> {
    let first = e.chars().next()?;
    let lit = match first {
        '"' => Some("String"),
        '$' => Some("Character"),
        '[' => Some("Block"),
        _ if e.starts_with("#(") => Some("List"),
        _ if e.starts_with("#[") => Some("Array"),
        _ if e.starts_with("#{") => Some("Dictionary"),
        '#' => Some("Symbol"),
        _ if first.is_ascii_digit() || (first == '-' && e.len() > 1) => {
            let num: String = e
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == '-')
                .collect();
            Some(if num.contains('.') {
                "Float"
            } else {
                "Integer"
            })
        }
        _ => None,
    };
    if let Some(l) = lit {
        // Only when the literal is the whole expression.
        return Some(l.to_string());
    }
    if first.is_ascii_lowercase() {
        // `var selector…`: the declared return type of the method the variable's class has.
        let var: String = e.chars().take_while(|c| word_char(*c)).collect();
        let recv = variable_type_in(text, &var, classes, depth + 1)?;
        let key = keyword_selector(e[var.len()..].trim_start());
        let (_, header, _) = selectors_of(classes, &recv, false)
            .into_iter()
            .find(|(s, _, _)| *s == key)?;
        let (_, ret) = header.rsplit_once("->")?;
        let ret = ret.trim();
        return Some(if ret == "Self" { recv } else { ret.to_string() });
    }
    if !first.is_ascii_uppercase() {
        return None;
    }
    let class: String = e.chars().take_while(|c| word_char(*c)).collect();
    let rest = e[class.len()..].trim_start();
    let sel: String = rest
        .chars()
        .take_while(|c| word_char(*c) || *c == ':')
        .collect();
    let d = classes.get(&class)?;
    if sel == "new" || sel.starts_with("spawn") || sel.starts_with("new:") {
        return Some(class);
    }
    // A class method with a declared return type.
    let key = keyword_selector(rest);
    if let Some(m) = d.methods.iter().find(|m| m.class_side && m.selector == key) {
        if let Some((_, ret)) = m.header.rsplit_once("->") {
            let ret = ret.trim();
            return Some(if ret == "Self" {
                class
            } else {
                ret.to_string()
            });
        }
    }
    // A keyword constructor made of the class's field names.
    let fields: Vec<&str> = d
        .slots
        .iter()
        .filter(|s| s.kind == "field")
        .map(|s| s.name.as_str())
        .collect();
    let parts: Vec<&str> = key.split(':').filter(|p| !p.is_empty()).collect();
    if !parts.is_empty() && parts.iter().all(|p| fields.contains(p)) {
        return Some(class);
    }
    None
}

/// The keyword selector of a send text (`at: 1 put: 2` → `at:put:`) or its unary selector.
fn keyword_selector(send: &str) -> String {
    let mut sel = String::new();
    for w in send.split_whitespace() {
        if w.ends_with(':') && w[..w.len() - 1].chars().all(word_char) {
            sel.push_str(w);
        }
    }
    if sel.is_empty() {
        send.chars().take_while(|c| word_char(*c)).collect()
    } else {
        sel
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_round_trip() {
        let t = "ab\né x\n";
        let l = Lines::new(t);
        assert_eq!(l.position(5), (1, 1));
        assert_eq!(l.position(4), (1, 0), "inside a character: its start");
        assert_eq!(l.offset(1, 1), 5);
        assert_eq!(l.offset(1, 2), 6);
        assert_eq!(l.offset(9, 0), t.len());
    }

    #[test]
    fn words_and_types() {
        let t = "Value subclass: P\n  field: x = 0\n  class origin -> P => P new\n\np := P origin\nn := 42\ns :: String := nil\nc := P x: 3\n";
        assert_eq!(word_at(t, 2).unwrap().0, "Value");
        assert_eq!(word_at(t, t.find("x = 0").unwrap()).unwrap().0, "x");
        assert_eq!(word_at(t, t.find("field").unwrap()).unwrap().0, "field:");
        assert_eq!(variable_type(t, "p").as_deref(), Some("P"));
        assert_eq!(variable_type(t, "n").as_deref(), Some("Integer"));
        assert_eq!(variable_type(t, "s").as_deref(), Some("String"));
        assert_eq!(variable_type(t, "c").as_deref(), Some("P"));
        assert_eq!(
            receiver_type("x := \"a\" ", 9),
            Some(("String".into(), false))
        );
        assert_eq!(receiver_type("y := 3 ", 7), Some(("Integer".into(), false)));
        assert_eq!(receiver_type("P ", 2), Some(("P".into(), true)));
        // A non-ASCII character just before the receiver (once a panic: a byte index inside
        // the character).
        assert_eq!(receiver_type("(× x", 4), None);
        assert_eq!(receiver_type("×\"a\" ", 6), Some(("String".into(), false)));
        let d = declarations(t);
        assert_eq!(d.iter().filter(|d| d.kind == DeclKind::Method).count(), 1);
    }
}
