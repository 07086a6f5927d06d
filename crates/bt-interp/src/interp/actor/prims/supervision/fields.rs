//! The generated field protocol of the
//! snapshot Value classes: `ProcessNavigation` (field `nodes`), `SupervisionTree`
//! (`flatNodes`) and `SupervisionNode` (`pid registeredName kind behaviourClass
//! childCount`): `new`, `new:`, the keyword constructor, `with…:` copy-setters,
//! `fieldNames`, `fieldAt:` and `fieldAt:put:` (which raises `immutable_value`).
//! The getters are the ordinary selectors in nav.rs.

use std::sync::Arc;

use crate::interp::actor::handle::downcast;
use crate::interp::actor::prims::supervision::nav::hand_built;
use crate::interp::actor::prims::supervision::snap::{default_fields, Repr, SnapVal, NODE_FIELDS};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::value::Value;

fn snap<'a>(ctx: &Ctx, r: &'a Value) -> Result<&'a SnapVal, Unwind> {
    downcast::<SnapVal>(r).ok_or_else(|| {
        let n = ctx.class_name_of(r);
        ctx.type_err(format!("{n} is not a snapshot value"))
    })
}

/// The field names of the view `r` is.
fn names_of(s: &SnapVal) -> &'static [&'static str] {
    match s.repr {
        Repr::Nav { .. } => &["nodes"],
        Repr::Tree { .. } => &["flatNodes"],
        Repr::Node { .. } => &NODE_FIELDS,
    }
}

/// The current field values of `s`.
fn values_of(s: &SnapVal) -> Vec<Value> {
    match &s.repr {
        Repr::Nav { .. } | Repr::Tree { .. } => vec![s.list_field()],
        Repr::Node { .. } => s.fields().to_vec(),
    }
}

/// A copy of `s` with field `i` set to `v` (snapshot data and links kept).
fn with_field(s: &SnapVal, i: usize, v: Value) -> Value {
    let repr = match &s.repr {
        Repr::Nav { .. } => Repr::Nav { nodes: Some(v) },
        Repr::Tree { .. } => Repr::Tree { flat: Some(v) },
        Repr::Node { path, .. } => {
            let mut f = s.fields();
            f[i] = v;
            Repr::Node {
                path: path.clone(),
                fields: Some(Arc::new(f)),
            }
        }
    };
    s.with_repr(repr).value()
}

/// A hand-built value of `class` from field values (missing ones: the 7.x defaults).
fn build(ctx: &mut Ctx, class: &str, vals: Vec<Option<Value>>) -> Value {
    let repr = match class {
        "ProcessNavigation" => Repr::Nav {
            nodes: Some(vals[0].clone().unwrap_or_else(|| Value::list(Vec::new()))),
        },
        "SupervisionTree" => Repr::Tree {
            flat: Some(vals[0].clone().unwrap_or_else(|| Value::list(Vec::new()))),
        },
        _ => {
            let mut f = default_fields();
            for (slot, v) in f.iter_mut().zip(vals) {
                if let Some(v) = v {
                    *slot = v;
                }
            }
            Repr::Node {
                path: Vec::new(),
                fields: Some(Arc::new(f)),
            }
        }
    };
    hand_built(ctx, repr)
}

fn field_names(class: &str) -> &'static [&'static str] {
    match class {
        "ProcessNavigation" => &["nodes"],
        "SupervisionTree" => &["flatNodes"],
        _ => &NODE_FIELDS,
    }
}

fn new_from(ctx: &mut Ctx, class: &'static str, arg: &Value) -> EvalResult {
    let Value::Dict(d) = arg else {
        let n = ctx.class_name_of(arg);
        return Err(ctx.type_err(format!(
            "new: expects a Dictionary of field values, not {n}"
        )));
    };
    let vals = field_names(class)
        .iter()
        .map(|f| d.get(&Value::sym(f)).cloned())
        .collect();
    Ok(build(ctx, class, vals))
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

macro_rules! class_side {
    ($p:expr, $class:literal, $kw:literal) => {
        $p.add_class($class, "new", |ctx, _, _| {
            let n = field_names($class).len();
            Ok(build(ctx, $class, vec![None; n]))
        });
        $p.add_class($class, "new:", |ctx, _, a| new_from(ctx, $class, &a[0]));
        $p.add_class($class, $kw, |ctx, _, a| {
            Ok(build(ctx, $class, a.iter().cloned().map(Some).collect()))
        });
    };
}

macro_rules! setter {
    ($p:expr, $class:literal, $i:literal, $sel:literal) => {
        $p.add($class, $sel, |ctx, r, a| {
            let s = snap(ctx, r)?;
            Ok(with_field(s, $i, a[0].clone()))
        });
    };
}

pub fn register(p: &mut Prims) {
    class_side!(p, "ProcessNavigation", "nodes:");
    class_side!(p, "SupervisionTree", "flatNodes:");
    class_side!(
        p,
        "SupervisionNode",
        "pid:registeredName:kind:behaviourClass:childCount:"
    );
    setter!(p, "ProcessNavigation", 0, "withNodes:");
    setter!(p, "SupervisionTree", 0, "withFlatNodes:");
    setter!(p, "SupervisionNode", 0, "withPid:");
    setter!(p, "SupervisionNode", 1, "withRegisteredName:");
    setter!(p, "SupervisionNode", 2, "withKind:");
    setter!(p, "SupervisionNode", 3, "withBehaviourClass:");
    setter!(p, "SupervisionNode", 4, "withChildCount:");
    for c in ["ProcessNavigation", "SupervisionTree", "SupervisionNode"] {
        p.add(c, "fieldNames", |ctx, r, _| {
            let s = snap(ctx, r)?;
            Ok(Value::list(names_of(s).iter().map(|n| Value::sym(n))))
        });
        p.add(c, "fieldAt:", |ctx, r, a| {
            let s = snap(ctx, r)?;
            let i = match &a[0] {
                Value::Symbol(k) => names_of(s).iter().position(|n| *n == k.as_str()),
                _ => None,
            };
            match i {
                Some(i) => Ok(values_of(s)[i].clone()),
                None => {
                    let shown = crate::interp::actor::prims::supervision::snap::plain_print(&a[0]);
                    Err(ctx.err(ErrorKind::KeyError, format!("key not found: {shown}")))
                }
            }
        });
        p.add(c, "fieldAt:put:", |ctx, r, a| {
            let cls = ctx.class_name_of(r);
            let setter = match &a[0] {
                Value::Symbol(k) => format!("with{}:", upper_first(k.as_str())),
                _ => "with…:".to_string(),
            };
            Err(ctx.err_hint(
                ErrorKind::ImmutableValue,
                format!("{cls} is immutable: fields cannot be changed in place"),
                format!("use {setter} to make a changed copy"),
            ))
        });
    }
}
