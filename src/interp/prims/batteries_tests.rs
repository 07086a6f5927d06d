//! Keeps the batteries' stdlib files (`Json.bt`, `File.bt`, `DateTime.bt`, `Regex.bt`,
//! `Random.bt`) and their primitive tables in step: every `@primitive` stub names a registered
//! primitive of its class and side, and every primitive the batteries register on these
//! classes is declared.

use std::collections::BTreeSet;

use crate::interp::eval::Prims;
use crate::syntax::ast::{Item, Member};

const FILES: [&str; 5] = ["Json", "File", "DateTime", "Regex", "Random"];

type Key = (String, bool, String);

fn declared() -> BTreeSet<Key> {
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
        for item in &module.items {
            let Item::Class(c) = item else { continue };
            for m in &c.members {
                if let Member::Method(m) = m {
                    if let Some(p) = &m.primitive {
                        let fresh = out.insert((c.name.name.clone(), m.class_side, p.name.clone()));
                        assert!(fresh, "{path}: {} declared twice", m.selector);
                    }
                }
            }
        }
    }
    out
}

fn keys(p: &Prims, classes: &BTreeSet<String>) -> BTreeSet<Key> {
    p.instance
        .keys()
        .map(|(c, s)| (c.to_string(), false, s.to_string()))
        .chain(
            p.class_side
                .keys()
                .map(|(c, s)| (c.to_string(), true, s.to_string())),
        )
        .filter(|(c, _, _)| classes.contains(c))
        .collect()
}

#[test]
fn battery_stubs_match_the_primitive_tables() {
    let declared = declared();
    let classes: BTreeSet<String> = declared.iter().map(|(c, _, _)| c.clone()).collect();
    let mut mine = Prims::default();
    super::json::register(&mut mine);
    super::file::register(&mut mine);
    super::datetime::register(&mut mine);
    super::regex::register(&mut mine);
    super::random::register(&mut mine);
    let mut all = Prims::default();
    super::register_all(&mut all);
    let (mine, all) = (keys(&mine, &classes), keys(&all, &classes));
    let missing: Vec<_> = mine.difference(&declared).collect();
    let unbound: Vec<_> = declared.difference(&all).collect();
    assert!(
        missing.is_empty(),
        "registered but not declared: {missing:?}"
    );
    assert!(
        unbound.is_empty(),
        "declared without a primitive: {unbound:?}"
    );
    assert!(declared.len() > 60, "only {} declared", declared.len());
}
