//! One declaration per built-in: the primitive registry (`prims::*::register`), the `@primitive`
//! declarations of `stdlib/*.bt` and what the checker believes (`check::Checker::new`, which
//! reads only those declarations) must agree with the classes the run time builds.
//!
//! * every registered primitive is declared `=> @primitive` on its class and side, and every
//!   such declaration names a registered primitive (som-rs warns on undeclared primitives);
//! * no (class, side, selector) is registered twice;
//! * every selector the checker knows for a library class is implemented at run time (found by
//!   the run-time lookup), and every method the run time installs on a library class is known
//!   to the checker on that class;
//! * the checker's kind of each library class is the run time's, and its superclass is the
//!   run time's (except where the run time roots a value class at Object, listed below).

use crate::interp::class::ClassExt;
use std::collections::BTreeSet;

use crate::check::classtable::{ClassTable, Kind, Side};
use crate::check::library::STDLIB;
use crate::check::types::Hierarchy;
use crate::check::Checker;
use crate::interp::class::ClassKind;
use crate::interp::eval::Prims;
use crate::interp::{Interpreter, InterpreterOptions};
use crate::syntax::ast::{Item, Member, MethodDecl};
use crate::value::{ClassRef, Sym};

type Key = (String, bool, String);

fn registry() -> Prims {
    let mut p = Prims::default();
    super::register_all(&mut p);
    p
}

fn registered(p: &Prims) -> BTreeSet<Key> {
    let inst = p
        .table(false)
        .into_keys()
        .map(|(c, s)| (c.to_string(), false, s.to_string()));
    let class = p
        .table(true)
        .into_keys()
        .map(|(c, s)| (c.to_string(), true, s.to_string()));
    inst.chain(class).collect()
}

/// (class, class side?, primitive name) of every `@primitive` declaration in the stdlib.
fn declared_primitives() -> BTreeSet<Key> {
    let mut out = BTreeSet::new();
    let mut add = |class: &str, md: &MethodDecl, side: bool, path: &str| {
        if let Some(p) = &md.primitive {
            let fresh = out.insert((class.to_string(), side, p.name.to_string()));
            assert!(fresh, "{path}: {class}>>{} declared twice", md.selector);
        }
    };
    for (path, src) in STDLIB {
        let opts = crate::syntax::Options {
            allow_primitives: true,
        };
        let (module, diags) = crate::syntax::parse_with(src, opts);
        let errors: Vec<_> = diags.iter().filter(|d| d.is_error()).collect();
        assert!(errors.is_empty(), "{path}: {errors:?}");
        for item in &module.items {
            match item {
                Item::Class(c) => {
                    for m in &c.members {
                        if let Member::Method(md) = m {
                            add(&c.name.name, md, md.class_side, path);
                        }
                    }
                }
                Item::Method(sm) => add(&sm.class_name.name, &sm.method, sm.class_side, path),
                _ => {}
            }
        }
    }
    out
}

#[test]
fn no_primitive_is_registered_twice() {
    let p = registry();
    assert!(
        p.duplicates().is_empty(),
        "registered more than once (class, selector, class side?): {:?}",
        p.duplicates()
    );
}

#[test]
fn every_primitive_is_declared_and_every_declaration_is_registered() {
    let (registered, declared) = (registered(&registry()), declared_primitives());
    let undeclared: Vec<_> = registered.difference(&declared).collect();
    let unbound: Vec<_> = declared.difference(&registered).collect();
    assert!(
        undeclared.is_empty(),
        "registered primitives no stdlib/*.bt declaration names (add `sel => @primitive` to \
         the class; (class, class side?, selector)): {undeclared:?}"
    );
    assert!(
        unbound.is_empty(),
        "`@primitive` declarations no primitive implements: {unbound:?}"
    );
}

fn vm() -> Interpreter {
    Interpreter::new(InterpreterOptions::default())
}

/// Whether the run time finds a method for `sel` on a side of `c` (the class side falls back
/// to the instance side of `Class`, as sends do).
fn runtime_understands(vm: &Interpreter, c: &ClassRef, class_side: bool, sel: Sym) -> bool {
    if class_side {
        c.lookup_class_side(sel).is_some() || vm.prog.core.class.lookup(sel).is_some()
    } else {
        c.lookup(sel).is_some()
    }
}

fn library_classes(t: &ClassTable) -> Vec<String> {
    let mut v: Vec<String> = t
        .classes
        .values()
        .filter(|c| c.origin.is_library())
        .map(|c| c.name.clone())
        .collect();
    v.sort();
    v
}

#[test]
fn every_selector_the_checker_knows_is_implemented() {
    let vm = vm();
    let ch = Checker::new();
    let t = ch.table();
    let mut missing = Vec::new();
    for name in library_classes(t) {
        let Some(c) = vm.prog.class_named(&name) else {
            missing.push(format!("class {name}"));
            continue;
        };
        let info = &t.classes[&name];
        for (side, map) in [(false, &info.inst), (true, &info.class)] {
            for sel in map.keys() {
                if !runtime_understands(&vm, &c, side, Sym::new(sel)) {
                    let s = if side { " class" } else { "" };
                    missing.push(format!("{name}{s}>>{sel}"));
                }
            }
        }
    }
    missing.sort();
    assert!(
        missing.is_empty(),
        "the checker knows selectors no class implements at run time: {missing:?}"
    );
}

