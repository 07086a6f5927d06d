//! `bt doc [CLASS...] [--html] [--out DIR]`: the class reference, generated from the built-in
//! library's declarations (`stdlib/*.bt`: classes, fields, methods with their signatures and
//! `///` documentation comments, standalone methods) plus the selectors bound directly to
//! Rust primitives. docs/reference/ is this command's output (`bt doc --out docs/reference`),
//! kept current by tests/lang/docs.rs.
//!
//! The model ([`ClassDoc`]) is also what `bt lsp` hover and the REPL's `:help` show.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::syntax::ast::{ClassDecl, Item, Member, MethodDecl, SlotDecl};

/// `bt doc` arguments.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct DocArgs {
    /// Classes, `.bt` files or directories to document (default: the whole library). A file
    /// or directory documents its classes; a class not in the library is looked for in the
    /// `.bt` files given, else in those under the current directory
    #[arg(value_name = "CLASS | FILE")]
    pub(crate) classes: Vec<String>,
    /// HTML instead of Markdown
    #[arg(long)]
    pub(crate) html: bool,
    /// Write an index and one file per class into DIR instead of printing
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<String>,
}

/// A documented slot (`field:`, `state:`, `classState:`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SlotDoc {
    pub(crate) kind: &'static str,
    pub(crate) name: String,
    pub(crate) ty: Option<String>,
    pub(crate) doc: String,
}

/// A documented method.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MethodDoc {
    pub(crate) class_side: bool,
    pub(crate) selector: String,
    /// The header as written: `at: i :: Integer put: v -> Self`.
    pub(crate) header: String,
    pub(crate) doc: String,
}

/// Everything the reference says about one class.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ClassDoc {
    pub(crate) name: String,
    pub(crate) superclass: Option<String>,
    pub(crate) modifiers: Vec<&'static str>,
    pub(crate) doc: String,
    /// The library file declaring it (empty for classes only known from primitives).
    pub(crate) file: String,
    pub(crate) slots: Vec<SlotDoc>,
    pub(crate) methods: Vec<MethodDoc>,
    /// Selectors answered by Rust primitives without a declaration (instance side).
    pub(crate) primitives: Vec<String>,
    /// The same on the class side.
    pub(crate) class_primitives: Vec<String>,
}

impl ClassDoc {
    /// The method doc for `selector` on the given side, if declared here.
    pub(crate) fn method(&self, selector: &str, class_side: bool) -> Option<&MethodDoc> {
        self.methods
            .iter()
            .find(|m| m.selector == selector && m.class_side == class_side)
    }
}

/// The header text of a method: its source up to the `=>` of the header.
pub(crate) fn method_header(m: &MethodDecl) -> String {
    let first = m.source.lines().next().unwrap_or(&m.selector);
    let head = match first.find("=>") {
        Some(i) => &first[..i],
        None => first,
    };
    head.trim().to_string()
}

fn type_text(src: &str, d: &SlotDecl) -> Option<String> {
    // The slot's source line: `field: name :: Type = default`.
    let line = src
        .get(d.span.start as usize..d.span.end as usize)?
        .lines()
        .next()?;
    let after = line.split_once("::")?.1;
    let ty = after.split(" = ").next()?.trim();
    (!ty.is_empty()).then(|| ty.to_string())
}

fn slot_doc(kind: &'static str, src: &str, d: &SlotDecl) -> SlotDoc {
    SlotDoc {
        kind,
        name: d.name.name.to_string(),
        ty: type_text(src, d),
        doc: d
            .doc
            .as_ref()
            .map(|x| x.text().into_owned())
            .unwrap_or_default(),
    }
}

fn method_doc(m: &MethodDecl, class_side: bool) -> MethodDoc {
    MethodDoc {
        class_side,
        selector: m.selector.to_string(),
        header: method_header(m),
        doc: m
            .doc
            .as_ref()
            .map(|x| x.text().into_owned())
            .unwrap_or_default(),
    }
}

