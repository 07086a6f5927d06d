//! Host types: a Rust struct registered as a bt class (`Engine::register_type`), passed to
//! scripts by handle. Scripts send it messages like any object; each method or field getter
//! runs a Rust closure on the struct (`&mut T` behind a mutex; the lock is held only for the
//! closure, never across a send).
//!
//! ```
//! #[derive(Default)]
//! struct Counter { n: i64 }
//! let engine = bt::Engine::new();
//! engine.register_type::<Counter>("Counter").unwrap()
//!     .constructor("new", || Counter::default()).unwrap()
//!     .method("add:", |c: &mut Counter, k: i64| { c.n += k; c.n }).unwrap()
//!     .field("count", |c: &Counter| c.n).unwrap();
//! assert_eq!(engine.eval("c := Counter new. c add: 2. c add: 3. c count").unwrap().as_i64(), Some(5));
//! ```
//!
//! The class is declared in bt (an `Object subclass:` with each selector), so the checker
//! knows it; its methods are host primitives keyed by class and selector in
//! `Program::host_fns` (instance-side keys use the class name with a ` instance` suffix).
//! A handle is a `Value::Native` ([`HostObj`]): equal only to itself, printed `a Counter`.

use std::any::Any;
use std::marker::PhantomData;
use std::sync::Arc;

use parking_lot::Mutex;

use super::host::{self, FromValue, IntoValue};
use super::{Engine, EngineError};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Method};
use crate::value::{ClassRef, Native, NativeObj, Sym, Value};

/// The object behind a host-type handle.
pub struct HostObj<T> {
    class: ClassRef,
    cell: Mutex<T>,
}

impl<T: Send + 'static> NativeObj for HostObj<T> {
    fn class(&self) -> ClassRef {
        self.class.clone()
    }
    fn print_string(&self) -> String {
        let n = self.class.name.as_str();
        let article = if n.starts_with(['A', 'E', 'I', 'O', 'U']) {
            "an"
        } else {
            "a"
        };
        format!("{article} {n}")
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        std::ptr::eq(
            self as *const Self as *const (),
            other.as_any() as *const dyn Any as *const (),
        )
    }
    fn hash_code(&self) -> u64 {
        self as *const Self as usize as u64
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        (9, vec![self as *const Self as usize as u64])
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A host-type handle taken by a typed host function or method argument: the struct of a
/// handle the script passed (`|c: HostRef<Counter>| c.with(|c| c.n)`).
pub struct HostRef<T>(Arc<Native>, PhantomData<T>);

impl<T: Send + 'static> HostRef<T> {
    /// Runs `f` on the struct (the handle's lock held for `f` only).
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        match self.0 .0.as_any().downcast_ref::<HostObj<T>>() {
            Some(o) => f(&mut o.cell.lock()),
            None => unreachable!("HostRef is made only for HostObj<T>"),
        }
    }
}

impl<T: Send + 'static> FromValue for HostRef<T> {
    fn from_value(v: &Value) -> Result<Self, crate::codec::CodecError> {
        if let Value::Native(n) = v {
            if n.0.as_any().downcast_ref::<HostObj<T>>().is_some() {
                return Ok(HostRef(n.clone(), PhantomData));
            }
        }
        Err(crate::codec::CodecError {
            kind: "type_error",
            message: format!("expected a {} handle", std::any::type_name::<T>()),
            hint: None,
            path: String::new(),
            steps: Vec::new(),
        })
    }
}

/// Registers the constructors, methods and fields of a host type (see the module doc).
pub struct TypeBuilder<'e, T> {
    engine: &'e Engine,
    class: String,
    _t: PhantomData<fn() -> T>,
}

impl<'e, T: Send + 'static> TypeBuilder<'e, T> {
    pub(super) fn new(engine: &'e Engine, class: &str) -> TypeBuilder<'e, T> {
        TypeBuilder {
            engine,
            class: class.to_string(),
            _t: PhantomData,
        }
    }

    /// A class-side message answering a new handle: `f` builds the struct from the
    /// arguments (typed like a host function's: `|n: i64| Counter { n }`).
    pub fn constructor<M, F>(self, selector: &str, f: F) -> Result<Self, EngineError>
    where
        F: HostCtor<T, M>,
    {
        let arity = Some(f.arity());
        let run = f.into_ctor(self.class.clone());
        self.engine
            .install_host_side(&self.class, selector, arity, run, true)?;
        Ok(self)
    }

    /// An instance-side message running `f` on the struct with the arguments.
    pub fn method<M, F>(self, selector: &str, f: F) -> Result<Self, EngineError>
    where
        F: HostMethod<T, M>,
    {
        let arity = Some(f.arity());
        let run = f.into_method();
        self.engine
            .install_host_side(&self.class, selector, arity, run, false)?;
        Ok(self)
    }

    /// A field getter: the unary message `name` answers `f(&struct)`.
    pub fn field<R: IntoValue + 'static>(
        self,
        name: &str,
        f: impl Fn(&T) -> R + Send + Sync + 'static,
    ) -> Result<Self, EngineError> {
        self.method(name, move |t: &mut T| f(t))
    }
}

