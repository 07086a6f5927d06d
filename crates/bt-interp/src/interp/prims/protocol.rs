//! Protocols as objects. A name declared with `Protocol define:` (the
//! stdlib declares Printable, Comparable, JsonRepresentable) evaluates to a protocol object
//! when no class has that name ([`global`], asked by the evaluator's global lookup). The object
//! answers `name`, `requiredMethods` (Symbols, following `extending:`), `extending`,
//! `conformingClasses`, `printString` (its name); anywhere a protocol name is expected as a
//! Symbol (`Integer conformsTo: Printable`, `Protocol requiredMethods: Printable`) the object
//! works too ([`name_of`], used by `prims::sym_arg`). `Protocol isProtocol: x` answers whether
//! a Symbol, String or object names a declared protocol.

use std::any::Any;

use crate::interp::actor::handle::{downcast, native};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims};
use crate::interp::prims::reflection::conforms;
use crate::value::{ClassRef, NativeObj, Sym, Value};

pub fn register(p: &mut Prims) {
    p.hooks.global = global;
    let pr = "Protocol";
    p.add_class(pr, "new", |ctx, r, _| {
        crate::interp::prims::class::refuse_new(ctx, r, "Use Protocol define: NAME")
    });
    p.add_class(pr, "isProtocol:", |ctx, _, a| {
        let name = match &a[0] {
            Value::Symbol(s) => Some(*s),
            Value::Str(s) => Some(Sym::new(s)),
            other => name_of(other),
        };
        Ok(Value::bool(name.is_some_and(|n| {
            ctx.prog.protocol_table().read().contains_key(&n)
        })))
    });
    p.add_class(pr, "named:", |ctx, _, a| {
        let name = crate::interp::prims::sym_arg(ctx, &a[0], "Protocol named: argument")?;
        global(ctx, name)
            .ok_or_else(|| ctx.err(ErrorKind::NotFound, format!("protocol not found: #{name}")))
    });
    p.add(pr, "name", |ctx, r, _| Ok(Value::Symbol(me(ctx, r)?)));
    p.add(pr, "printString", |ctx, r, _| {
        Ok(Value::str(me(ctx, r)?.as_str()))
    });
    p.add(pr, "displayString", |ctx, r, _| {
        Ok(Value::str(me(ctx, r)?.as_str()))
    });
    p.add(pr, "requiredMethods", |ctx, r, _| {
        let name = me(ctx, r)?;
        let req = Sym::new("requiredMethods:");
        let cls = Value::Class(protocol_class(ctx));
        ctx.send(&cls, req, &[Value::Symbol(name)])
    });
    p.add(pr, "conformingClasses", |ctx, r, _| {
        let name = me(ctx, r)?;
        let req = Sym::new("conformingClasses:");
        let cls = Value::Class(protocol_class(ctx));
        ctx.send(&cls, req, &[Value::Symbol(name)])
    });
    p.add(pr, "extending", extending);
    // A protocol's superclass is the protocol it extends (nil for none).
    p.add(pr, "superclass", extending);
    p.add(pr, "isConformedToBy:", |ctx, r, a| {
        let name = me(ctx, r)?;
        let c = match &a[0] {
            Value::Class(c) => c.clone(),
            other => ctx.class_of(other),
        };
        Ok(Value::bool(conforms(&ctx.prog, &c, name)))
    });
    for sel in ["=:=", "=="] {
        p.add(pr, sel, |_, r, a| {
            Ok(Value::bool(
                name_of(r).is_some() && name_of(r) == name_of(&a[0]),
            ))
        });
    }
}

/// The protocol a protocol object extends, or nil.
fn extending(ctx: &mut Ctx, r: &Value, _: &[Value]) -> EvalResult {
    let name = me(ctx, r)?;
    let ext = ctx
        .prog
        .protocol_table()
        .read()
        .get(&name)
        .and_then(|p| p.extending);
    Ok(ext.and_then(|e| global(ctx, e)).unwrap_or(Value::Nil))
}

/// A declared protocol as a value.
pub struct ProtocolObj {
    class: ClassRef,
    pub name: Sym,
}

impl NativeObj for ProtocolObj {
    fn class(&self) -> ClassRef {
        self.class.clone()
    }
    fn print_string(&self) -> String {
        self.name.as_str().to_string()
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        other
            .as_any()
            .downcast_ref::<ProtocolObj>()
            .is_some_and(|o| o.name == self.name)
    }
    fn hash_code(&self) -> u64 {
        self.name.index() as u64 ^ 0x9907_0C01
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        let mut k: Vec<u64> = "Protocol".chars().map(|c| c as u64 + 1).collect();
        k.push(0);
        k.extend(self.name.as_str().chars().map(|c| c as u64 + 1));
        (9, k)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn protocol_class(ctx: &Ctx) -> ClassRef {
    ctx.class_named("Protocol")
        .unwrap_or_else(|| ctx.prog.core.object.clone())
}

/// The protocol object for a declared protocol name (None when no protocol has that name).
pub fn global(ctx: &Ctx, name: Sym) -> Option<Value> {
    if !ctx.prog.protocol_table().read().contains_key(&name) {
        return None;
    }
    Some(native(ProtocolObj {
        class: protocol_class(ctx),
        name,
    }))
}

/// The protocol name of a protocol object.
pub fn name_of(v: &Value) -> Option<Sym> {
    downcast::<ProtocolObj>(v).map(|p| p.name)
}

fn me(ctx: &Ctx, v: &Value) -> Result<Sym, crate::interp::eval::Unwind> {
    name_of(v).ok_or_else(|| ctx.type_err("expected a protocol object"))
}
