//! Reflection on classes and metaclasses, protocols and CompiledMethod.
//! Class-side receivers are `Value::Class(c)`; metaclass receivers `Value::Meta(c)`.

use crate::interp::class::ClassExt;
use std::any::Any;
use std::sync::Arc;

use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Method, Prims, Unwind};
use crate::interp::prims::{sym_arg, sym_list};
use crate::interp::program::Program;
use crate::value::{ClassRef, Native, NativeObj, Ref, Sym, Value};

pub fn register(p: &mut Prims) {
    p.hooks.conforms = |ctx, c, name| conforms(&ctx.prog, c, name);
    let c = "Class";
    let b = "Behaviour";
    p.add(c, "name", |_ctx, r, _| {
        Ok(match r {
            Value::Meta(c) => Value::sym(&format!("{} class", c.name)),
            Value::Class(c) => Value::Symbol(c.name),
            _ => Value::Nil,
        })
    });
    p.add(c, "printString", |_ctx, r, _| {
        Ok(Value::str(class_label(r)))
    });
    p.add(c, "displayString", |_ctx, r, _| {
        Ok(Value::str(class_label(r)))
    });
    p.add(c, "asString", |_ctx, r, _| Ok(Value::str(class_label(r))));
    p.add(b, "superclass", |ctx, r, _| Ok(superclass(ctx, r)));
    p.add(b, "allSuperclasses", |ctx, r, _| {
        let mut out = Vec::new();
        let mut cur = superclass(ctx, r);
        while !cur.is_nil() {
            out.push(cur.clone());
            cur = superclass(ctx, &cur);
        }
        Ok(Value::list(out))
    });
    p.add(b, "superclassChain", |ctx, r, _| {
        let stop_meta = matches!(r, Value::Meta(_));
        let mut out = Vec::new();
        let mut cur = r.clone();
        while !cur.is_nil() {
            let done = match &cur {
                Value::Class(k) => !stop_meta && Arc::ptr_eq(k, &ctx.prog.core.object),
                Value::Meta(k) => Arc::ptr_eq(k, &ctx.prog.core.object),
                _ => true,
            };
            let is_proto =
                matches!(&cur, Value::Class(k) if Arc::ptr_eq(k, &ctx.prog.core.proto_object));
            if !is_proto {
                out.push(cur.clone());
            }
            if done {
                break;
            }
            cur = superclass(ctx, &cur);
        }
        Ok(Value::list(out))
    });
    p.add(b, "subclasses", |ctx, r, _| {
        Ok(Value::list(subclasses(&ctx.prog, r)))
    });
    p.add(b, "allSubclasses", |ctx, r, _| {
        let mut out = Vec::new();
        let mut stack: Vec<Value> = subclasses(&ctx.prog, r).into_iter().rev().collect();
        while let Some(s) = stack.pop() {
            stack.extend(subclasses(&ctx.prog, &s).into_iter().rev());
            out.push(s);
        }
        Ok(Value::list(out))
    });
    p.add(b, "inheritsFrom:", |ctx, r, a| {
        let (me, side) = split(ctx, r)?;
        let other = match &a[0] {
            Value::Class(k) if !side => k.clone(),
            Value::Meta(k) if side => k.clone(),
            _ => return Ok(Value::False),
        };
        Ok(Value::bool(
            !Arc::ptr_eq(&me, &other) && me.inherits_or_is(&other),
        ))
    });
    p.add(b, "includesBehaviour:", |ctx, r, a| {
        let (me, side) = split(ctx, r)?;
        Ok(Value::bool(match &a[0] {
            Value::Class(k) if !side => me.inherits_or_is(k),
            Value::Meta(k) if side => me.inherits_or_is(k),
            _ => false,
        }))
    });
    p.add(b, "methods", |ctx, r, _| {
        let (me, side) = split(ctx, r)?;
        Ok(sym_list(sorted(table_keys(&me, side))))
    });
    p.add(b, "allMethods", |ctx, r, _| {
        let (me, side) = split(ctx, r)?;
        let mut all = Vec::new();
        for k in me.chain() {
            all.extend(table_keys(&k, side));
        }
        if side {
            // A metaclass's chain continues through Class and Behaviour.
            for k in ctx.prog.core.class.chain() {
                all.extend(table_keys(&k, false));
            }
        }
        Ok(sym_list(sorted(all)))
    });
    p.add(b, "localClassMethods", |ctx, r, _| {
        let (me, _) = split(ctx, r)?;
        Ok(sym_list(sorted(table_keys(&me, true))))
    });
    p.add(b, "selectors", |ctx, r, _| {
        let (me, side) = split(ctx, r)?;
        Ok(sym_list(sorted(table_keys(&me, side))))
    });
    p.add(b, "canUnderstand:", |ctx, r, a| {
        let sel = sym_arg(ctx, &a[0], "canUnderstand: argument")?;
        let (me, side) = split(ctx, r)?;
        // Instances of `me` (for a metaclass: the class itself) understand `sel`?
        Ok(Value::bool(ctx.lookup_in(&me, side, sel).is_some()))
    });
    p.add(b, "includesSelector:", |ctx, r, a| {
        let sel = sym_arg(ctx, &a[0], "includesSelector: argument")?;
        let (me, side) = split(ctx, r)?;
        Ok(Value::bool(table_keys(&me, side).contains(&sel)))
    });
    p.add(b, "whichClassIncludesSelector:", |ctx, r, a| {
        let sel = sym_arg(ctx, &a[0], "whichClassIncludesSelector: argument")?;
        let (me, side) = split(ctx, r)?;
        for k in me.chain() {
            if table_keys(&k, side).contains(&sel) {
                return Ok(if side {
                    Value::Meta(k)
                } else {
                    Value::Class(k)
                });
            }
        }
        if side {
            for k in ctx.prog.core.class.chain() {
                if table_keys(&k, false).contains(&sel) {
                    return Ok(Value::Class(k));
                }
            }
        }
        Ok(Value::Nil)
    });
    p.add(b, "fieldNames", |ctx, r, _| {
        let (me, _) = split(ctx, r)?;
        let inherited = me
            .superclass
            .as_ref()
            .map(|s| s.field_names.len())
            .unwrap_or(0);
        Ok(sym_list(me.field_names.iter().skip(inherited).copied()))
    });
    p.add(b, "allFieldNames", |ctx, r, _| {
        let (me, _) = split(ctx, r)?;
        Ok(sym_list(me.field_names.iter().copied()))
    });
    p.add(b, "classVarNames", |ctx, r, _| {
        let (me, _) = split(ctx, r)?;
        let names: Vec<Sym> = me.class_state.lock().iter().map(|(n, _)| *n).collect();
        Ok(sym_list(names))
    });
    p.add(b, "allClassVarNames", |ctx, r, _| {
        let (me, _) = split(ctx, r)?;
        let mut names = Vec::new();
        for k in me.chain().into_iter().rev() {
            names.extend(k.class_state.lock().iter().map(|(n, _)| *n));
        }
        Ok(sym_list(names))
    });
    p.add(c, "doc", |ctx, r, _| {
        let (me, _) = split(ctx, r)?;
        let d = me.doc.read().clone();
        Ok(d.map(Value::str).unwrap_or(Value::Nil))
    });
    p.add(c, "doc:", |ctx, r, a| {
        let (me, _) = split(ctx, r)?;
        let s = match &a[0] {
            Value::Nil => None,
            v => Some(ctx.display_string(v)?),
        };
        *me.doc.write() = s;
        Ok(r.clone())
    });
    p.add(c, "docForMethod:", |ctx, r, a| {
        let sel = sym_arg(ctx, &a[0], "docForMethod: argument")?;
        let (me, side) = split(ctx, r)?;
        let key = if side {
            format!("class {sel}")
        } else {
            sel.as_str().to_string()
        };
        for k in me.chain() {
            if let Some(d) = k.method_docs.read().get(&key) {
                return Ok(Value::str(d.clone()));
            }
            if let Some(d) = crate::interp::loader::library_doc(&k, side, sel) {
                return Ok(Value::str(d));
            }
        }
        Ok(Value::Nil)
    });
    p.add(c, "conformsTo:", |ctx, r, a| {
        let name = sym_arg(ctx, &a[0], "conformsTo: argument")?;
        let (me, _) = split(ctx, r)?;
        if !ctx.prog.protocol_table().read().contains_key(&name) {
            return Ok(Value::False);
        }
        Ok(Value::bool(conforms(&ctx.prog, &me, name)))
    });
    p.add(c, "protocols", |ctx, r, _| {
        let (me, _) = split(ctx, r)?;
        let names: Vec<Sym> = ctx.prog.protocol_table().read().keys().copied().collect();
        let ok: Vec<Sym> = names
            .into_iter()
            .filter(|n| conforms(&ctx.prog, &me, *n))
            .collect();
        Ok(sym_list(sorted(ok)))
    });
    p.add(b, "isBehaviour", |_, _, _| Ok(Value::True));
    p.add(c, "isClass", |_ctx, r, _| {
        Ok(Value::bool(matches!(r, Value::Class(_))))
    });
    p.add(c, "isMeta", |_ctx, r, _| {
        Ok(Value::bool(matches!(r, Value::Meta(_))))
    });
    p.add(c, "isMetaclass", |_ctx, r, _| {
        Ok(Value::bool(matches!(r, Value::Meta(_))))
    });
    p.add(b, "isAbstract", |ctx, r, _| {
        Ok(Value::bool(split(ctx, r)?.0.is_abstract))
    });
    p.add(c, "thisClass", |ctx, r, _| {
        Ok(Value::Class(split(ctx, r)?.0))
    });
    p.add(c, "instanceClass", |ctx, r, _| {
        Ok(Value::Class(split(ctx, r)?.0))
    });
    p.add(b, ">>", |ctx, r, a| {
        let sel = sym_arg(ctx, &a[0], ">> argument")?;
        let (me, side) = split(ctx, r)?;
        compiled_method(ctx, &me, side, sel)
    });
    p.add(b, "compiledMethodAt:", |ctx, r, a| {
        let sel = sym_arg(ctx, &a[0], "compiledMethodAt: argument")?;
        let (me, side) = split(ctx, r)?;
        compiled_method(ctx, &me, side, sel)
    });
    p.add(b, "removeSelector:", |ctx, r, a| {
        let sel = sym_arg(ctx, &a[0], "removeSelector: argument")?;
        let (me, side) = split(ctx, r)?;
        let own = if side {
            me.class_methods().read().contains_key(&sel)
        } else {
            me.methods().read().contains_key(&sel)
        };
        let old = if own {
            compiled_method(ctx, &me, side, sel)?
        } else {
            Value::Nil
        };
        let removed = ctx.prog.remove_method(&me, side, sel);
        Ok(if removed { old } else { Value::Nil })
    });
    p.add(b, "kind", |ctx, r, _| {
        let (me, _) = split(ctx, r)?;
        Ok(Value::sym(match me.kind {
            crate::interp::class::ClassKind::Value => "value",
            crate::interp::class::ClassKind::Actor => "actor",
            crate::interp::class::ClassKind::Object => "object",
        }))
    });

    let pr = "Protocol";
    p.add_class(pr, "requiredMethods:", |ctx, _, a| {
        let name = sym_arg(ctx, &a[0], "requiredMethods: argument")?;
        let (inst, _) = required(&ctx.prog, name).ok_or_else(|| unknown_protocol(ctx, name))?;
        Ok(sym_list(inst))
    });
    p.add_class(pr, "conformingClasses:", |ctx, _, a| {
        let name = sym_arg(ctx, &a[0], "conformingClasses: argument")?;
        // No class conforms to a protocol that does not exist.
        if required(&ctx.prog, name).is_none() {
            return Ok(Value::list(Vec::new()));
        }
        let classes: Vec<Value> = ctx
            .prog
            .all_classes()
            .into_iter()
            .filter(|c| conforms(&ctx.prog, c, name))
            .map(Value::Class)
            .collect();
        Ok(Value::list(classes))
    });
    p.add_class(pr, "allProtocols", |ctx, _, _| {
        let names: Vec<Sym> = ctx.prog.protocol_table().read().keys().copied().collect();
        Ok(sym_list(sorted(names)))
    });

    let cm = "CompiledMethod";
    p.add(cm, "selector", |ctx, r, _| {
        with_cm(ctx, r, |m| Value::Symbol(m.selector))
    });
    p.add(cm, "argumentCount", |ctx, r, _| {
        with_cm(ctx, r, |m| Value::Int(m.arity as i64))
    });
    p.add(cm, "source", |ctx, r, _| {
        with_cm(ctx, r, |m| Value::str(m.source.clone()))
    });
    p.add(cm, "doc", |ctx, r, _| {
        with_cm(ctx, r, |m| {
            m.doc.clone().map(Value::str).unwrap_or(Value::Nil)
        })
    });
    p.add(cm, "printString", |ctx, r, _| {
        with_cm(ctx, r, |m| Value::str(m.label()))
    });
    p.add(cm, "asString", |ctx, r, _| {
        with_cm(ctx, r, |m| Value::str(m.label()))
    });
    p.add(cm, "displayString", |ctx, r, _| {
        with_cm(ctx, r, |m| Value::str(m.label()))
    });
    p.add(cm, "methodClass", |ctx, r, _| {
        with_cm(ctx, r, |m| Value::Class(m.owner.clone()))
    });
}

