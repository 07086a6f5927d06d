//! The checker's view of the built-in library, made on first read: a class's entry (what
//! [`ClassTable::add_unit`] over every `stdlib/*.bt` file would make of it) is made the first
//! time the checker asks for it, from the files that declare it, extend it or its ancestors
//! ([`library::Index::closure`]), so a program checks against the few library classes it
//! names or reaches without the library being parsed or tabled whole. Type names in the
//! taken-in files resolve against the whole library's names (the index), so an entry is the
//! same as in a table of the whole library (`tests::lazy_entries_are_the_whole_tables`).
//! Anything that lists entries (did-you-mean over class names, descendants) makes them all.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use super::builtins::ROOT_KINDS;
use super::classtable::{AliasInfo, ClassInfo, ClassTable, Origin, ProtocolInfo};
use super::layered::{Base, Layered};
use super::library;
use crate::syntax::ast::{self, Item};

type Slots<V> = HashMap<String, OnceLock<V>, foldhash::fast::RandomState>;

/// The library's classes (and the root classes, which it extends).
pub(crate) struct LibraryClasses {
    slots: Slots<ClassInfo>,
}

/// The library's class names, and the entries made so far: the base of the table that takes
/// files in, whose type names resolve against the whole library. A class's entry moves from
/// that table into its slot when its closure is in (it does not change after), so the table
/// reads it there instead of keeping a copy.
struct LibraryClassesMade;

pub(crate) struct LibraryAliases {
    slots: Slots<AliasInfo>,
}

pub(crate) struct LibraryProtocols {
    slots: Slots<ProtocolInfo>,
}

fn slots<V>(names: impl Iterator<Item = &'static str>) -> Slots<V> {
    names.map(|n| (n.to_string(), OnceLock::new())).collect()
}

fn classes() -> &'static LibraryClasses {
    static C: OnceLock<LibraryClasses> = OnceLock::new();
    C.get_or_init(|| {
        let ix = library::index();
        LibraryClasses {
            slots: slots(ix.class_names().chain(ROOT_KINDS.iter().map(|(n, _)| *n))),
        }
    })
}

fn aliases() -> &'static LibraryAliases {
    static A: OnceLock<LibraryAliases> = OnceLock::new();
    A.get_or_init(|| LibraryAliases {
        slots: slots(library::index().alias_names()),
    })
}

fn protocols() -> &'static LibraryProtocols {
    static P: OnceLock<LibraryProtocols> = OnceLock::new();
    P.get_or_init(|| LibraryProtocols {
        slots: slots(library::index().protocol_names()),
    })
}

/// The table of the built-in library: empty layers over entries made on first read.
pub(crate) fn library_table() -> ClassTable {
    ClassTable {
        classes: Layered::over(classes()),
        aliases: Layered::over(aliases()),
        protocols: Layered::over(protocols()),
    }
}

/// The root classes and the library files taken in so far, type names resolving against
/// the whole library. Files are added a closure at a time: a class is complete once its
/// closure is in (its entry does not change after), so adding files to the same table
/// makes the entries one table of those files would.
struct TakenIn {
    table: ClassTable,
    files: Vec<bool>,
}

impl TakenIn {
    fn new() -> TakenIn {
        static MADE: LibraryClassesMade = LibraryClassesMade;
        let mut table = ClassTable {
            classes: Layered::over(&MADE),
            aliases: Layered::over(aliases()),
            protocols: Layered::over(protocols()),
        };
        table.load_roots();
        TakenIn {
            table,
            files: vec![false; library::STDLIB.len()],
        }
    }

    /// Adds the files of `files` not added yet, as one unit.
    fn add(&mut self, files: &[usize]) {
        let units: Vec<(&ast::Module, Origin)> = files
            .iter()
            .filter(|&&f| !std::mem::replace(&mut self.files[f], true))
            .map(|&f| (library::module(f), Origin::Stdlib))
            .collect();
        if !units.is_empty() {
            self.table.add_unit(&units);
        }
    }
}

/// Takes in one closure at a time: an entry is made once, whichever thread asks first.
static TAKING_IN: Mutex<Option<TakenIn>> = Mutex::new(None);

impl LibraryClasses {
    /// Makes the entries of `names` and of every class their closure completes.
    fn make(&self, names: &[&str]) {
        let mut g = match TAKING_IN.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => {
                // Another thread is taking files in (at start-up, the library thread of
                // `Checker::prepare_in_background`, which goes through its closures' files
                // from the first). Instead of waiting for it, this one decodes the files of
                // its own closure from the last: the two meet in the middle, and whichever
                // thread comes to a file the other is decoding waits for that file alone.
                // The trees are the same whichever thread decodes them.
                let (files, _) = library::index().closure_with_classes(names);
                for &f in files.iter().rev() {
                    library::module(f);
                }
                TAKING_IN.lock().unwrap_or_else(|e| e.into_inner())
            }
        };
        if names
            .iter()
            .all(|n| self.slots.get(*n).is_none_or(|s| s.get().is_some()))
        {
            return;
        }
        let (files, complete) = library::index().closure_with_classes(names);
        let t = g.get_or_insert_with(TakenIn::new);
        t.add(&files);
        for c in complete {
            if let Some(slot) = self.slots.get(c) {
                if slot.get().is_none() {
                    // Moved, not copied: the table reads it from the slot from now on
                    // (`LibraryClassesMade`).
                    if let Some(info) = t.table.classes.take_own(c) {
                        let _ = slot.set(info);
                    }
                }
            }
        }
    }
}

