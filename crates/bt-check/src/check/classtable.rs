//! The class table the checker reasons over: the roots ([`super::builtins`]), the built-in
//! classes declared in `stdlib/*.bt`, the declarations of previously loaded units (REPL, fixtures) and of the unit
//! being checked. It answers: does this class exist, what is its kind and ancestry, which
//! selectors does it understand (and is that list complete), what is a method's signature.

use std::collections::{HashMap, HashSet};

/// A class side's methods by selector (foldhash: built for every library method at start-up).
pub type MethodMap = HashMap<String, MethodInfo, foldhash::fast::RandomState>;

use super::layered::Layered;
use super::types::{Hierarchy, Ty};
use crate::syntax::ast::{self, Span, TypeExpr, TypeKind};

/// Where a declaration came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Builtin,
    Stdlib,
    /// A unit loaded earlier (REPL inputs, fixtures).
    Loaded,
    /// A file of the unit being checked (index into its file list).
    User(usize),
}

impl Origin {
    pub fn is_library(self) -> bool {
        matches!(self, Origin::Builtin | Origin::Stdlib)
    }
}

/// The class kinds
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Value,
    Actor,
    Object,
}

/// Sendability scope declared with `handleScope:`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandleScope {
    Process,
    Node,
}

#[derive(Clone, Debug)]
pub struct SlotInfo {
    pub name: String,
    pub ty: Option<Ty>,
    pub has_default: bool,
}

#[derive(Clone, Debug)]
pub struct MethodInfo {
    /// Declared parameter types (`Dynamic` where none).
    pub params: Vec<Ty>,
    pub ret: Option<Ty>,
    pub sealed: bool,
    pub internal: bool,
    pub origin: Origin,
    pub span: Span,
    /// Set on a standalone method that replaced a sealed method of the same class (E0307).
    pub replaced_sealed: Option<String>,
}