fn class_label(r: &Value) -> String {
    match r {
        Value::Class(c) => c.name.as_str().to_string(),
        Value::Meta(c) => format!("{} class", c.name),
        _ => String::new(),
    }
}

/// (class, is-metaclass) of a class-side receiver.
fn split(ctx: &Ctx, r: &Value) -> Result<(ClassRef, bool), Unwind> {
    // Reflection reads what the library declares of a class (docs, class variables).
    match r {
        Value::Class(c) => {
            c.take_in_library();
            Ok((c.clone(), false))
        }
        Value::Meta(c) => {
            c.take_in_library();
            Ok((c.clone(), true))
        }
        other => {
            let n = ctx.class_name_of(other);
            Err(ctx.type_err(format!("{n} is not a class")))
        }
    }
}

/// The class registered under `c`'s name now (`c` itself unless it was redefined).
fn current(ctx: &Ctx, c: &ClassRef) -> ClassRef {
    match ctx.prog.class_by_sym(c.name) {
        Some(k) if !Arc::ptr_eq(&k, c) => k,
        _ => c.clone(),
    }
}

fn superclass(ctx: &Ctx, r: &Value) -> Value {
    match r {
        Value::Class(c) => match &c.superclass {
            Some(s) => Value::Class(current(ctx, s)),
            None => Value::Nil,
        },
        Value::Meta(c) => match &c.superclass {
            Some(s) => Value::Meta(current(ctx, s)),
            None => Value::Class(ctx.prog.core.class.clone()),
        },
        _ => Value::Nil,
    }
}

