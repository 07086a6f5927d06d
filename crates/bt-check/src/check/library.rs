//! The built-in library's sources (`stdlib/*.bt`), embedded in the binary. They are the single
//! declaration of every built-in class: the checker reads its classes, selectors and
//! signatures from them ([`super::Checker::new`]) and the interpreter loads them over its
//! primitives (`interp::stdlib`), where `sel => @primitive` binds a selector to the Rust
//! function registered for the same class, side and selector. Add a file here to have it
//! read and loaded; files load as one unit, so their order does not matter.

pub const STDLIB: &[(&str, &str)] = &[
    ("Actor.bt", include_str!("../../../../stdlib/Actor.bt")),
    (
        "Announcement.bt",
        include_str!("../../../../stdlib/Announcement.bt"),
    ),
    (
        "Announcer.bt",
        include_str!("../../../../stdlib/Announcer.bt"),
    ),
    ("Array.bt", include_str!("../../../../stdlib/Array.bt")),
    ("Bag.bt", include_str!("../../../../stdlib/Bag.bt")),
    ("Binary.bt", include_str!("../../../../stdlib/Binary.bt")),
    ("Block.bt", include_str!("../../../../stdlib/Block.bt")),
    ("Boolean.bt", include_str!("../../../../stdlib/Boolean.bt")),
    (
        "Character.bt",
        include_str!("../../../../stdlib/Character.bt"),
    ),
    (
        "Collection.bt",
        include_str!("../../../../stdlib/Collection.bt"),
    ),
    (
        "Concurrency.bt",
        include_str!("../../../../stdlib/Concurrency.bt"),
    ),
    (
        "DateTime.bt",
        include_str!("../../../../stdlib/DateTime.bt"),
    ),
    (
        "Dictionary.bt",
        include_str!("../../../../stdlib/Dictionary.bt"),
    ),
    (
        "Duration.bt",
        include_str!("../../../../stdlib/Duration.bt"),
    ),
    (
        "Exception.bt",
        include_str!("../../../../stdlib/Exception.bt"),
    ),
    ("Erlang.bt", include_str!("../../../../stdlib/Erlang.bt")),
    ("File.bt", include_str!("../../../../stdlib/File.bt")),
    ("Float.bt", include_str!("../../../../stdlib/Float.bt")),
    ("Integer.bt", include_str!("../../../../stdlib/Integer.bt")),
    (
        "Interval.bt",
        include_str!("../../../../stdlib/Interval.bt"),
    ),
    ("Json.bt", include_str!("../../../../stdlib/Json.bt")),
    ("List.bt", include_str!("../../../../stdlib/List.bt")),
    ("Node.bt", include_str!("../../../../stdlib/Node.bt")),
    ("Number.bt", include_str!("../../../../stdlib/Number.bt")),
    ("Object.bt", include_str!("../../../../stdlib/Object.bt")),
    (
        "Observer.bt",
        include_str!("../../../../stdlib/Observer.bt"),
    ),
    (
        "ProcessNavigation.bt",
        include_str!("../../../../stdlib/ProcessNavigation.bt"),
    ),
    (
        "Protocols.bt",
        include_str!("../../../../stdlib/Protocols.bt"),
    ),
    ("Queue.bt", include_str!("../../../../stdlib/Queue.bt")),
    ("Random.bt", include_str!("../../../../stdlib/Random.bt")),
    (
        "Reflection.bt",
        include_str!("../../../../stdlib/Reflection.bt"),
    ),
    ("Regex.bt", include_str!("../../../../stdlib/Regex.bt")),
    ("Result.bt", include_str!("../../../../stdlib/Result.bt")),
    (
        "RetryPolicy.bt",
        include_str!("../../../../stdlib/RetryPolicy.bt"),
    ),
    ("Set.bt", include_str!("../../../../stdlib/Set.bt")),
    ("Stream.bt", include_str!("../../../../stdlib/Stream.bt")),
    ("String.bt", include_str!("../../../../stdlib/String.bt")),
    (
        "SupervisionSpec.bt",
        include_str!("../../../../stdlib/SupervisionSpec.bt"),
    ),
    (
        "Supervisor.bt",
        include_str!("../../../../stdlib/Supervisor.bt"),
    ),
    ("Symbol.bt", include_str!("../../../../stdlib/Symbol.bt")),
    ("System.bt", include_str!("../../../../stdlib/System.bt")),
    (
        "TestCase.bt",
        include_str!("../../../../stdlib/TestCase.bt"),
    ),
    ("Tuple.bt", include_str!("../../../../stdlib/Tuple.bt")),
    ("Types.bt", include_str!("../../../../stdlib/Types.bt")),
];

