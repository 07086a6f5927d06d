//! The static checker: findings as data, many per run.
//!
//! ```text
//! declarations ─▶ ClassTable (built-ins + stdlib + loaded units + this unit)
//! bodies ───────▶ Walker: scopes, local inference, narrowing, sends, patterns
//!                 └─▶ Diagnostics ─▶ @expect suppression ─▶ severity levels ─▶ findings
//! ```
//!
//! The checker is precise where there are annotations and silent where there are none: a
//! receiver or argument of unknown type is never reported, DNU hints are given only for classes
//! whose whole protocol is known, and nothing here changes what a program does.
//!
//! Entry points: [`Checker`] holds the class table of the built-in library and of every unit
//! loaded so far (a REPL session, a test file's fixtures); [`Checker::check_unit`] checks a
//! load unit; [`Checker::check_input`] checks one REPL input or `.btscript` expression against
//! what is already loaded, and [`Checker::remember`] records it once it ran.

pub mod args;
pub mod boundary;
pub mod builtins;
pub mod classtable;
#[cfg(test)]
mod decl_scan;
pub mod decls;
pub mod flow;
pub mod infer;
pub(crate) mod layered;
#[cfg(test)]
mod lazy_body_tests;
pub mod library;
mod library_table;
pub mod manifest;
pub mod options;
pub mod patterns;
pub mod scope;
pub mod sendability;
pub mod sends;
pub mod syntactic;
pub mod types;
pub(crate) mod walk_decls;
pub(crate) mod wording;

#[cfg(test)]
mod tests;

use crate::diagnostic::{Diagnostic, Severity};
use crate::syntax::ast;
use classtable::{ClassTable, Origin};
use infer::Walker;
use options::ExpectSite;
pub use options::{CheckOptions, Level};

/// One file of a unit to check.
#[derive(Clone, Copy)]
pub struct SourceFile<'a> {
    pub path: &'a str,
    pub src: &'a str,
    pub module: &'a ast::Module,
}

/// A finding: which file of the unit, and the diagnostic.
#[derive(Clone, Debug)]
pub struct Finding {
    pub file: usize,
    pub diag: Diagnostic,
}

/// The checker's knowledge of what is loaded: built-in classes, the stdlib, earlier units and
/// top-level bindings of earlier inputs.
#[derive(Clone)]
pub struct Checker {
    table: ClassTable,
    bindings: Vec<String>,
}

impl Default for Checker {
    fn default() -> Self {
        Checker::new()
    }
}

impl Checker {
    /// A checker that knows the built-in library: the root classes and every class declared
    /// in `stdlib/*.bt` ([`library::STDLIB`]), each library entry made when first read
    /// (`check::library_table`).
    pub fn new() -> Checker {
        Checker {
            table: library_table::library_table(),
            bindings: Vec::new(),
        }
    }

