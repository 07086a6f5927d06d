//! Keeps `stdlib/{Number,Integer,Float,Character,String,Symbol,Binary}.bt` and the primitive
//! tables in step: every file parses without errors, every `@primitive` stub names a
//! registered primitive of its class and side, and every primitive this family registers is declared.

use std::collections::BTreeSet;

use crate::interp::eval::Prims;
use crate::syntax::ast::{Item, Member};

const FILES: [&str; 7] = [
    "Number",
    "Integer",
    "Float",
    "Character",
    "String",
    "Symbol",
    "Binary",
];

/// (class, class_side, primitive name) declared in the stdlib files.
fn declared() -> BTreeSet<(String, bool, String)> {
    let mut out = BTreeSet::new();
    for f in FILES {
        let path = format!("{}/stdlib/{f}.bt", env!("CARGO_MANIFEST_DIR"));
        let src = std::fs::read_to_string(&path).expect("stdlib file");
        let opts = crate::syntax::Options {
            allow_primitives: true,
        };
        let (module, diags) = crate::syntax::parse_with(&src, opts);
        let errors: Vec<_> = diags
            .iter()
            .filter(|d| d.severity == crate::diagnostic::Severity::Error)
            .map(|d| d.message.clone())
            .collect();
        assert!(errors.is_empty(), "{path}: {errors:?}");
        let classes: Vec<_> = module
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Class(c) => Some(c),
                _ => None,
            })
            .collect();
        assert_eq!(classes.len(), 1, "{path} defines one class");
        let c = classes[0];
        assert_eq!(c.name.name, f);
        for m in &c.members {
            if let Member::Method(m) = m {
                if let Some(p) = &m.primitive {
                    let fresh = out.insert((f.to_string(), m.class_side, p.name.clone()));
                    assert!(fresh, "{path}: {} declared twice", m.selector);
                }
            }
        }
    }
    out
}

fn keys(p: &Prims) -> BTreeSet<(String, bool, String)> {
    p.instance
        .keys()
        .map(|(c, s)| (c.to_string(), false, s.to_string()))
        .chain(
            p.class_side
                .keys()
                .map(|(c, s)| (c.to_string(), true, s.to_string())),
        )
        .filter(|(c, _, _)| FILES.contains(&c.as_str()))
        .collect()
}

#[test]
fn stdlib_stubs_match_the_primitive_tables() {
    // What this family's modules register must be declared; a declared stub may be bound by
    // any module (`String stream` is a collections primitive).
    let mut mine = Prims::default();
    super::number::register(&mut mine);
    super::number::integer::register(&mut mine);
    super::number::float::register(&mut mine);
    super::character::register(&mut mine);
    super::string::register(&mut mine);
    super::string::regex::register(&mut mine);
    super::binary::register(&mut mine);
    super::symbol::register(&mut mine);
    let mut all = Prims::default();
    super::register_all(&mut all);
    let (mine, all) = (keys(&mine), keys(&all));
    let declared = declared();
    assert!(
        declared.len() > 200,
        "only {} primitives declared",
        declared.len()
    );
    let missing: Vec<_> = mine.difference(&declared).collect();
    let unbound: Vec<_> = declared.difference(&all).collect();
    assert!(
        missing.is_empty(),
        "registered but not declared in stdlib: {missing:?}"
    );
    assert!(
        unbound.is_empty(),
        "declared @primitive without a Rust primitive: {unbound:?}"
    );
}