/// One file of [`STDLIB`] as `syntax::parse_library` parses it (`@primitive` bodies allowed),
/// made on its first use and shared by everything that reads the library (the checker's
/// class table, the interpreter's loader). The tree is read from the image the build script
/// made of the file's parse (`syntax::image`: no lexing or parsing at run time;
/// `tests::every_image_is_the_parse` holds it to a fresh parse). A file that fails to parse
/// contributes what was recovered. Method bodies are parsed on first read: a program runs a
/// few dozen of the library's ~1,700 methods. The trees do not depend on who made them or
/// when (nothing is interned).
pub fn module(i: usize) -> &'static crate::syntax::ast::Module {
    static MODULES: [OnceLock<crate::syntax::ast::Module>; STDLIB.len()] =
        [const { OnceLock::new() }; STDLIB.len()];
    MODULES[i].get_or_init(|| {
        let (name, src) = STDLIB[i];
        match SCANNED.iter().position(|s| s.0 == name) {
            Some(k) => crate::syntax::image::decode(image(k), src),
            None => parse(src),
        }
    })
}

/// The image of `SCANNED[k]`'s file.
fn image(k: usize) -> &'static [u8] {
    let (from, to) = IMAGES[k];
    &IMAGE_BLOB[from..to]
}

/// A library file parsed now (what its image holds).
fn parse(src: &'static str) -> crate::syntax::ast::Module {
    let opts = crate::syntax::Options {
        allow_primitives: true,
    };
    crate::syntax::parse_library(src, opts).0
}

/// Every file's syntax tree, in [`STDLIB`]'s order (what a reader of the whole library — the
/// full class tables, `bt doc`, reflection over every class — needs). The files not parsed
/// yet are parsed on two threads (each takes the next unparsed one).
pub fn parsed() -> Vec<&'static crate::syntax::ast::Module> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static ALL: OnceLock<()> = OnceLock::new();
    ALL.get_or_init(|| {
        let next = AtomicUsize::new(0);
        let parse_from = || loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= STDLIB.len() {
                break;
            }
            module(i);
        };
        std::thread::scope(|s| {
            let helper = std::thread::Builder::new()
                .name("bt-stdlib-parse".into())
                .spawn_scoped(s, parse_from);
            parse_from();
            if let Ok(h) = helper {
                let _ = h.join();
            }
        });
    });
    (0..STDLIB.len()).map(module).collect()
}

/// What each library file declares, read from its column-0 lines without parsing it: the
/// classes (with their superclasses), the classes its standalone methods (`Foo >> bar`,
/// `Foo class >> bar`) extend, its protocols and its type aliases. It lets a reader of the
/// library parse and take in only the files a program needs ([`Index::closure`]);
/// `tests::the_index_is_what_the_parser_reads` holds it to the parser's view of every file.
#[derive(Debug, Default)]
pub struct Index {
    pub files: Vec<FileDecls>,
    /// Every file that declares a class or extends it with standalone methods, by class name.
    by_class: HashMap<&'static str, Vec<usize>>,
    /// The superclass each declaration of a class names (the last one wins, as in a load).
    superclass: HashMap<&'static str, &'static str>,
    protocols: HashMap<&'static str, usize>,
    aliases: HashMap<&'static str, usize>,
}

/// The declarations of one library file (see [`Index`]).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FileDecls {
    /// (class, superclass) in the file's order.
    pub classes: Vec<(&'static str, &'static str)>,
    /// Classes extended by standalone methods.
    pub extends: Vec<&'static str>,
    pub protocols: Vec<&'static str>,
    pub aliases: Vec<&'static str>,
}

type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
use std::sync::OnceLock;

/// One file's entry of the index made at build time: (file name, classes with their
/// superclasses, extended classes, protocols, aliases).
type Scanned = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
);

