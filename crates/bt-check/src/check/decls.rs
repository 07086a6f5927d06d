//! Declaration checks: unknown and sealed superclasses, data keywords for
//! the class kind, forbidden equality definitions, `Self` as a parameter type, sealed
//! overrides, typed classes, suspicious overrides, internal visibility and type aliases.

use std::collections::HashSet;

use super::classtable::{ClassTable, Kind, Side};
use super::infer::Walker;
use super::types::{may_conform, Ty};
use super::wording::did_you_mean;
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::{self, TypeExpr, TypeKind};

const EQUALITY: &[&str] = &["==", "/=", "=:=", "=/="];

/// Two names equal but for the case of their first letter (`x` / `X`): their copy-setters
/// would both be `withX:`.
fn differ_in_first_case_only(a: &str, b: &str) -> bool {
    let mut ca = a.chars();
    let mut cb = b.chars();
    match (ca.next(), cb.next()) {
        (Some(x), Some(y)) => {
            x != y && x.to_lowercase().eq(y.to_lowercase()) && ca.as_str() == cb.as_str()
        }
        _ => false,
    }
}

/// E0308: a Value class's fields, inherited ones included, may not differ only in the
/// case of their first letter.
fn field_case_clashes(w: &mut Walker, c: &ast::ClassDecl) {
    let mut seen: Vec<(String, Option<String>)> = w
        .table
        .chain(&c.superclass.name)
        .iter()
        .rev()
        .flat_map(|info| {
            info.slots
                .iter()
                .map(|s| (s.name.clone(), Some(info.name.clone())))
        })
        .collect();
    for m in &c.members {
        let ast::Member::Field(s) = m else { continue };
        let name = &s.name.name;
        if let Some((other, owner)) = seen
            .iter()
            .find(|(o, _)| differ_in_first_case_only(o, name))
        {
            let whence = match owner {
                Some(o) => format!("field `{other}` inherited from {o}"),
                None => format!("field `{other}`"),
            };
            let mut upper = name.chars();
            let setter = upper
                .next()
                .map(|f| format!("with{}{}:", f.to_uppercase(), upper.as_str()))
                .unwrap_or_default();
            w.push(
                Diagnostic::error(
                    "E0308",
                    format!(
                        "fields `{other}` and `{name}` of {} differ only in the case of their first letter",
                        c.name.name
                    ),
                    s.name.span,
                )
                .with_label(format!("clashes with {whence}"))
                .with_hint(format!(
                    "both would get the copy-setter `{setter}`; rename one of them"
                )),
            );
        }
        seen.push((name.to_string(), None));
    }
}

pub fn check_class(w: &mut Walker, c: &ast::ClassDecl) {
    if w.is_library() {
        return;
    }
    let table = w.table;
    let name = &c.name.name;
    let sup = &c.superclass.name;
    if sup != "nil" && !sup.contains('@') {
        match table.get(sup) {
            None => {
                let hint = match did_you_mean(sup, table.class_names().map(String::as_str)) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => "define the superclass in this load unit, or load it first".to_string(),
                };
                w.push(
                    Diagnostic::error(
                        "E0202",
                        format!("Undefined class: {sup}"),
                        c.superclass.span,
                    )
                    .with_label(format!("superclass of {name}"))
                    .with_hint(hint),
                );
            }
            Some(info) => {
                if info.sealed {
                    w.push(
                        Diagnostic::error(
                            "E0306",
                            format!("Cannot subclass sealed class {sup}"),
                            c.superclass.span,
                        )
                        .with_label("sealed")
                        .with_hint(format!("{sup} is sealed: no subclasses may be defined; wrap it in a field instead")),
                    );
                }
                w.check_internal_class(sup, c.superclass.span);
            }
        }
    }
    // The parser reports wrong data keywords when the superclass is Value, Actor or Object
    // itself; the checker covers deeper chains.
    let kind = table
        .kind_of(name)
        .filter(|_| !matches!(sup.as_str(), "Value" | "Actor" | "Object"));
    if table.kind_of(name) == Some(Kind::Value) {
        field_case_clashes(w, c);
    }
    let tps: Vec<String> = c
        .type_params
        .iter()
        .map(|p| p.name.name.to_string())
        .collect();
    for m in &c.members {
        match m {
            ast::Member::Field(s) => {
                if let Some(k) = kind.filter(|k| *k != Kind::Value) {
                    let (what, hint) = match k {
                        Kind::Actor => ("an Actor class", "actor classes declare `state:` slots"),
                        _ => (
                            "an Object class",
                            "object classes have no data; subclass Value for fields",
                        ),
                    };
                    w.push(
                        Diagnostic::error(
                            "E0301",
                            format!("`field:` is not allowed in {what} ({name})"),
                            s.span,
                        )
                        .with_hint(hint),
                    );
                }
                typed_slot(w, c, "field:", s);
            }
            ast::Member::State(s) => {
                if let Some(k) = kind.filter(|k| *k != Kind::Actor) {
                    let (what, hint) = match k {
                        Kind::Value => ("a Value class", "value classes declare `field:`"),
                        _ => (
                            "an Object class",
                            "object classes have no data; subclass Actor for state",
                        ),
                    };
                    w.push(
                        Diagnostic::error(
                            "E0301",
                            format!("`state:` is not allowed in {what} ({name})"),
                            s.span,
                        )
                        .with_hint(hint),
                    );
                }
                typed_slot(w, c, "state:", s);
            }
            ast::Member::ClassState(s) => typed_slot(w, c, "classState:", s),
            ast::Member::Method(md) => {
                check_method_decl(w, name, md, &tps);
                let side = if md.class_side {
                    Side::Class
                } else {
                    Side::Instance
                };
                if let Some(sc) = table.get(name).and_then(|i| i.superclass.clone()) {
                    if let Some((sm, owner)) = table.lookup(&sc, side, &md.selector) {
                        if sm.sealed {
                            w.push(
                                Diagnostic::error(
                                    "E0307",
                                    format!(
                                        "Cannot override sealed method '{}' of {owner}",
                                        md.selector
                                    ),
                                    md.selector_span,
                                )
                                .with_label("overrides a sealed method")
                                .with_hint("sealed methods may not be overridden in subclasses"),
                            );
                        } else {
                            suspicious_override(w, table, name, md, &sm.params, owner, &tps);
                        }
                    }
                }
                if c.modifiers.typed {
                    typed_method(w, name, md);
                }
            }
            ast::Member::Expect(_) => {}
        }
    }
}