fn class_doc(file: &str, src: &str, c: &ClassDecl) -> ClassDoc {
    let mut d = ClassDoc {
        name: c.name.name.to_string(),
        superclass: Some(c.superclass.name.to_string()),
        doc: c
            .doc
            .as_ref()
            .map(|x| x.text().into_owned())
            .unwrap_or_default(),
        file: file.to_string(),
        ..Default::default()
    };
    let m = &c.modifiers;
    for (on, word) in [
        (m.is_abstract, "abstract"),
        (m.sealed, "sealed"),
        (m.typed, "typed"),
        (m.internal, "internal"),
    ] {
        if on {
            d.modifiers.push(word);
        }
    }
    for mem in &c.members {
        match mem {
            Member::Field(s) => d.slots.push(slot_doc("field", src, s)),
            Member::State(s) => d.slots.push(slot_doc("state", src, s)),
            Member::ClassState(s) => d.slots.push(slot_doc("classState", src, s)),
            Member::Method(md) => d.methods.push(method_doc(md, md.class_side)),
            Member::Expect(_) => {}
        }
    }
    d
}

/// Adds a second declaration of the same class to its doc: members not yet documented are
/// appended; the class comment, modifiers and file come from the declaration that has a
/// class comment (without one on either, from the one declaring more members).
fn merge_class(old: &mut ClassDoc, new: ClassDoc) {
    let members = |d: &ClassDoc| d.slots.len() + d.methods.len();
    let prefer_new = if old.doc.is_empty() == new.doc.is_empty() {
        old.doc.is_empty() && members(&new) > members(old)
    } else {
        old.doc.is_empty()
    };
    if prefer_new {
        old.doc = new.doc;
        old.file = new.file;
        old.modifiers = new.modifiers;
        old.superclass = new.superclass;
    }
    for s in new.slots {
        if !old.slots.iter().any(|o| o.name == s.name) {
            old.slots.push(s);
        }
    }
    for m in new.methods {
        if old.method(&m.selector, m.class_side).is_none() {
            old.methods.push(m);
        }
    }
}

/// Class docs of the classes (and standalone methods) declared in `files`, by class name.
pub(crate) fn docs_for_sources(
    files: &[(String, String)],
    library: bool,
) -> BTreeMap<String, ClassDoc> {
    let mut out: BTreeMap<String, ClassDoc> = BTreeMap::new();
    let mut extra: Vec<(String, MethodDoc)> = Vec::new();
    for (path, src) in files {
        let opts = crate::syntax::Options {
            allow_primitives: library,
        };
        let (module, _) = crate::syntax::parse_with(src, opts);
        for item in &module.items {
            match item {
                Item::Class(c) => {
                    let d = class_doc(path, src, c);
                    match out.get_mut(&d.name) {
                        // A class declared in two files (Observer.bt adds selectors to the
                        // snapshot classes): one page with the members of both; the header
                        // comes from the declaration that has a class comment.
                        Some(old) => merge_class(old, d),
                        None => {
                            out.insert(d.name.clone(), d);
                        }
                    }
                }
                Item::Method(sm) => extra.push((
                    sm.class_name.name.to_string(),
                    method_doc(&sm.method, sm.class_side || sm.method.class_side),
                )),
                _ => {}
            }
        }
    }
    for (class, m) in extra {
        let d = out.entry(class.clone()).or_insert_with(|| ClassDoc {
            name: class,
            ..Default::default()
        });
        d.methods.push(m);
    }
    out
}