impl MethodInfo {
    pub(crate) fn untyped(arity: usize, origin: Origin) -> MethodInfo {
        MethodInfo {
            params: vec![Ty::Dynamic; arity],
            ret: None,
            sealed: false,
            internal: false,
            origin,
            span: Span::default(),
            replaced_sealed: None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct ClassInfo {
    pub name: String,
    pub superclass: Option<String>,
    /// Explicit kind (built-in classes); declared classes take it from their chain.
    pub kind: Option<Kind>,
    pub is_abstract: bool,
    pub sealed: bool,
    pub typed: bool,
    pub internal: bool,
    pub handle_scope: Option<HandleScope>,
    pub type_params: Vec<String>,
    /// `field:` or `state:` slots, in declaration order.
    pub slots: Vec<SlotInfo>,
    pub class_vars: Vec<SlotInfo>,
    pub inst: MethodMap,
    pub class: MethodMap,
    /// The instance-side selector list is the whole protocol.
    pub complete_inst: bool,
    pub complete_class: bool,
    pub origin: Origin,
    pub span: Span,
}

impl ClassInfo {
    pub(crate) fn new(name: &str, origin: Origin) -> ClassInfo {
        ClassInfo {
            name: name.to_string(),
            superclass: None,
            kind: None,
            is_abstract: false,
            sealed: false,
            typed: false,
            internal: false,
            handle_scope: None,
            type_params: Vec::new(),
            slots: Vec::new(),
            class_vars: Vec::new(),
            inst: MethodMap::default(),
            class: MethodMap::default(),
            complete_inst: false,
            complete_class: false,
            origin,
            span: Span::default(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct AliasInfo {
    pub ty: TypeExpr,
    pub internal: bool,
    pub origin: Origin,
}

#[derive(Clone, Debug)]
pub struct ProtocolInfo {
    /// Instance-side selectors the protocol requires (its own, not those it extends).
    pub selectors: Vec<String>,
    pub extending: Option<String>,
}

impl ProtocolInfo {
    pub(crate) fn of(p: &ast::ProtocolDecl) -> ProtocolInfo {
        ProtocolInfo {
            selectors: p
                .signatures
                .iter()
                .filter(|s| !s.class_side)
                .map(|s| s.selector.to_string())
                .collect(),
            extending: p.extending.as_ref().map(|e| e.name.to_string()),
        }
    }
}

/// All classes, aliases and protocols visible to a unit. Copies share the library's entries
/// (`freeze`, [`Layered`]): a copy holds only what it adds or changes.
#[derive(Clone, Debug, Default)]
pub struct ClassTable {
    pub classes: Layered<ClassInfo>,
    pub aliases: Layered<AliasInfo>,
    pub protocols: Layered<ProtocolInfo>,
}

/// Which side of a class a send goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Instance,
    Class,
}

impl Hierarchy for ClassTable {
    fn inherits(&self, sub: &str, sup: &str) -> Option<bool> {
        let mut cur = sub;
        for _ in 0..256 {
            if cur == sup {
                return Some(true);
            }
            let info = self.classes.get(cur)?;
            match &info.superclass {
                Some(s) => cur = s,
                None => return Some(false),
            }
        }
        None
    }
}

/// Number of parameters a selector takes.
pub fn arity(selector: &str) -> usize {
    if selector
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
    {
        selector.matches(':').count()
    } else {
        1
    }
}

impl ClassTable {
    /// Makes every entry part of the shared frozen layers: copies of this table then share
    /// them (the library's table, built once per process by `Checker::new`, and each unit a
    /// checker remembers).
    pub(crate) fn freeze(&mut self) {
        self.classes.freeze();
        self.aliases.freeze();
        self.protocols.freeze();
    }

    /// The root classes alone (see [`super::builtins`]); `Checker::new` adds the stdlib.
    pub fn roots() -> ClassTable {
        let mut t = ClassTable::default();
        t.load_roots();
        t
    }

    pub fn get(&self, name: &str) -> Option<&ClassInfo> {
        self.classes.get(name)
    }

    pub fn is_class(&self, name: &str) -> bool {
        self.classes.contains_key(name)
    }

    /// The kind of a class from its chain; None when the chain reaches an unknown class.
    pub fn kind_of(&self, name: &str) -> Option<Kind> {
        let mut cur = name;
        for _ in 0..256 {
            let info = self.classes.get(cur)?;
            if let Some(k) = info.kind {
                return Some(k);
            }
            cur = info.superclass.as_deref()?;
        }
        None
    }

    /// The class and its ancestors, nearest first (stops at an unknown class).
    pub fn chain(&self, name: &str) -> Vec<&ClassInfo> {
        let mut out = Vec::new();
        let mut cur = self.classes.get(name);
        while let Some(info) = cur {
            if out.len() > 256 {
                break;
            }
            out.push(info);
            cur = info.superclass.as_deref().and_then(|s| self.classes.get(s));
        }
        out
    }

    /// True when the chain reaches a root (no unknown class on the way).
    pub(crate) fn chain_known(&self, name: &str) -> bool {
        let mut cur = name;
        for _ in 0..256 {
            let Some(info) = self.classes.get(cur) else {
                return false;
            };
            match &info.superclass {
                Some(s) => cur = s,
                None => return true,
            }
        }
        false
    }

    /// Finds a method on a side of a class or its ancestors; answers it with its owner.
    pub fn lookup(&self, class: &str, side: Side, selector: &str) -> Option<(&MethodInfo, &str)> {
        let mut cur = self.classes.get(class);
        let mut guard = 0;
        while let Some(info) = cur {
            let map = match side {
                Side::Instance => &info.inst,
                Side::Class => &info.class,
            };
            if let Some(m) = map.get(selector) {
                return Some((m, &info.name));
            }
            guard += 1;
            if guard > 256 {
                break;
            }
            cur = info.superclass.as_deref().and_then(|s| self.classes.get(s));
        }
        if side == Side::Class {
            // A class object answers the instance side of `Class` (reflection: `kind`,
            // `selectors` …), which ends at Object's.
            return self.lookup("Class", Side::Instance, selector);
        }
        None
    }

    /// Whether a class (on a side) understands a selector: `Some(true/false)` when the answer is
    /// certain, `None` when some class of the chain has an incomplete selector list.
    pub fn understands(&self, class: &str, side: Side, selector: &str) -> Option<bool> {
        if self.lookup(class, side, selector).is_some() {
            return Some(true);
        }
        if !self.chain_known(class) || self.has_dnu_override(class, side) {
            return None;
        }
        for info in self.chain(class) {
            let complete = match side {
                Side::Instance => info.complete_inst,
                Side::Class => info.complete_class,
            };
            let declared = !info.origin.is_library();
            if !complete && !declared {
                return None;
            }
        }
        Some(false)
    }

    /// A class that defines or inherits an override of `doesNotUnderstand:args:`.
    pub(crate) fn has_dnu_override(&self, class: &str, side: Side) -> bool {
        self.chain(class).iter().any(|info| {
            let map = match side {
                Side::Instance => &info.inst,
                Side::Class => &info.class,
            };
            info.name != "ProtoObject" && map.contains_key("doesNotUnderstand:args:")
        })
    }

    /// Every selector understood on a side (for did-you-mean).
    pub(crate) fn all_selectors(&self, class: &str, side: Side) -> Vec<String> {
        let mut out: HashSet<String> = HashSet::new();
        for info in self.chain(class) {
            let map = match side {
                Side::Instance => &info.inst,
                Side::Class => &info.class,
            };
            out.extend(map.keys().cloned());
        }
        if side == Side::Class {
            for name in ["Class", "Behaviour", "Object"] {
                if let Some(o) = self.classes.get(name) {
                    out.extend(o.inst.keys().cloned());
                }
            }
        }
        let mut v: Vec<String> = out.into_iter().collect();
        v.sort();
        v
    }

    /// The first selector a protocol requires (following `extending:`) that instances of the
    /// class certainly do not understand.
    pub(crate) fn protocol_missing(&self, class: &str, protocol: &str) -> Option<String> {
        let mut cur = Some(protocol.to_string());
        let mut guard = 0;
        while let Some(p) = cur {
            let info = self.protocols.get(&p)?;
            for sel in &info.selectors {
                if self.understands(class, Side::Instance, sel) == Some(false) {
                    return Some(sel.clone());
                }
            }
            guard += 1;
            if guard > 32 {
                break;
            }
            cur = info.extending.clone();
        }
        None
    }

    /// Classes that inherit from `name` (excluding it).
    pub fn descendants(&self, name: &str) -> Vec<&ClassInfo> {
        self.classes
            .values()
            .filter(|c| c.name != name && self.inherits(&c.name, name) == Some(true))
            .collect()
    }

    /// All `field:`/`state:` slots including inherited ones, inherited first.
    pub(crate) fn all_slots(&self, name: &str) -> Vec<&SlotInfo> {
        let mut chain = self.chain(name);
        chain.reverse();
        chain.iter().flat_map(|c| c.slots.iter()).collect()
    }

    /// Resolves a written type in the context of a class's type parameters.
    pub fn resolve(&self, t: &TypeExpr, type_params: &[String]) -> Ty {
        self.resolve_depth(t, type_params, 0)
    }

    fn resolve_depth(&self, t: &TypeExpr, tps: &[String], depth: usize) -> Ty {
        if depth > 32 {
            return Ty::Dynamic;
        }
        match &t.kind {
            TypeKind::Named { name, args } => {
                let args: Vec<Ty> = args
                    .iter()
                    .map(|a| self.resolve_depth(a, tps, depth + 1))
                    .collect();
                match name.as_str() {
                    "Dynamic" => Ty::Dynamic,
                    "Never" => Ty::Never,
                    "Nil" | "UndefinedObject" => Ty::Nil,
                    "Self" => Ty::SelfTy,
                    "Boolean" => Ty::inst("Boolean"),
                    n if tps.iter().any(|p| p == n) => Ty::Dynamic,
                    n if n.len() == 1 && n.chars().all(|c| c.is_ascii_uppercase()) => Ty::Dynamic,
                    n => {
                        if let Some(alias) = self.aliases.get(n) {
                            let alias_ty = alias.ty.clone();
                            return self.resolve_depth(&alias_ty, &[], depth + 1);
                        }
                        if self.protocols.contains_key(n) {
                            return Ty::Protocol(n.to_string());
                        }
                        if self.classes.contains_key(n) {
                            Ty::Inst(n.to_string(), args)
                        } else {
                            Ty::Dynamic
                        }
                    }
                }
            }
            TypeKind::SelfType => Ty::SelfTy,
            TypeKind::Meta(inner) => match self.resolve_depth(inner, tps, depth + 1) {
                Ty::Inst(n, _) => Ty::Meta(n),
                _ => Ty::Dynamic,
            },
            TypeKind::Symbol(s) => Ty::Sym(s.clone()),
            TypeKind::Nil => Ty::Nil,
            TypeKind::False => Ty::inst("False"),
            TypeKind::True => Ty::inst("True"),
            TypeKind::Union(ms) => Ty::union(
                ms.iter()
                    .map(|m| self.resolve_depth(m, tps, depth + 1))
                    .collect(),
            ),
            TypeKind::Inter(_) | TypeKind::Error => Ty::Dynamic,
            TypeKind::Diff(a, b) => {
                let a = self.resolve_depth(a, tps, depth + 1);
                let b = self.resolve_depth(b, tps, depth + 1);
                match a {
                    Ty::Union(ms) => {
                        let bs: Vec<&Ty> = b.members();
                        Ty::union(ms.into_iter().filter(|m| !bs.contains(&m)).collect())
                    }
                    other => other,
                }
            }
        }
    }

    /// Adds the declarations of a set of modules (one load unit). Classes may refer to each
    /// other regardless of order: names first, then members, standalone methods, accessors.
    pub(crate) fn add_unit(&mut self, modules: &[(&ast::Module, Origin)]) {
        for (m, origin) in modules {
            for item in &m.items {
                match item {
                    ast::Item::Class(c) => self.declare_class(c, *origin),
                    ast::Item::TypeAlias(a) => {
                        self.aliases.insert(
                            a.name.name.to_string(),
                            AliasInfo {
                                ty: a.ty.clone(),
                                internal: a.internal,
                                origin: *origin,
                            },
                        );
                    }
                    ast::Item::Protocol(p) => {
                        self.protocols
                            .insert(p.name.name.to_string(), ProtocolInfo::of(p));
                    }
                    _ => {}
                }
            }
        }
        for (m, origin) in modules {
            for item in &m.items {
                if let ast::Item::Class(c) = item {
                    self.fill_members(c, *origin);
                }
            }
        }
        for (m, origin) in modules {
            for item in &m.items {
                if let ast::Item::Method(sm) = item {
                    let tps = self
                        .classes
                        .get(&sm.class_name.name)
                        .map(|c| c.type_params.clone())
                        .unwrap_or_default();
                    let mut info = self.method_info(&sm.method, &tps, *origin);
                    if let Some(cls) = self.classes.get_mut(&sm.class_name.name) {
                        let owner = cls.name.clone();
                        let map = if sm.class_side {
                            &mut cls.class
                        } else {
                            &mut cls.inst
                        };
                        if let Some(old) = map.get(sm.method.selector.as_str()) {
                            if old.sealed {
                                info.replaced_sealed = Some(owner);
                            } else {
                                info.replaced_sealed = old.replaced_sealed.clone();
                            }
                        }
                        map.insert(sm.method.selector.to_string(), info);
                    }
                }
            }
        }
        let names: Vec<String> = modules
            .iter()
            .flat_map(|(m, _)| m.items.iter())
            .filter_map(|i| match i {
                ast::Item::Class(c) => Some(c.name.name.to_string()),
                _ => None,
            })
            .collect();
        for n in names {
            self.generate_accessors(&n);
        }
    }

    fn declare_class(&mut self, c: &ast::ClassDecl, origin: Origin) {
        let name = &c.name.name;
        // A library class re-declared by the stdlib keeps the built-in selector lists.
        let mut info = match self.classes.remove(name) {
            Some(old) if old.origin.is_library() && origin == Origin::Stdlib => old,
            _ => ClassInfo::new(name, origin),
        };
        let sup = c.superclass.name.as_str();
        info.superclass = if sup == "nil" {
            None
        } else {
            Some(sup.to_string())
        };
        if info.origin != Origin::Builtin {
            info.origin = origin;
        }
        if origin == Origin::Stdlib {
            // The library declares the whole protocol of its classes.
            info.complete_inst = true;
            info.complete_class = true;
        }
        info.is_abstract |= c.modifiers.is_abstract;
        info.sealed |= c.modifiers.sealed;
        info.typed |= c.modifiers.typed;
        info.internal |= c.modifiers.internal;
        info.type_params = c
            .type_params
            .iter()
            .map(|p| p.name.name.to_string())
            .collect();
        info.handle_scope = match c.handle_scope.as_ref().map(|h| h.name.as_str()) {
            Some("process") | Some("#process") => Some(HandleScope::Process),
            Some("node") | Some("#node") => Some(HandleScope::Node),
            _ => info.handle_scope,
        };
        info.span = c.name.span;
        if origin != Origin::Stdlib {
            info.slots.clear();
            info.class_vars.clear();
        }
        self.classes.insert(name.to_string(), info);
    }

    fn fill_members(&mut self, c: &ast::ClassDecl, origin: Origin) {
        let tps: Vec<String> = c
            .type_params
            .iter()
            .map(|p| p.name.name.to_string())
            .collect();
        let mut slots = Vec::new();
        let mut class_vars = Vec::new();
        let mut inst = Vec::new();
        let mut class = Vec::new();
        for m in &c.members {
            match m {
                ast::Member::Field(s) | ast::Member::State(s) => slots.push(SlotInfo {
                    name: s.name.name.to_string(),
                    ty: s.ty.as_ref().map(|t| self.resolve(t, &tps)),
                    has_default: s.default.is_some(),
                }),
                ast::Member::ClassState(s) => class_vars.push(SlotInfo {
                    name: s.name.name.to_string(),
                    ty: s.ty.as_ref().map(|t| self.resolve(t, &tps)),
                    has_default: s.default.is_some(),
                }),
                ast::Member::Method(md) => {
                    let info = self.method_info(md, &tps, origin);
                    if md.class_side {
                        class.push((md.selector.to_string(), info));
                    } else {
                        inst.push((md.selector.to_string(), info));
                    }
                }
                ast::Member::Expect(_) => {}
            }
        }
        if let Some(info) = self.classes.get_mut(&c.name.name) {
            if !slots.is_empty() || origin != Origin::Stdlib {
                info.slots = slots;
            }
            if !class_vars.is_empty() || origin != Origin::Stdlib {
                info.class_vars = class_vars;
            }
            info.inst.extend(inst);
            info.class.extend(class);
        }
    }

    fn method_info(&self, md: &ast::MethodDecl, tps: &[String], origin: Origin) -> MethodInfo {
        MethodInfo {
            params: md
                .params
                .iter()
                .map(|p| {
                    p.ty.as_ref()
                        .map(|t| self.resolve(t, tps))
                        .unwrap_or(Ty::Dynamic)
                })
                .collect(),
            ret: md.ret.as_ref().map(|t| self.resolve(t, tps)),
            sealed: md.sealed,
            internal: md.internal,
            origin,
            span: md.selector_span,
            replaced_sealed: None,
        }
    }

    /// Value classes get getters, `withX:` setters and a keyword constructor.
    fn generate_accessors(&mut self, name: &str) {
        if self.kind_of(name) != Some(Kind::Value) {
            return;
        }
        let all: Vec<SlotInfo> = self.all_slots(name).into_iter().cloned().collect();
        let Some(info) = self.classes.get(name) else {
            return;
        };
        let origin = info.origin;
        let own: Vec<SlotInfo> = info.slots.clone();
        let mut inst = Vec::new();
        for s in &own {
            let ty = s.ty.clone().unwrap_or(Ty::Dynamic);
            inst.push((
                s.name.clone(),
                MethodInfo {
                    ret: s.ty.clone(),
                    ..MethodInfo::untyped(0, origin)
                },
            ));
            let mut setter = String::from("with");
            let mut chars = s.name.chars();
            if let Some(f) = chars.next() {
                setter.extend(f.to_uppercase());
                setter.push_str(chars.as_str());
            }
            setter.push(':');
            inst.push((
                setter,
                MethodInfo {
                    params: vec![ty],
                    ret: Some(Ty::SelfTy),
                    ..MethodInfo::untyped(1, origin)
                },
            ));
        }
        let ctor: String = all.iter().map(|s| format!("{}:", s.name)).collect();
        let ctor_params: Vec<Ty> = all
            .iter()
            .map(|s| s.ty.clone().unwrap_or(Ty::Dynamic))
            .collect();
        if let Some(info) = self.classes.get_mut(name) {
            for (sel, m) in inst {
                info.inst.entry(sel).or_insert(m);
            }
            if !ctor.is_empty() {
                info.class.entry(ctor).or_insert(MethodInfo {
                    params: ctor_params,
                    ret: Some(Ty::SelfTy),
                    ..MethodInfo::untyped(all.len(), origin)
                });
            }
        }
    }

    /// All class names (for did-you-mean on unknown names).
    pub(crate) fn class_names(&self) -> impl Iterator<Item = &String> {
        self.classes.keys()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_table_loads() {
        let ch = crate::check::Checker::new();
        let t = ch.table();
        assert_eq!(t.kind_of("Integer"), Some(Kind::Value));
        assert_eq!(t.kind_of("Server"), Some(Kind::Actor));
        assert_eq!(t.inherits("Character", "Number"), Some(true));
        assert_eq!(
            t.understands("Integer", Side::Instance, "factorial"),
            Some(true)
        );
        assert_eq!(
            t.understands("Integer", Side::Instance, "printString"),
            Some(true)
        );
        assert_eq!(
            t.understands("Integer", Side::Instance, "fooBar"),
            Some(false)
        );
        // Every library class declares its whole protocol.
        assert_eq!(
            t.understands("Timer", Side::Instance, "fooBar"),
            Some(false)
        );
        let (m, owner) = t
            .lookup("ProcessNavigation", Side::Class, "from:")
            .expect("from: is declared");
        assert_eq!(owner, "ProcessNavigation");
        assert_eq!(m.params[0].to_string(), "Supervisor | Pid");
        assert_eq!(
            m.ret.as_ref().map(|r| r.to_string()).as_deref(),
            Some("Result(ProcessNavigation, Error)")
        );
        let (m, _) = t
            .lookup("ProcessNavigation", Side::Class, "from:limit:")
            .unwrap();
        assert_eq!(m.params.len(), 2);
        assert_eq!(m.params[1].to_string(), "Integer | #infinity");
        let (m, _) = t.lookup("Integer", Side::Instance, "+").unwrap();
        assert_eq!(m.params.len(), 1);
        assert!(t.aliases.contains_key("RestartStrategy"));
    }
}