    /// Takes in, on a thread of its own, the library classes `classes` (parsing their files
    /// and, with `entries`, making their class-table entries), so that on a second core
    /// this overlaps the caller's other start-up work; a reader that gets there first waits
    /// for it or does it itself. Nothing changes but when the work is done: the files and
    /// entries are the same whichever thread makes them.
    ///
    /// Once per process: the first call starts the thread, later ones do nothing (the files
    /// and entries are kept for the process; what the first call did not ask for is made by
    /// its first reader). `bt run` calls it as soon as its command line is parsed, before
    /// the interpreter is made, so that the thread starts earlier. When done, the thread
    /// runs the thread start asked for meanwhile or within 20 ms, if any
    /// (`base::spare_thread`: `bt run`'s first worker).
    pub fn prepare_in_background(classes: &'static [&'static str], entries: bool) {
        static STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if STARTED.swap(true, std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let _ = std::thread::Builder::new()
            .name("bt-check-library".into())
            .spawn(move || {
                // The thread's end is lent to a thread start asked for meanwhile (`bt run`'s
                // first worker, `base::spare_thread`).
                bt_base::base::spare_thread::open();
                if entries {
                    let t = library_table::library_table();
                    for c in classes {
                        t.classes.get(c);
                    }
                } else {
                    let ix = library::index();
                    for f in ix.closure(classes) {
                        library::module(f);
                    }
                }
                // `bt run` asks within a millisecond or so of the library being done.
                bt_base::base::spare_thread::finish(std::time::Duration::from_millis(20));
            });
    }

    /// A checker that knows only the root classes (`ProtoObject`, `Object`, `Value`, `Actor`).
    pub fn bare() -> Checker {
        Checker {
            table: ClassTable::roots(),
            bindings: Vec::new(),
        }
    }

    /// Adds the declarations of the built-in library (`stdlib/*.bt`).
    #[cfg(test)]
    pub(crate) fn add_stdlib(&mut self, modules: &[&ast::Module]) {
        let units: Vec<(&ast::Module, Origin)> =
            modules.iter().map(|m| (*m, Origin::Stdlib)).collect();
        self.table.add_unit(&units);
    }

    /// Adds the built-in library from source texts (`(file name, source)`), parsed with
    /// `@primitive` bodies allowed. Files that fail to parse contribute what was recovered.
    #[cfg(test)]
    pub(crate) fn add_stdlib_sources(&mut self, sources: &[(&str, &str)]) {
        let opts = crate::syntax::Options {
            allow_primitives: true,
        };
        let modules: Vec<ast::Module> = sources
            .iter()
            .map(|(_, src)| crate::syntax::parse_with(src, opts).0)
            .collect();
        let refs: Vec<&ast::Module> = modules.iter().collect();
        self.add_stdlib(&refs);
    }

    /// The class table (for tools and tests).
    pub fn table(&self) -> &ClassTable {
        &self.table
    }

    /// Top-level binding names already known (REPL, earlier `.btscript` expressions).
    pub fn add_bindings<I: IntoIterator<Item = String>>(&mut self, names: I) {
        for n in names {
            if !self.bindings.contains(&n) {
                self.bindings.push(n);
            }
        }
    }

    /// Records a unit that has been loaded: its declarations become visible to later units and
    /// its top-level assignments become known bindings.
    pub fn remember(&mut self, files: &[SourceFile]) {
        let units: Vec<(&ast::Module, Origin)> =
            files.iter().map(|f| (f.module, Origin::Loaded)).collect();
        self.table.add_unit(&units);
        // Shared with the copies later checks make, so a copy stays cheap however many
        // classes have been loaded.
        self.table.freeze();
        let mut names = Vec::new();
        for f in files {
            for item in &f.module.items {
                if let ast::Item::Stmt(ast::Stmt {
                    kind: ast::StmtKind::Expr(e),
                    ..
                }) = item
                {
                    top_level_assigned(e, &mut names);
                }
            }
        }
        self.add_bindings(names);
    }

    /// Checks a load unit: all its declarations are visible to all its files.
    pub fn check_unit(&self, files: &[SourceFile], opts: &CheckOptions) -> Vec<Finding> {
        self.check_files(files, opts, false)
    }

    /// Checks the built-in library's own files (findings are for library authors).
    pub fn check_library(&self, files: &[SourceFile], opts: &CheckOptions) -> Vec<Finding> {
        self.check_files(files, opts, true)
    }

    /// Checks one REPL input or `.btscript` expression against what is loaded.
    pub fn check_input(&self, file: SourceFile, opts: &CheckOptions) -> Vec<Diagnostic> {
        self.check_unit(&[file], opts)
            .into_iter()
            .map(|f| f.diag)
            .collect()
    }

    fn check_files(
        &self,
        files: &[SourceFile],
        opts: &CheckOptions,
        library: bool,
    ) -> Vec<Finding> {
        let origin = |i: usize| {
            if library {
                Origin::Stdlib
            } else {
                Origin::User(i)
            }
        };
        let mut table = self.table.clone();
        let units: Vec<(&ast::Module, Origin)> = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.module, origin(i)))
            .collect();
        table.add_unit(&units);
        let mut out = Vec::new();
        for (i, f) in files.iter().enumerate() {
            let mut w = Walker::new(&table, f.src, origin(i));
            if !library {
                decls::check_aliases(&mut w, f.module);
            }
            w.walk_module(f.module, &self.bindings);
            let diags = finalize(w.diags, &w.expects, opts);
            out.extend(diags.into_iter().map(|diag| Finding { file: i, diag }));
        }
        out
    }
}

/// `@expect` suppression, stale `@expect`, category levels, `--warnings-as-errors`; sorted.
pub(crate) fn finalize(
    mut diags: Vec<Diagnostic>,
    expects: &[ExpectSite],
    opts: &CheckOptions,
) -> Vec<Diagnostic> {
    let mut used = vec![false; expects.len()];
    diags.retain(|d| {
        let Some(cat) = d.category else { return true };
        let mut keep = true;
        for (i, x) in expects.iter().enumerate() {
            if (x.category == cat || x.category == "all")
                && d.span.start >= x.target.start
                && d.span.start < x.target.end.max(x.target.start + 1)
            {
                used[i] = true;
                keep = false;
            }
        }
        keep
    });
    for (x, u) in expects.iter().zip(&used) {
        if !u {
            diags.push(
                Diagnostic::warning(
                    "W0302",
                    "unused",
                    format!("stale @expect {}: nothing to suppress here", x.category),
                    x.span,
                )
                .with_label("suppresses nothing")
                .with_hint("remove this @expect"),
            );
        }
    }
    let mut out = Vec::with_capacity(diags.len());
    for mut d in diags {
        if let Some(cat) = d.category {
            match opts.levels.get(cat) {
                Some(Level::Off) => continue,
                Some(Level::Error) if d.severity == Severity::Warning => {
                    d.severity = Severity::Error
                }
                Some(Level::Hint) if d.severity == Severity::Warning => d.severity = Severity::Hint,
                _ => {}
            }
        }
        if opts.warnings_as_errors
            && (d.severity == Severity::Warning || d.code == "H0201" || d.code == sends::KNOWN_DNU)
        {
            d.severity = Severity::Error;
        }
        out.push(d);
    }
    out.sort_by_key(|d| (d.span.start, d.span.end));
    out
}