/// The whole library: `stdlib/*.bt` and every class with primitives (cached).
pub(crate) fn library() -> &'static BTreeMap<String, ClassDoc> {
    static LIB: std::sync::OnceLock<BTreeMap<String, ClassDoc>> = std::sync::OnceLock::new();
    LIB.get_or_init(|| {
        let files: Vec<(String, String)> = crate::interp::stdlib::FILES
            .iter()
            .map(|(n, s)| (format!("stdlib/{n}"), s.to_string()))
            .collect();
        let mut out = docs_for_sources(&files, true);
        let mut prims = crate::interp::eval::Prims::default();
        crate::interp::prims::register_all(&mut prims);
        for (class_side, table) in [(false, prims.table(false)), (true, prims.table(true))] {
            for (cls, sel) in table.into_keys() {
                if sel.starts_with("__") || cls.starts_with("__") {
                    continue;
                }
                let d = out.entry(cls.to_string()).or_insert_with(|| ClassDoc {
                    name: cls.to_string(),
                    ..Default::default()
                });
                if d.method(sel, class_side).is_none() {
                    let list = if class_side {
                        &mut d.class_primitives
                    } else {
                        &mut d.primitives
                    };
                    list.push(sel.to_string());
                }
            }
        }
        // Superclasses of the classes only the run time declares (Object, Boolean, Actor …).
        let vm = crate::interp::Interpreter::new(crate::interp::InterpreterOptions::default());
        for c in vm.prog.all_classes() {
            let name = c.name.as_str().to_string();
            if name.starts_with("__") {
                continue;
            }
            let d = out.entry(name.clone()).or_insert_with(|| ClassDoc {
                name,
                ..Default::default()
            });
            if d.superclass.is_none() {
                d.superclass = c.superclass.as_ref().map(|s| s.name.as_str().to_string());
            }
        }
        for d in out.values_mut() {
            d.primitives.sort();
            d.primitives.dedup();
            d.class_primitives.sort();
            d.class_primitives.dedup();
        }
        out
    })
}