fn subclasses(prog: &Program, r: &Value) -> Vec<Value> {
    prog.take_in_library();
    match r {
        Value::Class(c) => c.live_subclasses().into_iter().map(Value::Class).collect(),
        Value::Meta(c) => c.live_subclasses().into_iter().map(Value::Meta).collect(),
        _ => Vec::new(),
    }
}

fn table_keys(c: &ClassRef, side: bool) -> Vec<Sym> {
    if side {
        c.class_methods().read().keys().copied().collect()
    } else {
        c.methods().read().keys().copied().collect()
    }
}

fn sorted(mut v: Vec<Sym>) -> Vec<Sym> {
    v.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    v.dedup();
    v
}

/// All selectors a protocol requires (its own plus those of the protocols it extends).
fn required(prog: &Program, name: Sym) -> Option<(Vec<Sym>, Vec<Sym>)> {
    let protos = prog.protocol_table().read();
    let mut p = protos.get(&name)?;
    let mut inst = Vec::new();
    let mut cls = Vec::new();
    let mut seen = Vec::new();
    loop {
        inst.extend(p.selectors.iter().copied());
        cls.extend(p.class_selectors.iter().copied());
        seen.push(p.name);
        match p.extending.and_then(|e| protos.get(&e)) {
            Some(next) if !seen.contains(&next.name) => p = next,
            _ => break,
        }
    }
    Some((inst, cls))
}

