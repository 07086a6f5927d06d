//! Loading code into a program: classes, methods (with their synthesized Value-class
//! accessors), standalone methods, protocols, `classState:` defaults and top-level statements.
//!
//! A load unit installs the declarations of all its files first — superclasses resolved
//! across the whole set — and then runs the files' statements in order. A file that fails to
//! parse or compile is left out (a warning); the others still load.
//!
//! Here: the unit's declarations (`install`: classes created or extended, methods gathered
//! and installed, protocols). Submodules: `methods` (lowering and installing one method,
//! Value-class accessors), `statements` (`classState:` defaults and top-level statements),
//! `library` (the built-in library's shared, lazily lowered side).

use crate::interp::class::ClassExt;
use std::collections::HashMap;
use std::sync::Arc;

use crate::diagnostic::Diagnostic;
use crate::interp::class::{Builtin, Class, ClassKind};
use crate::interp::eval::code::{CompiledMethod, FnCode, NO_FILE};
use crate::interp::eval::{Ctx, Method, Unwind, VarCell};
use crate::interp::lower::{Lowerer, Owner};
use crate::interp::program::{Program, ProtocolInfo};
use crate::syntax::ast::{self, ClassDecl, Item, Member, Module};
use crate::value::{ClassRef, Sym, Value};

mod library;
mod methods;
mod statements;

use library::library_standalone;
pub use library::{all_units, install_library, library_doc, LazyLibrary};
use methods::{install_method, lower_method};
pub use statements::{init_class_state, lower_statements, run_statements};

/// One parsed file of a unit.
pub struct SourceUnit {
    pub path: String,
    /// The text (borrowed for the built-in library, which is in the binary).
    pub src: std::borrow::Cow<'static, str>,
    /// The syntax tree (borrowed for the built-in library: `check::library::parsed`).
    pub module: std::borrow::Cow<'static, Module>,
    /// File id in the program's file table (`NO_FILE` for the built-in library).
    pub file: u32,
    pub stdlib: bool,
}

/// The top-level bindings of a session (REPL, script, test file).
#[derive(Default)]
pub struct Session {
    pub cells: HashMap<Sym, Arc<VarCell>>,
}

/// What went wrong in one file.
pub struct FileProblem {
    pub path: String,
    pub diagnostics: Vec<Diagnostic>,
    pub src: String,
}

/// A method ready to install.
struct PendingMethod {
    class: ClassRef,
    class_side: bool,
    selector: Sym,
    method: Method,
    doc: Option<String>,
}

/// Declarations of a unit, installed.
pub struct Installed {
    /// Per file (index into the unit): compile problems; such files were left out.
    pub problems: Vec<FileProblem>,
    /// Files that compiled (indices into the unit).
    pub ok_files: Vec<usize>,
    /// Classes created, for classState defaults: (class, declaration, file index).
    created: Vec<(ClassRef, usize, usize)>,
}

/// Kind of a new class from its superclass.
fn kind_from(sup: Option<&ClassRef>) -> ClassKind {
    match sup {
        Some(s) => s.kind,
        None => ClassKind::Object,
    }
}

/// Installs the declarations of every file in `units` (classes across the whole set first).
pub fn install_declarations(prog: &Program, units: &[SourceUnit]) -> Installed {
    install(prog, units, false, &|_, _, _| None)
}

/// Makes the method of a library declaration when it is not lowered now (`install_library`).
type LazyFn<'u> = dyn Fn(&Program, &ClassRef, &'u ast::MethodDecl) -> Option<(Sym, Method)> + 'u;