/// Doc text for the reference: spec section references dropped, indented example lines
/// turned into fenced bt code.
pub(crate) fn clean_doc(doc: &str) -> String {
    let re =
        regex::Regex::new(r"\s*\(LANGUAGE\.md[^)]*\)|,?\s*LANGUAGE\.md [0-9.]+").expect("valid");
    let text = re.replace_all(doc, "").into_owned();
    let mut out = String::new();
    let mut in_code = false;
    for line in text.lines() {
        let code = line.starts_with("  ") && !line.trim().is_empty();
        if code && !in_code {
            out.push_str("```bt\n");
            in_code = true;
        } else if !code && in_code {
            out.push_str("```\n");
            in_code = false;
        }
        if code {
            out.push_str(line.strip_prefix("  ").unwrap_or(line));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    if in_code {
        out.push_str("```\n");
    }
    out
}

fn md_escape_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// One class as Markdown.
pub(crate) fn to_markdown(d: &ClassDoc) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# {}\n", d.name);
    let mut line = String::new();
    if !d.modifiers.is_empty() {
        line.push_str(&format!("{} ", d.modifiers.join(" ")));
    }
    if let Some(sup) = &d.superclass {
        line.push_str(&format!("`{sup} subclass: {}`", d.name));
        if let Some(chain) = superclass_link(sup) {
            line.push_str(&format!(" — inherits from {chain}"));
        }
    } else {
        line.push_str("the root class");
    }
    if d.file.is_empty() {
        line.push_str(" · built into the run time");
    } else {
        line.push_str(&format!(" · declared in `{}`", d.file));
    }
    let _ = writeln!(s, "{line}\n");
    if !d.doc.is_empty() {
        let _ = writeln!(s, "{}", clean_doc(&d.doc));
    }
    if !d.slots.is_empty() {
        let _ = writeln!(s, "## Data\n\n| slot | type | |\n|---|---|---|");
        for sl in &d.slots {
            let _ = writeln!(
                s,
                "| `{}: {}` | {} | {} |",
                sl.kind,
                sl.name,
                sl.ty
                    .as_deref()
                    .map(|t| format!("`{}`", md_escape_cell(t)))
                    .unwrap_or_default(),
                md_escape_cell(&summary(&sl.doc))
            );
        }
        s.push('\n');
    }
    for (class_side, title) in [(true, "Class side"), (false, "Instance side")] {
        let ms: Vec<&MethodDoc> = d
            .methods
            .iter()
            .filter(|m| m.class_side == class_side)
            .collect();
        let prims = if class_side {
            &d.class_primitives
        } else {
            &d.primitives
        };
        if ms.is_empty() && prims.is_empty() {
            continue;
        }
        let _ = writeln!(s, "## {title}\n");
        for m in ms {
            let _ = writeln!(s, "### `{}`\n", m.header);
            if !m.doc.is_empty() {
                let _ = writeln!(s, "{}", clean_doc(&m.doc));
            }
        }
        if !prims.is_empty() {
            let list: Vec<String> = prims.iter().map(|p| format!("`{p}`")).collect();
            let _ = writeln!(s, "Also understood (built in): {}\n", list.join(", "));
        }
    }
    while s.ends_with("\n\n") {
        s.pop();
    }
    s
}

/// The first sentence of the first paragraph of a doc comment.
pub(crate) fn summary(s: &str) -> String {
    let text = clean_doc(s);
    let para: Vec<&str> = text
        .lines()
        .take_while(|l| !l.trim().is_empty() && !l.starts_with("```"))
        .map(str::trim)
        .collect();
    let para = para.join(" ");
    match para.find(". ") {
        Some(i) => para[..=i].to_string(),
        None => para,
    }
}

fn superclass_link(sup: &str) -> Option<String> {
    library()
        .contains_key(sup)
        .then(|| format!("[{sup}]({sup}.md)"))
}

/// The index page: every class with the first line of its documentation.
fn index_markdown(docs: &[&ClassDoc]) -> String {
    let mut s = String::from(
        "# Class reference\n\nGenerated by `bt doc --out docs/reference` from the built-in library's \
         declarations and documentation comments; do not edit by hand.\n\n| class | |\n|---|---|\n",
    );
    for d in docs {
        let _ = writeln!(
            s,
            "| [{}]({}.md) | {} |",
            d.name,
            d.name,
            md_escape_cell(&summary(&d.doc))
        );
    }
    s
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Inline Markdown of a doc comment as HTML: `code` spans; the rest escaped.
fn html_inline(s: &str) -> String {
    let mut out = String::new();
    let mut parts = s.split('`');
    if let Some(first) = parts.next() {
        out.push_str(&html_escape(first));
    }
    let rest: Vec<&str> = parts.collect();
    for (i, p) in rest.iter().enumerate() {
        // An unpaired last backtick stays a backtick.
        if i % 2 == 0 && i + 1 == rest.len() {
            out.push('`');
            out.push_str(&html_escape(p));
        } else if i % 2 == 0 {
            out.push_str(&format!("<code>{}</code>", html_escape(p)));
        } else {
            out.push_str(&html_escape(p));
        }
    }
    out
}

/// A doc comment (Markdown: paragraphs, `- ` lists, fenced code, `code` spans) as HTML.
fn doc_html(doc: &str) -> String {
    let mut out = String::new();
    let mut para: Vec<&str> = Vec::new();
    let mut list = false;
    let flush = |para: &mut Vec<&str>, out: &mut String| {
        if !para.is_empty() {
            let _ = writeln!(out, "<p>{}</p>", html_inline(&para.join(" ")));
            para.clear();
        }
    };
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let t = line.trim();
        if t.starts_with("```") {
            flush(&mut para, &mut out);
            if list {
                out.push_str("</ul>\n");
                list = false;
            }
            let mut code = String::new();
            for l in lines.by_ref() {
                if l.trim_start().starts_with("```") {
                    break;
                }
                code.push_str(l);
                code.push('\n');
            }
            let _ = writeln!(out, "<pre><code>{}</code></pre>", html_escape(&code));
        } else if let Some(item) = t.strip_prefix("- ") {
            flush(&mut para, &mut out);
            if !list {
                out.push_str("<ul>\n");
                list = true;
            }
            let _ = writeln!(out, "<li>{}</li>", html_inline(item));
        } else if t.is_empty() {
            flush(&mut para, &mut out);
            if list {
                out.push_str("</ul>\n");
                list = false;
            }
        } else {
            para.push(t);
        }
    }
    flush(&mut para, &mut out);
    if list {
        out.push_str("</ul>\n");
    }
    out
}

/// One class as an HTML fragment; `link` makes the address of another class's section.
fn to_html(d: &ClassDoc, link: &dyn Fn(&str) -> String) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "<section id=\"{0}\"><h1>{0}</h1>", html_escape(&d.name));
    let mut line = String::new();
    if !d.modifiers.is_empty() {
        line.push_str(&format!("{} ", d.modifiers.join(" ")));
    }
    match &d.superclass {
        Some(sup) => {
            let _ = write!(
                line,
                "<code>{} subclass: {}</code> — inherits from <a href=\"{}\">{}</a>",
                html_escape(sup),
                html_escape(&d.name),
                link(sup),
                html_escape(sup)
            );
        }
        None => line.push_str("the root class"),
    }
    if d.file.is_empty() {
        line.push_str(" · built into the run time");
    } else {
        let _ = write!(line, " · declared in <code>{}</code>", html_escape(&d.file));
    }
    let _ = writeln!(s, "<p class=\"decl\">{line}</p>");
    if !d.doc.is_empty() {
        s.push_str(&doc_html(&clean_doc(&d.doc)));
    }
    if !d.slots.is_empty() {
        s.push_str("<h2>Data</h2>\n<ul>\n");
        for sl in &d.slots {
            let _ = writeln!(
                s,
                "<li><code>{}: {}{}</code> {}</li>",
                sl.kind,
                html_escape(&sl.name),
                sl.ty
                    .as_deref()
                    .map(|t| format!(" :: {}", html_escape(t)))
                    .unwrap_or_default(),
                html_inline(&sl.doc)
            );
        }
        s.push_str("</ul>\n");
    }
    for (class_side, title) in [(true, "Class methods"), (false, "Methods")] {
        let ms: Vec<&MethodDoc> = d
            .methods
            .iter()
            .filter(|m| m.class_side == class_side)
            .collect();
        if ms.is_empty() {
            continue;
        }
        let _ = writeln!(s, "<h2>{title}</h2>");
        for m in ms {
            let _ = writeln!(s, "<h3><code>{}</code></h3>", html_escape(&m.header));
            if !m.doc.is_empty() {
                s.push_str(&doc_html(&clean_doc(&m.doc)));
            }
        }
    }
    if !d.primitives.is_empty() {
        let _ = writeln!(
            s,
            "<p>Also understood (built in): <code>{}</code></p>",
            html_escape(&d.primitives.join(" "))
        );
    }
    s.push_str("</section>\n");
    s
}