fn typed_slot(w: &mut Walker, c: &ast::ClassDecl, kw: &str, s: &ast::SlotDecl) {
    if c.modifiers.typed && s.ty.is_none() {
        w.push(
            Diagnostic::warning(
                "W0104",
                "type_annotation",
                format!(
                    "Missing type annotation on `{kw} {}` in typed class {}",
                    s.name.name, c.name.name
                ),
                s.name.span,
            )
            .with_label("no type")
            .with_hint(format!("write `{kw} {} :: Type`", s.name.name)),
        );
    }
}

fn typed_method(w: &mut Walker, class: &str, md: &ast::MethodDecl) {
    for p in &md.params {
        if p.ty.is_none() {
            w.push(
                Diagnostic::warning(
                    "W0104",
                    "type_annotation",
                    format!(
                        "Missing type annotation for parameter '{}' of '{}' in typed class {class}",
                        p.name.name, md.selector
                    ),
                    p.name.span,
                )
                .with_label("no type")
                .with_hint(format!("write `{} :: Type`", p.name.name)),
            );
        }
    }
    if md.ret.is_none() {
        w.push(
            Diagnostic::warning(
                "W0104",
                "type_annotation",
                format!(
                    "Missing return type for '{}' in typed class {class}",
                    md.selector
                ),
                md.selector_span,
            )
            .with_label("no return type")
            .with_hint("write `-> Type` before `=>`"),
        );
    }
}

fn suspicious_override(
    w: &mut Walker,
    table: &ClassTable,
    class: &str,
    md: &ast::MethodDecl,
    super_params: &[Ty],
    owner: &str,
    tps: &[String],
) {
    for (i, (p, st)) in md.params.iter().zip(super_params).enumerate() {
        let Some(t) = &p.ty else { continue };
        let pt = table.resolve(t, tps);
        if pt.is_dynamic()
            || st.is_dynamic()
            || matches!(st, Ty::SelfTy)
            || matches!(pt, Ty::SelfTy)
        {
            continue;
        }
        if !may_conform(&pt, st, table) && !may_conform(st, &pt, table) {
            w.push(
                Diagnostic::warning(
                    "W0402",
                    "inheritance",
                    format!(
                        "Suspicious override: parameter {} of '{}' is {pt} in {class} but {st} in {owner}",
                        i + 1,
                        md.selector
                    ),
                    t.span,
                )
                .with_label(format!("{owner} declares {st}"))
                .with_hint(format!("callers of {owner}>>{} pass {st}; accept it here too", md.selector)),
            );
        }
    }
}

/// Checks shared by class members and standalone methods.
fn check_method_decl(w: &mut Walker, class: &str, md: &ast::MethodDecl, _tps: &[String]) {
    if EQUALITY.contains(&md.selector.as_str()) {
        w.push(
            Diagnostic::error(
                "E0303",
                format!(
                    "Cannot define '{}' in {class}: equality operators are built in",
                    md.selector
                ),
                md.selector_span,
            )
            .with_label("defined here")
            .with_hint("override `equals:` (and `hash`) instead"),
        );
    }
    for p in &md.params {
        if let Some(t) = &p.ty {
            if let Some(span) = self_in(t) {
                w.push(
                    Diagnostic::error(
                        "E0304",
                        format!("`Self` cannot be a parameter type (parameter '{}' of '{}')", p.name.name, md.selector),
                        span,
                    )
                    .with_label("not allowed here")
                    .with_hint(format!("name the class (`{class}`) or a protocol instead; `Self` is allowed only as a return type")),
                );
            }
        }
    }
}

