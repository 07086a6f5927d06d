//! The running side of a load unit: `classState:` defaults evaluated once per created class
//!, and the files' top-level statements lowered and run in order after every
//! declaration is installed.

use std::sync::Arc;

use super::*;

/// Evaluates the `classState:` defaults of the classes a unit created (once).
pub fn init_class_state(
    ctx: &mut Ctx,
    units: &[SourceUnit],
    inst: &Installed,
) -> Vec<(String, Unwind)> {
    let mut errors = Vec::new();
    // The declarations with a `classState:` default, by (file, name): looked up once per
    // created class (a scan of the file's items per class made loading quadratic).
    let mut with_defaults: HashMap<(usize, &str), &ast::ClassDecl> = HashMap::new();
    for (fi, u) in units.iter().enumerate() {
        for it in &u.module.items {
            if let Item::Class(d) = it {
                let has_default = d
                    .members
                    .iter()
                    .any(|m| matches!(m, Member::ClassState(s) if s.default.is_some()));
                if has_default {
                    with_defaults.insert((fi, d.name.name.as_str()), d);
                }
            }
        }
    }
    if with_defaults.is_empty() {
        return errors;
    }
    for (c, _, fi) in &inst.created {
        let u = &units[*fi];
        let Some(decl) = with_defaults.get(&(*fi, c.name.as_str())).copied() else {
            continue;
        };
        for m in &decl.members {
            let Member::ClassState(s) = m else { continue };
            let Some(e) = &s.default else { continue };
            let owner = Owner::of_class(c, true);
            let file = if u.stdlib { NO_FILE } else { u.file };
            // A default that does not compile was reported with the class's file.
            let Ok(code) = Lowerer::new(file, owner).default_expr(e) else {
                continue;
            };
            match ctx
                .run_fn(&code, &Value::Class(c.clone()), Some(c))
                .map_err(|b| *b)
            {
                Ok(v) => {
                    let n = Sym::new(&s.name.name);
                    let mut st = c.class_state.lock();
                    if let Some(slot) = st.iter_mut().find(|(k, _)| *k == n) {
                        slot.1 = v;
                    }
                }
                Err(e) => errors.push((u.path.clone(), e)),
            }
        }
    }
    errors
}

/// The top-level statements of a file as one lowered unit.
pub fn lower_statements(
    prog: &Program,
    unit: &SourceUnit,
    session: &Session,
) -> Result<Option<Arc<FnCode>>, Vec<Diagnostic>> {
    // On the stack for a short input (two allocations of a 10-line config eval otherwise).
    let stmts: smallvec::SmallVec<[&ast::Stmt; 8]> = unit
        .module
        .items
        .iter()
        .filter_map(|it| match it {
            Item::Stmt(s) => Some(s),
            _ => None,
        })
        .collect();
    if stmts.is_empty() {
        return Ok(None);
    }
    // A cell some live closure holds (besides the session) stays a cell in this unit.
    let bindings: smallvec::SmallVec<[(Sym, bool); 16]> = session
        .cells
        .iter()
        .map(|(k, c)| (*k, Arc::strong_count(c) > 1))
        .collect();
    let file = if unit.stdlib { NO_FILE } else { unit.file };
    let code = Lowerer::new(file, Owner::toplevel()).toplevel(&stmts, &bindings)?;
    if file != NO_FILE && !code.blocks.is_empty() {
        prog.unit_blocks.write().insert(file, code.blocks.clone());
    }
    Ok(Some(code))
}

/// Runs a lowered top-level unit statement by statement: a top-level `^` ends its statement.
/// Answers the value of the last statement. With `rollback`, an error restores the bindings
/// — but not an interrupt (the process ended mid-input with the exit reason `#interrupted`,
/// the REPL's Ctrl-C): then each
/// binding keeps the last value the input assigned to it, as in IEx and Python, and a name
/// the input introduced but had not assigned yet (still nil) is not bound.
pub fn run_statements(
    ctx: &mut Ctx,
    code: &Arc<FnCode>,
    session: &mut Session,
    rollback: bool,
) -> Result<Value, Unwind> {
    let mut new_names = Vec::new();
    let cells: Vec<Arc<VarCell>> = code
        .toplevel_names
        .iter()
        .map(|n| {
            session
                .cells
                .entry(*n)
                .or_insert_with(|| {
                    new_names.push(*n);
                    Arc::new(VarCell::new(Value::Nil))
                })
                .clone()
        })
        .collect();
    let snapshot: Vec<Value> = if rollback {
        cells.iter().map(|c| c.lock().clone()).collect()
    } else {
        Vec::new()
    };
    let mut all = cells.clone();
    while all.len() < code.ncells as usize {
        all.push(Arc::new(VarCell::new(Value::Nil)));
    }
    // Bindings in stack slots: in from their cells now, back (or into new cells) after.
    let mut slots: Vec<Value> = code
        .toplevel_slots
        .iter()
        .map(|(_, n)| match session.cells.get(n) {
            Some(c) => c.lock().clone(),
            None => Value::Nil,
        })
        .collect();
    let r = ctx.run_toplevel(code, all, &mut slots).map_err(|b| *b);
    // Interrupted: every assignment the input made is complete (a binding holds one value),
    // so what it did so far can stay. Other exits (a kill, an embedder's limit or deadline,
    // `Program exit:`) and errors roll back.
    let interrupted =
        matches!(&r, Err(Unwind::Exit(v)) if v.as_sym() == Some(Sym::new("interrupted")));
    if interrupted {
        for n in &new_names {
            if session.cells.get(n).is_some_and(|c| c.lock().is_nil()) {
                session.cells.remove(n);
            }
        }
        for ((_, n), v) in code.toplevel_slots.iter().zip(slots) {
            match session.cells.get(n) {
                Some(c) => drop(std::mem::replace(&mut *c.lock(), v)),
                None if !v.is_nil() => {
                    session.cells.insert(*n, Arc::new(VarCell::new(v)));
                }
                None => {}
            }
        }
    } else if r.is_err() && rollback {
        for (c, v) in cells.iter().zip(snapshot) {
            *c.lock() = v;
        }
        for n in new_names {
            session.cells.remove(&n);
        }
    } else {
        for ((_, n), v) in code.toplevel_slots.iter().zip(slots) {
            match session.cells.get(n) {
                Some(c) => drop(std::mem::replace(&mut *c.lock(), v)),
                None => {
                    session.cells.insert(*n, Arc::new(VarCell::new(v)));
                }
            }
        }
    }
    r
}