include!(concat!(env!("OUT_DIR"), "/stdlib_index.rs"));

/// The declarations of the library file `name` (see [`Index`]), as the build script read them.
pub fn file_decls(name: &str) -> FileDecls {
    match SCANNED.iter().find(|s| s.0 == name) {
        Some((_, classes, extends, protocols, aliases)) => FileDecls {
            classes: classes.to_vec(),
            extends: extends.to_vec(),
            protocols: protocols.to_vec(),
            aliases: aliases.to_vec(),
        },
        None => FileDecls::default(),
    }
}

/// The index of [`STDLIB`], read once per process.
pub fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut ix = Index::default();
        for (i, (name, _)) in STDLIB.iter().enumerate() {
            let d = file_decls(name);
            for (c, sup) in &d.classes {
                let files = ix.by_class.entry(c).or_default();
                if !files.contains(&i) {
                    files.push(i);
                }
                ix.superclass.insert(c, sup);
            }
            for c in &d.extends {
                let files = ix.by_class.entry(c).or_default();
                if !files.contains(&i) {
                    files.push(i);
                }
            }
            for p in &d.protocols {
                ix.protocols.insert(p, i);
            }
            for a in &d.aliases {
                ix.aliases.insert(a, i);
            }
            ix.files.push(d);
        }
        for files in ix.by_class.values_mut() {
            files.sort_unstable();
        }
        ix
    })
}

impl Index {
    /// Whether the library declares a class of this name.
    pub fn is_class(&self, name: &str) -> bool {
        self.superclass.contains_key(name)
    }

    /// Whether a library class, protocol or type alias has this name.
    pub fn names(&self, name: &str) -> bool {
        self.superclass.contains_key(name)
            || self.protocols.contains_key(name)
            || self.aliases.contains_key(name)
    }