/// Makes a handle of class `class` for `t`.
fn wrap<T: Send + 'static>(ctx: &mut Ctx, class: &str, t: T) -> EvalResult {
    let Some(cls) = ctx.prog.class_named(class) else {
        return Err(ctx.err(
            ErrorKind::ClassNotFound,
            format!("Class '{class}' not found"),
        ));
    };
    Ok(Value::Native(Arc::new(Native(Box::new(HostObj {
        class: cls,
        cell: Mutex::new(t),
    })))))
}

/// A closure usable as a host-type method: `Fn(&mut T, A1, …) -> R`.
pub trait HostMethod<T, M>: Send + Sync + 'static {
    fn arity(&self) -> usize;
    fn into_method(self) -> crate::interp::program::HostFn;
}

macro_rules! host_method {
    ($n:expr; $($a:ident $i:tt),*) => {
        impl<T, F, R, $($a,)*> HostMethod<T, (R, $($a,)*)> for F
        where
            T: Send + 'static,
            F: Fn(&mut T, $($a),*) -> R + Send + Sync + 'static,
            R: IntoValue + 'static,
            $($a: FromValue + 'static,)*
        {
            fn arity(&self) -> usize {
                $n
            }
            #[allow(unused_variables, non_snake_case)]
            fn into_method(self) -> crate::interp::program::HostFn {
                Arc::new(move |ctx, recv, args| {
                    let Value::Native(n) = recv else {
                        return Err(ctx.err(ErrorKind::TypeError, "not a host object"));
                    };
                    let Some(obj) = n.0.as_any().downcast_ref::<HostObj<T>>() else {
                        return Err(ctx.err(ErrorKind::TypeError, "not a host object of this class"));
                    };
                    host::run(ctx, &|args: &[Value]| {
                        $(let $a = $a::from_value(&args[$i]).map_err(|e| host::arg_error($i + 1, e))?;)*
                        let r = {
                            let mut t = obj.cell.lock();
                            self(&mut t, $($a),*)
                        };
                        r.into_value()
                    }, args)
                })
            }
        }
    };
}

host_method!(0;);
host_method!(1; A1 0);
host_method!(2; A1 0, A2 1);
host_method!(3; A1 0, A2 1, A3 2);
host_method!(4; A1 0, A2 1, A3 2, A4 3);

/// A closure usable as a host-type constructor: `Fn(A1, …) -> T`.
pub trait HostCtor<T, M>: Send + Sync + 'static {
    fn arity(&self) -> usize;
    fn into_ctor(self, class: String) -> crate::interp::program::HostFn;
}

macro_rules! host_ctor {
    ($n:expr; $($a:ident $i:tt),*) => {
        impl<T, F, $($a,)*> HostCtor<T, ($($a,)*)> for F
        where
            T: Send + 'static,
            F: Fn($($a),*) -> T + Send + Sync + 'static,
            $($a: FromValue + 'static,)*
        {
            fn arity(&self) -> usize {
                $n
            }
            #[allow(unused_variables, non_snake_case)]
            fn into_ctor(self, class: String) -> crate::interp::program::HostFn {
                Arc::new(move |ctx, _recv, args| {
                    let made = std::cell::Cell::new(None);
                    host::run(ctx, &|args: &[Value]| {
                        $(let $a = $a::from_value(&args[$i]).map_err(|e| host::arg_error($i + 1, e))?;)*
                        made.set(Some(self($($a),*)));
                        Ok(Value::Nil)
                    }, args)?;
                    match made.into_inner() {
                        Some(t) => wrap(ctx, &class, t),
                        None => Ok(Value::Nil),
                    }
                })
            }
        }
    };
}

host_ctor!(0;);
host_ctor!(1; A1 0);
host_ctor!(2; A1 0, A2 1);
host_ctor!(3; A1 0, A2 1, A3 2);
host_ctor!(4; A1 0, A2 1, A3 2, A4 3);

/// The primitive behind every instance-side host method.
pub(crate) fn call_instance(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let key = (ctx.cur_cls, ctx.cur_sel, true);
    host::call_cached(ctx, key, recv, args, |ctx, key| {
        let f = ctx
            .prog
            .host_fns
            .read()
            .get(&(instance_key(key.0.as_str()), key.1))
            .cloned();
        f.ok_or_else(|| {
            ctx.err(
                ErrorKind::DoesNotUnderstand,
                format!("{} does not understand '{}'", key.0, key.1),
            )
        })
    })
}

/// The `host_fns` key of an instance-side method of `class`.
pub(crate) fn instance_key(class: &str) -> Sym {
    Sym::new(&format!("{class} instance"))
}

/// The method an instance-side registration installs.
pub(crate) fn instance_method() -> Method {
    Method::prim(call_instance)
}