#[test]
fn every_method_of_a_library_class_is_declared() {
    let vm = vm();
    let ch = Checker::new();
    let t = ch.table();
    let mut unknown = Vec::new();
    for c in vm.prog.all_classes() {
        let name = c.name.as_str();
        let Some(info) = t.get(name) else {
            unknown.push(format!("class {name}"));
            continue;
        };
        for (side, methods, map) in [
            (false, c.methods().read().clone(), &info.inst),
            (true, c.class_methods().read().clone(), &info.class),
        ] {
            for sel in methods.keys() {
                if !map.contains_key(sel.as_str()) {
                    let s = if side { " class" } else { "" };
                    unknown.push(format!("{name}{s}>>{sel}", sel = sel.as_str()));
                }
            }
        }
    }
    unknown.sort();
    assert!(
        unknown.is_empty(),
        "run-time methods of library classes the stdlib does not declare: {unknown:?}"
    );
}

/// Built-in value classes the run time roots at Object while their declaration (and the
/// checker) puts them under Value: the kind agrees, only `superclass` differs.
const VALUE_ROOTED_AT_OBJECT: &[&str] = &[
    "Binary",
    "Boolean",
    "Collection",
    "Duration",
    "Exception",
    "Number",
    "Queue",
    "String",
    "Symbol",
    "Tuple",
];

/// Classes the run time treats as values (copied, compared by content) that the checker
/// treats as object-kind (no value-class checks): never sent to another node by the checker's
/// rules, so the difference is conservative.
const VALUE_AT_RUN_TIME_OBJECT_TO_CHECKER: &[&str] =
    &["Block", "Pid", "Reference", "Stream", "UndefinedObject"];

#[test]
fn kinds_and_superclasses_agree() {
    let vm = vm();
    let ch = Checker::new();
    let t = ch.table();
    let mut wrong = Vec::new();
    for name in library_classes(t) {
        let Some(c) = vm.prog.class_named(&name) else {
            continue;
        };
        let rt_kind = match c.kind {
            ClassKind::Value => Kind::Value,
            ClassKind::Actor => Kind::Actor,
            ClassKind::Object => Kind::Object,
        };
        let ck = t.kind_of(&name);
        let excused = VALUE_AT_RUN_TIME_OBJECT_TO_CHECKER.contains(&name.as_str())
            && ck == Some(Kind::Object)
            && rt_kind == Kind::Value;
        if ck != Some(rt_kind) && !excused {
            wrong.push(format!(
                "{name}: kind {ck:?} (checker) vs {rt_kind:?} (run time)"
            ));
        }
        let rt_sup = c.superclass.as_ref().map(|s| s.name.as_str().to_string());
        let ck_sup = t.classes[&name].superclass.clone();
        let excused = VALUE_ROOTED_AT_OBJECT.contains(&name.as_str())
            && rt_sup.as_deref() == Some("Object")
            && ck_sup
                .as_deref()
                .is_some_and(|s| t.inherits(s, "Value") == Some(true));
        if rt_sup != ck_sup && !excused {
            wrong.push(format!(
                "{name}: superclass {ck_sup:?} (declared) vs {rt_sup:?} (run time)"
            ));
        }
    }
    assert!(wrong.is_empty(), "{wrong:?}");
}

#[test]
fn the_checker_reads_classes_only_from_the_stdlib() {
    // Without the library the checker knows the roots and nothing else.
    let bare = Checker::bare();
    let mut names: Vec<&String> = bare.table().classes.keys().collect();
    names.sort();
    assert_eq!(names, ["Actor", "Object", "ProtoObject", "Value"]);
    assert!(bare
        .table()
        .classes
        .values()
        .all(|c| c.inst.is_empty() && c.class.is_empty()));
    let _ = Side::Instance;
}

/// The selectors and classes the checker names in its own code (known-remote sources and
/// flow of 4.8, sendability tiers of 4.7) exist at run time, so the two cannot drift.
#[test]
fn the_checkers_own_selector_and_class_lists_exist_at_run_time() {
    use crate::check::infer::{REMOTE_FLOW, REMOTE_SOURCES, SCOPE_SOURCES};
    use crate::check::sendability::{COLLECTIONS, SENDABLE};
    let vm = vm();
    let mut missing = Vec::new();
    let actor = vm.prog.class_named("Actor").expect("Actor");
    for sel in REMOTE_SOURCES.iter().chain(SCOPE_SOURCES) {
        if !runtime_understands(&vm, &actor, true, Sym::new(sel)) {
            missing.push(format!("Actor class>>{sel}"));
        }
    }
    for (class, sel) in REMOTE_FLOW {
        match vm.prog.class_named(class) {
            Some(c) if runtime_understands(&vm, &c, false, Sym::new(sel)) => {}
            _ => missing.push(format!("{class}>>{sel}")),
        }
    }
    for class in SENDABLE.iter().chain(COLLECTIONS) {
        if vm.prog.class_named(class).is_none() {
            missing.push(format!("class {class}"));
        }
    }
    assert!(
        missing.is_empty(),
        "the checker names what the run time does not have: {missing:?}"
    );
}