fn install<'u>(
    prog: &Program,
    units: &'u [SourceUnit],
    library: bool,
    lazy: &LazyFn<'u>,
) -> Installed {
    let mut diags: Vec<Vec<Diagnostic>> = units.iter().map(|_| Vec::new()).collect();

    // 1. Classes, in dependency order across all files.
    let mut pending: Vec<(usize, &ClassDecl)> = Vec::new();
    for (fi, u) in units.iter().enumerate() {
        for it in &u.module.items {
            if let Item::Class(c) = it {
                pending.push((fi, c));
            }
        }
    }
    // Compared as symbols: the library declares ~90 classes, so these scans run thousands
    // of times per program.
    // Sets and maps, not lists: a unit may declare tens of thousands of classes, and each
    // class looks its superclass up here (a scan made loading quadratic).
    let declared_names: std::collections::HashSet<Sym> = pending
        .iter()
        .map(|(_, c)| Sym::new(&c.name.name))
        .collect();
    // (class, previous, file, decl index in `pending order`)
    let mut created: Vec<(ClassRef, Option<ClassRef>, usize, &ClassDecl, bool)> = Vec::new();
    let mut created_by_name: HashMap<Sym, ClassRef> = HashMap::new();
    let mut progress = true;
    while progress && !pending.is_empty() {
        progress = false;
        let mut rest = Vec::new();
        for (fi, decl) in pending {
            let sname = decl.superclass.name.as_str();
            let ssym = Sym::new(sname);
            let sup: Option<Option<ClassRef>> = if sname == "nil" {
                Some(None)
            } else if let Some(c) = created_by_name.get(&ssym) {
                Some(Some(c.clone()))
            } else if declared_names.contains(&ssym) && sname != decl.name.name {
                None // declared in this unit, not created yet
            } else {
                prog.class_named(sname).map(Some)
            };
            match sup {
                Some(sup) => {
                    progress = true;
                    if !library {
                        // What the class inherits from the library (class variables,
                        // methods) is there before it is made.
                        if let Some(s) = &sup {
                            s.take_in_library();
                        }
                    }
                    let (c, prev, extended) =
                        create_class(prog, units[fi].file, decl, sup, &mut diags[fi]);
                    created_by_name.insert(c.name, c.clone());
                    created.push((c, prev, fi, decl, extended));
                }
                None => rest.push((fi, decl)),
            }
        }
        pending = rest;
    }
    for (fi, decl) in pending {
        diags[fi].push(Diagnostic::error(
            "E0202",
            format!("Undefined class: {}", decl.superclass.name),
            decl.superclass.span,
        ));
    }

    // 2. Class variables exist (nil) before methods are lowered.
    for (c, _, _, decl, _) in &created {
        let mut st = c.class_state.lock();
        for m in &decl.members {
            if let Member::ClassState(s) = m {
                let n = Sym::new(&s.name.name);
                if !st.iter().any(|(k, _)| *k == n) {
                    st.push((n, Value::Nil));
                }
            }
        }
    }

    // 3. Lower every method of every file.
    let mut methods: Vec<Vec<PendingMethod>> = units
        .iter()
        .map(|u| {
            let n = u
                .module
                .items
                .iter()
                .map(|it| match it {
                    Item::Class(c) => c.members.len(),
                    _ => 1,
                })
                .sum();
            Vec::with_capacity(n)
        })
        .collect();
    let mut protocols: Vec<Vec<ProtocolInfo>> = units.iter().map(|_| Vec::new()).collect();
    for (c, _, fi, decl, _) in &created {
        let fi = *fi;
        let file = units[fi].file;
        for m in &decl.members {
            if let Member::Method(md) = m {
                if let Some((selector, method)) = lazy(prog, c, md) {
                    methods[fi].push(PendingMethod {
                        class: c.clone(),
                        class_side: md.class_side,
                        selector,
                        method,
                        doc: None,
                    });
                    continue;
                }
                match lower_method(prog, c, md, file, units[fi].stdlib) {
                    Ok(mut pm) => {
                        if library {
                            pm.doc = None; // `library_doc`
                        }
                        methods[fi].push(pm)
                    }
                    Err(mut d) => diags[fi].append(&mut d),
                }
            }
        }
    }
    for (fi, u) in units.iter().enumerate() {
        for it in &u.module.items {
            match it {
                Item::Method(sm) => {
                    let cname = &sm.class_name.name;
                    let csym = Sym::new(cname);
                    let cls = created
                        .iter()
                        .find(|(c, ..)| c.name == csym)
                        .map(|(c, ..)| c.clone())
                        .or_else(|| prog.class_named(cname));
                    match cls {
                        Some(c) if library => {
                            let md = library_standalone(sm);
                            match lazy(prog, &c, md) {
                                Some((selector, method)) => methods[fi].push(PendingMethod {
                                    class: c,
                                    class_side: md.class_side,
                                    selector,
                                    method,
                                    doc: None,
                                }),
                                None => match lower_method(prog, &c, md, u.file, u.stdlib) {
                                    Ok(pm) => methods[fi].push(pm),
                                    Err(mut d) => diags[fi].append(&mut d),
                                },
                            }
                        }
                        Some(c) => {
                            let mut md = sm.method.clone();
                            md.class_side = sm.class_side;
                            match lower_method(prog, &c, &md, u.file, u.stdlib) {
                                Ok(pm) => methods[fi].push(pm),
                                Err(mut d) => diags[fi].append(&mut d),
                            }
                        }
                        None => diags[fi].push(Diagnostic::error(
                            "E0202",
                            format!("Undefined class: {cname}"),
                            sm.class_name.span,
                        )),
                    }
                }
                Item::Protocol(p) => protocols[fi].push(ProtocolInfo {
                    name: Sym::new(&p.name.name),
                    extending: p.extending.as_ref().map(|e| Sym::new(&e.name)),
                    selectors: p
                        .signatures
                        .iter()
                        .filter(|s| !s.class_side)
                        .map(|s| Sym::new(&s.selector))
                        .collect(),
                    class_selectors: p
                        .signatures
                        .iter()
                        .filter(|s| s.class_side)
                        .map(|s| Sym::new(&s.selector))
                        .collect(),
                }),
                _ => {}
            }
        }
    }

    // 4. Files with errors are left out: undo their classes.
    let mut problems = Vec::new();
    let mut ok_files = Vec::new();
    for (fi, u) in units.iter().enumerate() {
        let errs: Vec<Diagnostic> = diags[fi].iter().filter(|d| d.is_error()).cloned().collect();
        if errs.is_empty() {
            ok_files.push(fi);
        } else {
            problems.push(FileProblem {
                path: u.path.clone(),
                diagnostics: errs,
                src: u.src.to_string(),
            });
        }
    }
    let mut created_ok = Vec::new();
    let ok_set: std::collections::HashSet<usize> = ok_files.iter().copied().collect();
    for (idx, (c, prev, fi, _decl, extended)) in created.iter().enumerate() {
        if ok_set.contains(fi) {
            created_ok.push((c.clone(), idx, *fi));
        } else if !extended {
            prog.unregister_class(c, prev.clone());
        }
    }

    // 5. Install methods, accessors and protocols of the good files.
    for &fi in &ok_files {
        for pm in methods[fi].drain(..) {
            install_method(prog, pm);
        }
        let mut protos = prog.protocols.write();
        for p in protocols[fi].drain(..) {
            protos.insert(p.name, p);
        }
    }
    for (c, idx, _) in &created_ok {
        prog.install_value_accessors(c);
        // A redefined class: existing instances (and subclasses) of the old class object use
        // the new method tables from their next message.
        if let (_, Some(prev), _, _, false) = &created[*idx] {
            if prev.builtin == Builtin::None && !Arc::ptr_eq(prev, c) {
                let m = c.methods().read().clone();
                let old = std::mem::replace(&mut *prev.methods().write(), m);
                let cm = c.class_methods().read().clone();
                let old_c = std::mem::replace(&mut *prev.class_methods().write(), cm);
                for (_, x) in old.into_iter().chain(old_c) {
                    prog.retire(crate::interp::program::Retired::Method(x));
                }
            }
        }
        let (_, _, _, decl, extended) = &created[*idx];
        if *extended {
            prog.install_prims(c, true);
        }
        if let Some(d) = &decl.doc {
            *c.doc.write() = Some(d.text().into_owned());
        }
    }
    prog.bump();
    Installed {
        problems,
        ok_files,
        created: created_ok,
    }
}