    /// The library's classes' names.
    pub fn class_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.superclass.keys().copied()
    }

    /// The library's protocols' names.
    pub fn protocol_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.protocols.keys().copied()
    }

    /// The library's type aliases' names.
    pub fn alias_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.aliases.keys().copied()
    }

    pub fn protocol_file(&self, name: &str) -> Option<usize> {
        self.protocols.get(name).copied()
    }

    pub fn alias_file(&self, name: &str) -> Option<usize> {
        self.aliases.get(name).copied()
    }

    /// The files that declare or extend `class` (empty for a name the library does not use).
    pub fn class_files(&self, class: &str) -> &[usize] {
        self.by_class.get(class).map_or(&[], |v| v.as_slice())
    }

    /// The files a reader must take in, as one unit, for `classes` to be exactly what the
    /// whole library makes them: the files that declare or extend them, their superclasses'
    /// files, and the same for every class those files declare (a file is taken in whole).
    /// Sorted, in [`STDLIB`]'s order.
    pub fn closure(&self, classes: &[&str]) -> Vec<usize> {
        self.closure_with_classes(classes).0
    }

    /// [`Index::closure`] and the classes it is complete for (those asked for, their
    /// superclasses, and every class the files declare or extend, with their chains).
    pub fn closure_with_classes<'a>(&'a self, classes: &[&'a str]) -> (Vec<usize>, Vec<&'a str>) {
        let mut files: Vec<bool> = vec![false; self.files.len()];
        let mut todo: Vec<&str> = classes.to_vec();
        let mut seen: Vec<&str> = Vec::new();
        let mut seen_set: std::collections::HashSet<&str, foldhash::fast::RandomState> =
            Default::default();
        while let Some(c) = todo.pop() {
            if !seen_set.insert(c) {
                continue;
            }
            seen.push(c);
            if let Some(sup) = self.superclass.get(c) {
                todo.push(sup);
            }
            for &f in self.class_files(c) {
                if !files[f] {
                    files[f] = true;
                    for (d, _) in &self.files[f].classes {
                        todo.push(d);
                    }
                    for d in &self.files[f].extends {
                        todo.push(d);
                    }
                }
            }
        }
        let files = files
            .iter()
            .enumerate()
            .filter(|(_, on)| **on)
            .map(|(i, _)| i)
            .collect();
        (files, seen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::ast::Item;

    #[test]
    fn the_index_is_what_the_parser_reads() {
        for (i, (name, src)) in STDLIB.iter().enumerate() {
            let mut want = FileDecls::default();
            for it in &module(i).items {
                match it {
                    Item::Class(c) => want
                        .classes
                        .push((leak(&c.name.name), leak(&c.superclass.name))),
                    Item::Method(sm) => {
                        let n = leak(&sm.class_name.name);
                        if !want.extends.contains(&n) {
                            want.extends.push(n);
                        }
                    }
                    Item::Protocol(p) => want.protocols.push(leak(&p.name.name)),
                    Item::TypeAlias(a) => want.aliases.push(leak(&a.name.name)),
                    Item::Stmt(_) => panic!("{name}: a library file has no top-level statements"),
                }
            }
            assert_eq!(file_decls(name), want, "{name}");
            // The scan the build script made the index with reads the same from the text.
            let s = super::super::decl_scan::scan(src);
            let scanned = FileDecls {
                classes: s.classes.iter().map(|(c, p)| (leak(c), leak(p))).collect(),
                extends: s.extends.iter().map(|x| leak(x)).collect(),
                protocols: s.protocols.iter().map(|x| leak(x)).collect(),
                aliases: s.aliases.iter().map(|x| leak(x)).collect(),
            };
            assert_eq!(scanned, want, "{name}");
        }
    }

    /// The tree read from a file's image is the one a fresh parse makes: every node,
    /// every doc's text, every method's source, and each lazy body's statements and
    /// diagnostics once parsed.
    #[test]
    fn every_image_is_the_parse() {
        use crate::syntax::ast::Member;
        let bodies = |m: &crate::syntax::ast::Module| -> Vec<String> {
            let mut out = Vec::new();
            for it in &m.items {
                let methods: Vec<&crate::syntax::ast::MethodDecl> = match it {
                    Item::Class(c) => c
                        .members
                        .iter()
                        .filter_map(|m| match m {
                            Member::Method(md) => Some(md),
                            _ => None,
                        })
                        .collect(),
                    Item::Method(sm) => vec![&sm.method],
                    _ => Vec::new(),
                };
                for md in methods {
                    out.push(format!(
                        "{} {:?} {:?} {:?}",
                        md.selector,
                        md.body.is_pending(),
                        md.source,
                        md.body.errors()
                    ));
                }
            }
            out
        };
        for (i, (name, src)) in STDLIB.iter().enumerate() {
            let decoded = crate::syntax::image::decode(image(i_scanned(name)), src);
            let fresh = parse(src);
            // Pending before anything reads them, in both.
            assert_eq!(bodies(&decoded), bodies(&fresh), "{name}");
            assert_eq!(format!("{decoded:?}"), format!("{fresh:?}"), "{name}");
            assert_eq!(
                crate::syntax::image::encode(&decoded, src),
                image(i_scanned(name)),
                "{name}: the image of the decoded tree"
            );
            assert!(std::ptr::eq(module(i), module(i)));
        }
    }

    fn i_scanned(name: &str) -> usize {
        SCANNED.iter().position(|s| s.0 == name).expect("indexed")
    }

    fn leak(s: &str) -> &'static str {
        Box::leak(s.to_string().into_boxed_str())
    }

    #[test]
    fn every_library_file_is_embedded_and_indexed() {
        let mut embedded: Vec<&str> = STDLIB.iter().map(|(n, _)| *n).collect();
        embedded.sort();
        let indexed: Vec<&str> = SCANNED.iter().map(|s| s.0).collect();
        assert_eq!(embedded, indexed, "stdlib/ and STDLIB differ");
    }

    #[test]
    fn a_closure_holds_the_chain_and_the_extensions() {
        let ix = index();
        let file = |n: &str| STDLIB.iter().position(|(f, _)| *f == n).unwrap();
        let c = ix.closure(&["Integer"]);
        for f in ["Integer.bt", "Number.bt", "Object.bt"] {
            assert!(c.contains(&file(f)), "{f} in {c:?}");
        }
        assert!(!c.contains(&file("Regex.bt")), "{c:?}");
        assert!(ix.closure(&["NoSuchClass"]).is_empty());
    }
}