fn self_in(t: &TypeExpr) -> Option<crate::syntax::ast::Span> {
    match &t.kind {
        TypeKind::SelfType => Some(t.span),
        TypeKind::Named { name, args } => {
            if name == "Self" {
                return Some(t.span);
            }
            args.iter().find_map(self_in)
        }
        TypeKind::Union(ms) | TypeKind::Inter(ms) => ms.iter().find_map(self_in),
        TypeKind::Diff(a, b) => self_in(a).or_else(|| self_in(b)),
        _ => None,
    }
}

pub fn check_standalone(w: &mut Walker, sm: &ast::StandaloneMethod) {
    if w.is_library() {
        return;
    }
    let class = &sm.class_name.name;
    if !w.table.is_class(class) {
        if !class.contains('@') {
            let hint = match did_you_mean(class, w.table.class_names().map(String::as_str)) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "define the class first".to_string(),
            };
            w.push(
                Diagnostic::warning(
                    "W0202",
                    "dnu",
                    format!("`{class}` does not name a class"),
                    sm.class_name.span,
                )
                .with_hint(hint),
            );
        }
        return;
    }
    w.check_internal_class(class, sm.class_name.span);
    check_method_decl(w, class, &sm.method, &[]);
    let side = if sm.class_side {
        Side::Class
    } else {
        Side::Instance
    };
    let table = w.table;
    let own = table.get(class).and_then(|i| match side {
        Side::Instance => i.inst.get(sm.method.selector.as_str()),
        Side::Class => i.class.get(sm.method.selector.as_str()),
    });
    let replaced = own.and_then(|m| m.replaced_sealed.clone());
    let inherited = table
        .get(class)
        .and_then(|i| i.superclass.clone())
        .and_then(|sc| {
            table
                .lookup(&sc, side, &sm.method.selector)
                .map(|(m, o)| (m.sealed, o.to_string()))
        })
        .filter(|(sealed, _)| *sealed)
        .map(|(_, o)| o);
    if let Some(owner) = replaced.or(inherited) {
        w.push(
            Diagnostic::error(
                "E0307",
                format!(
                    "Cannot replace sealed method '{}' of {owner}",
                    sm.method.selector
                ),
                sm.method.selector_span,
            )
            .with_label("replaces a sealed method")
            .with_hint("sealed methods may not be replaced; adding new selectors is allowed"),
        );
    }
}

/// Type-alias rules over the aliases of one file.
pub(crate) fn check_aliases(w: &mut Walker, m: &ast::Module) {
    let table = w.table;
    for item in &m.items {
        let ast::Item::TypeAlias(a) = item else {
            continue;
        };
        let name = &a.name.name;
        let first_upper = name.chars().next().is_some_and(|c| c.is_ascii_uppercase());
        if name.chars().count() < 2 || !first_upper {
            w.push(
                Diagnostic::error(
                    "E0504",
                    format!("Type alias name '{name}' must start upper-case and be longer than one character"),
                    a.name.span,
                )
                .with_label("invalid alias name")
                .with_hint("one-letter upper-case names are implicit type parameters"),
            );
        }
        if table.is_class(name) {
            w.push(
                Diagnostic::error(
                    "E0503",
                    format!("Type alias '{name}' has the name of class {name}"),
                    a.name.span,
                )
                .with_label("collides with a class")
                .with_hint("choose another name for the alias"),
            );
        }
        let mut path = vec![name.to_string()];
        if let Some(cycle) = alias_cycle(table, name, &a.ty, &mut path, &mut HashSet::new()) {
            w.push(
                Diagnostic::error(
                    "E0502",
                    format!("Type alias cycle: {}", cycle.join(" -> ")),
                    a.name.span,
                )
                .with_label("refers back to itself")
                .with_hint(
                    "an alias must eventually name classes, symbols or other types, not itself",
                ),
            );
        }
    }
}

fn alias_cycle(
    table: &ClassTable,
    start: &str,
    t: &TypeExpr,
    path: &mut Vec<String>,
    seen: &mut HashSet<String>,
) -> Option<Vec<String>> {
    match &t.kind {
        TypeKind::Named { name, args } => {
            if name == start {
                let mut p = path.clone();
                p.push(name.to_string());
                return Some(p);
            }
            if let Some(alias) = table.aliases.get(name) {
                if seen.insert(name.to_string()) {
                    path.push(name.to_string());
                    let r = alias_cycle(table, start, &alias.ty, path, seen);
                    path.pop();
                    if r.is_some() {
                        return r;
                    }
                }
            }
            args.iter()
                .find_map(|x| alias_cycle(table, start, x, path, seen))
        }
        TypeKind::Meta(x) => alias_cycle(table, start, x, path, seen),
        TypeKind::Union(ms) | TypeKind::Inter(ms) => ms
            .iter()
            .find_map(|x| alias_cycle(table, start, x, path, seen)),
        TypeKind::Diff(a, b) => alias_cycle(table, start, a, path, seen)
            .or_else(|| alias_cycle(table, start, b, path, seen)),
        _ => None,
    }
}