/// Names a top-level statement binds (assignments outside non-inlined blocks).
fn top_level_assigned(e: &ast::Expr, out: &mut Vec<String>) {
    use ast::ExprKind as K;
    match &e.kind {
        K::Assign { name, value, .. } => {
            out.push(name.name.to_string());
            top_level_assigned(value, out);
        }
        K::Destructure { pattern, value } => {
            let mut ids = Vec::new();
            syntactic::pattern_vars(pattern, &mut ids);
            out.extend(
                ids.into_iter()
                    .map(|i| i.name.to_string())
                    .filter(|n| n != "_"),
            );
            top_level_assigned(value, out);
        }
        K::Send {
            receiver,
            selector,
            args,
            ..
        } => {
            top_level_assigned(receiver, out);
            let inlined = matches!(
                selector.as_str(),
                "ifTrue:"
                    | "ifFalse:"
                    | "ifTrue:ifFalse:"
                    | "ifFalse:ifTrue:"
                    | "and:"
                    | "or:"
                    | "ifNil:"
                    | "ifNotNil:"
                    | "ifNil:ifNotNil:"
                    | "ifNotNil:ifNil:"
                    | "whileTrue:"
                    | "whileFalse:"
                    | "whileTrue"
                    | "whileFalse"
                    | "timesRepeat:"
                    | "to:do:"
                    | "to:by:do:"
            );
            for a in args.iter().chain(std::iter::once(receiver.as_ref())) {
                match &a.kind {
                    K::Block(b) if inlined => {
                        for s in &b.body {
                            if let ast::StmtKind::Expr(x) = &s.kind {
                                top_level_assigned(x, out);
                            }
                        }
                    }
                    K::Block(_) => {}
                    _ if std::ptr::eq(a, receiver.as_ref()) => {}
                    _ => top_level_assigned(a, out),
                }
            }
        }
        K::Cascade { receiver, .. } => top_level_assigned(receiver, out),
        K::Match { receiver, arms, .. } => {
            top_level_assigned(receiver, out);
            for a in arms {
                top_level_assigned(&a.body, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod api_tests {
    use super::*;
    use crate::check::wording::{did_you_mean, edit_distance};

    #[test]
    fn distances() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(
            did_you_mean("factorail", ["factorial", "floor"].into_iter()).as_deref(),
            Some("factorial")
        );
        assert_eq!(did_you_mean("zzz", ["factorial"].into_iter()), None);
        assert_eq!(
            did_you_mean("cout", ["count", "step"].into_iter()).as_deref(),
            Some("count")
        );
    }

    #[test]
    fn levels_parse() {
        let mut o = CheckOptions::default();
        o.apply_manifest("[package]\nname = \"x\"\n[diagnostics]\nsendability = \"hint\"\n")
            .unwrap();
        assert_eq!(o.levels.get("sendability"), Some(&Level::Hint));
        o.set_level_arg("sendability=off").unwrap();
        assert_eq!(o.levels.get("sendability"), Some(&Level::Off));
        assert!(o.set_level_arg("bogus=off").is_err());
        assert!(o.set_level_arg("dnu=loud").is_err());
    }

    /// The manifest is TOML: a `#` inside a string is text, a table header inside a
    /// multi-line string is text, keys may be quoted.
    #[test]
    fn the_manifest_is_read_as_toml() {
        let mut o = CheckOptions::default();
        o.apply_manifest(
            "[package]\nname = \"shop #1\"\ndescription = \"\"\"\n[diagnostics]\ntype = \"off\"\n\"\"\"\n\
             [diagnostics]\n\"unused\" = \"off\" # quiet\ntype = 'error'\n",
        )
        .unwrap();
        assert_eq!(o.levels.get("type"), Some(&Level::Error));
        assert_eq!(o.levels.get("unused"), Some(&Level::Off));
        let e = o
            .apply_manifest("[diagnostics]\ntype = [\"off\"]\n")
            .unwrap_err();
        assert!(e.starts_with("2:8: invalid type"), "{e}");
    }
}