impl Installed {
    /// The last class the unit declared (the value a REPL shows for a class definition).
    pub fn last_class(&self) -> Option<ClassRef> {
        self.created.last().map(|(c, _, _)| c.clone())
    }
}

/// Creates (or, for a built-in class, extends) the class of a declaration.
/// Answers (class, replaced previous class, extended-in-place).
fn create_class(
    prog: &Program,
    file: u32,
    decl: &ClassDecl,
    sup: Option<ClassRef>,
    diags: &mut Vec<Diagnostic>,
) -> (ClassRef, Option<ClassRef>, bool) {
    let name = Sym::new(&decl.name.name);
    let previous = prog.class_by_sym(name);
    let mut own_fields: Vec<(Sym, Option<Arc<FnCode>>)> = Vec::new();
    for m in &decl.members {
        if let Member::Field(s) | Member::State(s) = m {
            let default = match &s.default {
                Some(e) => {
                    let owner = Owner {
                        class: sup.clone(),
                        class_side: true,
                        fields: Vec::new(),
                        kind: ClassKind::Object,
                        is_testcase: false,
                        class_vars: Vec::new(),
                    };
                    match Lowerer::new(file, owner).default_expr(e) {
                        Ok(code) => Some(code),
                        Err(mut d) => {
                            diags.append(&mut d);
                            None
                        }
                    }
                }
                None => None,
            };
            own_fields.push((Sym::new(&s.name.name), default));
        }
    }
    // A built-in class named again (by the library or a user) is extended in place, unless it
    // gains fields and nothing depends on its layout.
    if let Some(prev) = &previous {
        if prev.builtin != Builtin::None {
            let gains_fields = own_fields
                .iter()
                .any(|(n, _)| prev.field_index(*n).is_none());
            let is_core = is_core_class(prog, prev);
            if gains_fields && !is_core {
                // Its subclasses include the library's.
                prog.take_in_library();
            }
            if !gains_fields || is_core || !prev.live_subclasses().is_empty() {
                if gains_fields {
                    diags.push(Diagnostic::warning(
                        "W0102",
                        "type",
                        format!(
                            "built-in class {} cannot gain fields; field declarations ignored",
                            prev.name
                        ),
                        decl.name.span,
                    ));
                }
                return (prev.clone(), None, true);
            }
        }
    }
    let builtin = previous
        .as_ref()
        .map(|p| p.builtin)
        .filter(|b| *b != Builtin::None)
        .unwrap_or(Builtin::None);
    let mut c = Class::new(
        name,
        sup.clone(),
        kind_from(sup.as_ref()),
        &own_fields,
        decl.modifiers.is_abstract,
        decl.modifiers.sealed,
        if builtin == Builtin::Abstract {
            Builtin::Plain
        } else {
            builtin
        },
    );
    c.type_params = decl.type_params.len();
    c.handle_scope = decl.handle_scope.as_ref().map(|h| Sym::new(&h.name));
    c.declare_typed_slots(
        decl.members
            .iter()
            .filter_map(|m| match m {
                Member::Field(s) | Member::State(s) if s.default.is_none() => {
                    s.ty.clone().map(|t| (Sym::new(&s.name.name), t))
                }
                _ => None,
            })
            .collect(),
    );
    let c = Arc::new(c);
    prog.register_class(c.clone());
    if builtin != Builtin::None {
        prog.install_prims(&c, true);
    }
    (c, previous, false)
}

fn is_core_class(prog: &Program, c: &ClassRef) -> bool {
    let k = &prog.core;
    [
        &k.proto_object,
        &k.object,
        &k.value,
        &k.actor,
        &k.class,
        &k.metaclass,
        &k.undefined,
        &k.boolean,
        &k.true_,
        &k.false_,
        &k.number,
        &k.integer,
        &k.float,
        &k.character,
        &k.string,
        &k.symbol,
        &k.binary,
        &k.block,
        &k.collection,
        &k.list,
        &k.array,
        &k.tuple,
        &k.dictionary,
        &k.set,
        &k.bag,
        &k.queue,
        &k.interval,
        &k.exception,
        &k.error,
        &k.runtime_error,
        &k.type_error,
        &k.instantiation_error,
        &k.result,
        &k.compiled_method,
        &k.testcase,
    ]
    .iter()
    .any(|x| Arc::ptr_eq(x, c))
}