/// A whole page (one stylesheet for every page).
fn html_page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{}</title>\n<style>\n\
         body {{ font-family: system-ui, sans-serif; max-width: 50rem; margin: 2rem auto; \
         padding: 0 1rem; line-height: 1.45; }}\n\
         code, pre {{ font-family: ui-monospace, monospace; font-size: 0.92em; }}\n\
         pre {{ background: #f4f4f4; padding: 0.6rem 0.8rem; overflow-x: auto; }}\n\
         h3 {{ margin-bottom: 0.2rem; }} section {{ border-bottom: 1px solid #ddd; }}\n\
         p.decl {{ color: #444; }}\n</style></head>\n<body>\n{body}</body></html>\n",
        html_escape(title)
    )
}

/// Runs `bt doc`; answers the exit status.
/// The classes declared in the `.bt` files of `paths` (files, or directories searched).
fn user_docs(paths: &[&str]) -> Result<BTreeMap<String, ClassDoc>, String> {
    let mut files = Vec::new();
    for p in paths {
        super::check::collect(std::path::Path::new(p), &mut files)
            .map_err(|e| format!("cannot read {p}: {e}"))?;
    }
    let mut texts = Vec::new();
    for f in files {
        let src = std::fs::read_to_string(&f).map_err(|e| format!("cannot read {f}: {e}"))?;
        texts.push((f, src));
    }
    Ok(docs_for_sources(&texts, false))
}

/// An argument naming a file or directory rather than a class.
fn is_path(arg: &str) -> bool {
    arg.ends_with(".bt") || arg.contains('/') || std::path::Path::new(arg).is_dir()
}

pub(crate) fn main(a: DocArgs) -> i32 {
    let lib = library();
    let (paths, names): (Vec<&str>, Vec<&str>) = a
        .classes
        .iter()
        .map(String::as_str)
        .partition(|c| is_path(c));
    // The user's classes: from the files given, or (for a name the library lacks) from the
    // `.bt` files under the current directory.
    let wanted_user = !paths.is_empty() || names.iter().any(|n| !lib.contains_key(*n));
    let search: Vec<&str> = if paths.is_empty() {
        vec!["."]
    } else {
        paths.clone()
    };
    let user = if wanted_user {
        match user_docs(&search) {
            Ok(u) => u,
            Err(e) => {
                eprintln!("bt doc: {e}");
                return 2;
            }
        }
    } else {
        BTreeMap::new()
    };
    let mut chosen: Vec<&ClassDoc> = Vec::new();
    if a.classes.is_empty() {
        chosen.extend(lib.values());
    } else if names.is_empty() {
        chosen.extend(user.values());
    } else {
        for c in names {
            match user.get(c).or_else(|| lib.get(c)) {
                Some(d) => chosen.push(d),
                None => {
                    let near: Vec<&String> = lib
                        .keys()
                        .chain(user.keys())
                        .filter(|k| strsim::damerau_levenshtein(k, c) <= 2)
                        .collect();
                    let place = if paths.is_empty() {
                        "the library or the .bt files here"
                    } else {
                        "the library or the files given"
                    };
                    eprintln!(
                        "bt doc: no class {c} in {place}{}",
                        near.first()
                            .map(|n| format!(" (did you mean {n}?)"))
                            .unwrap_or_default()
                    );
                    return 2;
                }
            }
        }
    }
    let ext = if a.html { "html" } else { "md" };
    // One page per class under --out (links to `Class.html`); on standard output one page
    // with a section per class (links to `#Class`).
    let render = |d: &ClassDoc| {
        if a.html {
            html_page(&d.name, &to_html(d, &|c| format!("{c}.html")))
        } else {
            to_markdown(d)
        }
    };
    match &a.out {
        Some(dir) => {
            let dir = std::path::Path::new(dir);
            if let Err(e) = std::fs::create_dir_all(dir) {
                eprintln!("bt doc: cannot create {}: {e}", dir.display());
                return 2;
            }
            let index = if a.html {
                let items: String = chosen
                    .iter()
                    .map(|d| {
                        format!(
                            "<li><a href=\"{0}.html\">{0}</a></li>\n",
                            html_escape(&d.name)
                        )
                    })
                    .collect();
                html_page(
                    "Class reference",
                    &format!("<h1>Class reference</h1><ul>\n{items}</ul>\n"),
                )
            } else {
                index_markdown(&chosen)
            };
            let mut files = vec![(format!("README.{ext}"), index)];
            if a.html {
                files[0].0 = "index.html".into();
            }
            for d in &chosen {
                files.push((format!("{}.{ext}", d.name), render(d)));
            }
            for (name, text) in files {
                if let Err(e) = std::fs::write(dir.join(&name), text) {
                    eprintln!("bt doc: cannot write {name}: {e}");
                    return 2;
                }
            }
            0
        }
        None if a.html => {
            let body: String = chosen
                .iter()
                .map(|d| to_html(d, &|c| format!("#{c}")))
                .collect();
            let title = match chosen.as_slice() {
                [one] => one.name.clone(),
                _ => "Class reference".to_string(),
            };
            crate::cli::common::emit(&html_page(&title, &body))
        }
        None => {
            let mut text = String::new();
            for (i, d) in chosen.iter().enumerate() {
                if i > 0 {
                    text.push('\n');
                }
                text.push_str(&render(d));
            }
            crate::cli::common::emit(&text)
        }
    }
}