impl Base<ClassInfo> for LibraryClasses {
    fn get(&self, k: &str) -> Option<&'static ClassInfo> {
        let me = classes();
        let slot = me.slots.get(k)?;
        if slot.get().is_none() {
            me.make(&[k]);
        }
        slot.get()
    }

    fn has(&self, k: &str) -> bool {
        self.slots.contains_key(k)
    }

    fn all(&self) -> Vec<(&'static String, &'static ClassInfo)> {
        let me = classes();
        let names: Vec<&str> = me.slots.keys().map(|k| k.as_str()).collect();
        me.make(&names);
        me.slots
            .iter()
            .filter_map(|(k, s)| Some((k, s.get()?)))
            .collect()
    }
}

impl Base<ClassInfo> for LibraryClassesMade {
    fn get(&self, k: &str) -> Option<&'static ClassInfo> {
        classes().slots.get(k)?.get()
    }

    fn has(&self, k: &str) -> bool {
        classes().slots.contains_key(k)
    }

    fn all(&self) -> Vec<(&'static String, &'static ClassInfo)> {
        classes()
            .slots
            .iter()
            .filter_map(|(k, s)| Some((k, s.get()?)))
            .collect()
    }
}

/// The item of the library that declares `name`, in the file the index names.
fn declared<T>(file: Option<usize>, pick: impl Fn(&'static Item) -> Option<T>) -> Option<T> {
    library::module(file?).items.iter().rev().find_map(pick)
}

impl Base<AliasInfo> for LibraryAliases {
    fn get(&self, k: &str) -> Option<&'static AliasInfo> {
        let slot = aliases().slots.get(k)?;
        if let Some(v) = slot.get() {
            return Some(v);
        }
        let info = declared(library::index().alias_file(k), |it| match it {
            Item::TypeAlias(a) if a.name.name == k => Some(AliasInfo {
                ty: a.ty.clone(),
                internal: a.internal,
                origin: Origin::Stdlib,
            }),
            _ => None,
        })?;
        Some(slot.get_or_init(|| info))
    }

    fn has(&self, k: &str) -> bool {
        self.slots.contains_key(k)
    }

    fn all(&self) -> Vec<(&'static String, &'static AliasInfo)> {
        let me = aliases();
        me.slots
            .keys()
            .filter_map(|k| Some((k, me.get(k)?)))
            .collect()
    }
}

impl Base<ProtocolInfo> for LibraryProtocols {
    fn get(&self, k: &str) -> Option<&'static ProtocolInfo> {
        let slot = protocols().slots.get(k)?;
        if let Some(v) = slot.get() {
            return Some(v);
        }
        let info = declared(library::index().protocol_file(k), |it| match it {
            Item::Protocol(p) if p.name.name == k => Some(ProtocolInfo::of(p)),
            _ => None,
        })?;
        Some(slot.get_or_init(|| info))
    }

    fn has(&self, k: &str) -> bool {
        self.slots.contains_key(k)
    }

    fn all(&self) -> Vec<(&'static String, &'static ProtocolInfo)> {
        let me = protocols();
        me.slots
            .keys()
            .filter_map(|k| Some((k, me.get(k)?)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole library as one unit, the way a table of it was made before entries were
    /// made on first read.
    fn whole() -> ClassTable {
        let mut t = ClassTable::roots();
        let units: Vec<(&ast::Module, Origin)> = library::parsed()
            .into_iter()
            .map(|m| (m, Origin::Stdlib))
            .collect();
        t.add_unit(&units);
        t
    }

    /// A class entry printed with its method maps in order.
    fn canon(c: Option<&ClassInfo>) -> String {
        let Some(c) = c else {
            return "none".into();
        };
        let sorted = |m: &super::super::classtable::MethodMap| {
            m.iter()
                .map(|(k, v)| (k.clone(), format!("{v:?}")))
                .collect::<std::collections::BTreeMap<_, _>>()
        };
        let (inst, class) = (sorted(&c.inst), sorted(&c.class));
        let mut bare = c.clone();
        bare.inst.clear();
        bare.class.clear();
        format!("{bare:?} {inst:?} {class:?}")
    }

    #[test]
    fn lazy_entries_are_the_whole_tables() {
        let want = whole();
        // One class at a time from fresh statics is what a program sees; here the statics
        // are shared by the tests, so each class is compared after its own first read.
        let lazy = library_table();
        let mut names: Vec<&String> = want.classes.keys().collect();
        names.sort();
        for n in &names {
            let a = canon(want.classes.get(n));
            let b = canon(lazy.classes.get(n));
            assert_eq!(a, b, "class {n}");
        }
        let mut lazy_names: Vec<&String> = lazy.classes.keys().collect();
        lazy_names.sort();
        assert_eq!(names, lazy_names);
        for (k, v) in want.aliases.iter() {
            assert_eq!(
                format!("{:?}", Some(v)),
                format!("{:?}", lazy.aliases.get(k)),
                "alias {k}"
            );
        }
        assert_eq!(want.aliases.len(), lazy.aliases.len());
        for (k, v) in want.protocols.iter() {
            assert_eq!(
                format!("{:?}", Some(v)),
                format!("{:?}", lazy.protocols.get(k)),
                "protocol {k}"
            );
        }
        assert_eq!(want.protocols.len(), lazy.protocols.len());
    }
}