/// Structural conformance: the class (with inherited methods) understands every selector.
pub fn conforms(prog: &Program, c: &ClassRef, name: Sym) -> bool {
    let Some((inst, cls)) = required(prog, name) else {
        return false;
    };
    inst.iter().all(|s| c.lookup(*s).is_some())
        && cls
            .iter()
            .all(|s| c.lookup_class_side(*s).is_some() || prog.core.class.lookup(*s).is_some())
}

fn unknown_protocol(ctx: &Ctx, name: Sym) -> Unwind {
    ctx.err(ErrorKind::NotFound, format!("protocol not found: #{name}"))
}

/// A CompiledMethod value (answer of `Class >> #sel`).
pub struct CompiledMethodObj {
    pub class: ClassRef,
    pub owner: ClassRef,
    pub class_side: bool,
    pub selector: Sym,
    pub arity: usize,
    pub source: String,
    pub doc: Option<String>,
    pub id: usize,
}

impl CompiledMethodObj {
    fn label(&self) -> String {
        if self.class_side {
            format!("{} class>>{}", self.owner.name, self.selector)
        } else {
            format!("{}>>{}", self.owner.name, self.selector)
        }
    }
}

impl NativeObj for CompiledMethodObj {
    fn class(&self) -> ClassRef {
        self.class.clone()
    }
    fn print_string(&self) -> String {
        self.label()
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        other
            .as_any()
            .downcast_ref::<CompiledMethodObj>()
            .is_some_and(|o| o.id == self.id)
    }
    fn hash_code(&self) -> u64 {
        self.id as u64
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        (9, vec![self.id as u64])
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn compiled_method(ctx: &Ctx, c: &ClassRef, side: bool, sel: Sym) -> EvalResult {
    // Own methods first, then inherited ones (labelled with the class asked: `Integer>>+`).
    let found = c.chain().into_iter().find_map(|k| {
        if side {
            k.class_methods().read().get(&sel).map(Method::forced)
        } else {
            k.methods().read().get(&sel).map(Method::forced)
        }
    });
    let Some(m) = found else {
        return Ok(Value::Nil);
    };
    let (source, doc, id) = match &m {
        Method::Compiled(cm) => (cm.source.clone(), cm.doc.clone(), Arc::as_ptr(cm) as usize),
        Method::Prim(p) => (format!("{sel} => @primitive"), None, p.f as usize),
        _ => (
            format!("{sel} => <generated accessor>"),
            None,
            Arc::as_ptr(c) as usize ^ sel.index(),
        ),
    };
    // A library method's doc comment is kept apart from its body (primitives and lazily
    // parsed methods): read it as `docForMethod:` does.
    let doc = doc.or_else(|| {
        c.chain()
            .into_iter()
            .find_map(|k| crate::interp::loader::library_doc(&k, side, sel))
    });
    let obj = CompiledMethodObj {
        class: ctx.prog.core.compiled_method.clone(),
        owner: c.clone(),
        class_side: side,
        selector: sel,
        arity: crate::interp::eval::sel_arity(sel.as_str()),
        source,
        doc,
        id,
    };
    Ok(Value::Native(Ref::new(Native(Box::new(obj)))))
}

fn with_cm(ctx: &Ctx, r: &Value, f: impl FnOnce(&CompiledMethodObj) -> Value) -> EvalResult {
    if let Value::Native(n) = r {
        if let Some(m) = n.0.as_any().downcast_ref::<CompiledMethodObj>() {
            return Ok(f(m));
        }
    }
    Err(ctx.type_err("not a CompiledMethod"))
}
