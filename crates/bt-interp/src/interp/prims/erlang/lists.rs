//! `lists`: the list functions, with bt blocks as funs. A non-list argument is
//! `function_clause`, as the Erlang clauses raise it.

use std::cmp::Ordering;

use super::modules::erl_cmp;
use super::terms::{atom, int_arg, is_num, joined, list, list_arg, list_fc, truth, Fail, R};
use crate::interp::eval::Ctx;
use crate::value::order::strict_eq;
use crate::value::Value;

fn idx(v: &Value) -> Result<usize, Fail> {
    match v {
        Value::Int(i) if *i >= 0 => Ok(*i as usize),
        _ => Err(Fail::FunctionClause),
    }
}

fn flatten_into(v: &[Value], out: &mut Vec<Value>) {
    for x in v {
        match x {
            Value::List(l) => flatten_into(&l.iter().cloned().collect::<Vec<_>>(), out),
            Value::Array(a) => flatten_into(&a.to_vec(), out),
            other => out.push(other.clone()),
        }
    }
}

fn sort_by(ctx: &mut Ctx, f: &Value, l: &mut [Value]) -> Result<(), Fail> {
    // Insertion sort through the fun (stable; `F(A, B)` true when A comes first).
    let mut v: Vec<Value> = Vec::with_capacity(l.len());
    for x in l.iter() {
        let mut at = v.len();
        while at > 0 {
            let keep = truth(&fun(ctx, f, &[v[at - 1].clone(), x.clone()])?)?;
            if keep {
                break;
            }
            at -= 1;
        }
        v.insert(at, x.clone());
    }
    l.clone_from_slice(&v);
    Ok(())
}

fn key_eq(a: &Value, b: &Value) -> bool {
    if is_num(a) && is_num(b) {
        return erl_cmp(a, b) == Ordering::Equal;
    }
    strict_eq(a, b)
}

fn keyfind<'a>(k: &Value, n: usize, l: &'a [Value]) -> Option<&'a Value> {
    l.iter().find(|t| match t {
        Value::Tuple(t) => n >= 1 && t.get(n - 1).is_some_and(|e| key_eq(e, k)),
        _ => false,
    })
}

/// The arity a function's guard wants of its fun (`is_function(F, N)`), for the functions
/// that have such a guard; a non-fun there is `function_clause` even for an empty list.
fn guarded_arity(f: &str, n: usize) -> Option<usize> {
    Some(match (f, n) {
        ("all" | "any" | "map" | "flatmap" | "filter" | "filtermap" | "foreach", 2) => 1,
        ("search" | "takewhile" | "dropwhile" | "splitwith" | "partition", 2) => 1,
        ("uniq", 2) => 1,
        ("foldl" | "foldr" | "mapfoldl" | "mapfoldr", 3) => 2,
        _ => return None,
    })
}

pub(super) fn call(ctx: &mut Ctx, f: &str, a: &[Value]) -> R {
    let n = a.len();
    ctx.charge(n)?;
    if let Some(arity) = guarded_arity(f, n) {
        use crate::interp::block_code::ClosureExt;
        if !matches!(&a[0], Value::Block(c) if c.arity() == arity) {
            return Err(Fail::FunctionClause);
        }
    }
    match (f, a) {
        ("reverse", [l]) => {
            let mut l = list_fc(l)?;
            l.reverse();
            Ok(list(l))
        }
        // A BIF: a first argument that is not a list is `badarg`.
        ("reverse", [l, tail]) => {
            let mut l = list_arg(l)?;
            l.reverse();
            super::external::improper(ctx, l, tail)
        }
        ("seq", [from, to]) => seq(ctx, from, to, &Value::Int(1), false),
        ("seq", [from, to, step]) => seq(ctx, from, to, step, true),
        ("sum", [l]) => {
            let mut acc = Value::Int(0);
            for x in list_fc(l)? {
                acc = add(ctx, &acc, &x)?;
            }
            Ok(acc)
        }
        ("max", [l]) => extreme(l, Ordering::Greater),
        ("min", [l]) => extreme(l, Ordering::Less),
        ("nth", [i, l]) => {
            let (i, l) = (idx(i)?, list_fc(l)?);
            i.checked_sub(1)
                .and_then(|i| l.get(i).cloned())
                .ok_or(Fail::FunctionClause)
        }
        ("nthtail", [i, l]) => {
            let (i, l) = (idx(i)?, list_fc(l)?);
            if i > l.len() {
                return Err(Fail::FunctionClause);
            }
            Ok(list(l[i..].to_vec()))
        }
        ("last", [l]) => list_fc(l)?.last().cloned().ok_or(Fail::FunctionClause),
        ("sort", [l]) => {
            let mut l = list_fc(l)?;
            l.sort_by(erl_cmp);
            Ok(list(l))
        }
        ("sort", [f, l]) => {
            let mut l = list_fc(l)?;
            sort_by(ctx, f, &mut l)?;
            Ok(list(l))
        }
        ("usort", [l]) => {
            let mut l = list_fc(l)?;
            l.sort_by(erl_cmp);
            l.dedup_by(|a, b| erl_cmp(a, b) == Ordering::Equal);
            Ok(list(l))
        }
        ("append", [l]) => {
            // `append([E]) -> E`: the last element need not be a list.
            let mut parts = list_fc(l)?;
            let Some(last) = parts.pop() else {
                return Ok(list(Vec::new()));
            };
            let mut out = Vec::new();
            for x in parts {
                out.extend(list_arg(&x).map_err(|_| Fail::Badarg)?);
            }
            super::external::improper(ctx, out, &last)
        }
        ("append", [x, y]) => super::external::improper(ctx, list_fc(x)?, y),
        ("concat", [l]) => {
            let mut out: Vec<Value> = Vec::new();
            let text = |out: &mut Vec<Value>, s: &str| {
                out.extend(s.chars().map(|c| Value::Int(c as i64)));
            };
            for x in list_fc(l)? {
                match &x {
                    Value::Str(t) => text(&mut out, t),
                    Value::Symbol(t) => text(&mut out, t.as_str()),
                    Value::Nil | Value::True | Value::False => {
                        text(&mut out, &super::modules::atom_name(&x)?)
                    }
                    Value::Int(i) => text(&mut out, &i.to_string()),
                    // A list is taken as it is (`thing_to_list`).
                    Value::List(_) | Value::Array(_) => out.extend(list_arg(&x)?),
                    _ => return Err(Fail::FunctionClause),
                }
            }
            Ok(list(out))
        }
        ("flatten", [l]) => {
            let mut out = Vec::new();
            flatten_into(&list_fc(l)?, &mut out);
            Ok(list(out))
        }
        ("member", [x, l]) => Ok(Value::bool(list_arg(l)?.iter().any(|e| strict_eq(e, x)))),
        ("keyfind", [k, n, l]) => {
            let (n, l) = (pos_badarg(n)?, list_arg(l)?);
            Ok(keyfind(k, n, &l).cloned().unwrap_or(Value::False))
        }
        ("keymember", [k, n, l]) => {
            let (n, l) = (pos_badarg(n)?, list_arg(l)?);
            Ok(Value::bool(keyfind(k, n, &l).is_some()))
        }
        ("keydelete", [k, n, l]) => {
            let (n, mut l) = (idx(n)?, list_fc(l)?);
            if let Some(p) = l
                .iter()
                .position(|t| keyfind(k, n, std::slice::from_ref(t)).is_some())
            {
                l.remove(p);
            }
            Ok(list(l))
        }
        ("zip", [x, y]) => {
            let (x, y) = (list_fc(x)?, list_fc(y)?);
            if x.len() != y.len() {
                return Err(Fail::FunctionClause);
            }
            Ok(list(
                x.into_iter()
                    .zip(y)
                    .map(|(a, b)| Value::tuple(vec![a, b]))
                    .collect(),
            ))
        }
        ("unzip", [l]) => {
            let (mut xs, mut ys) = (Vec::new(), Vec::new());
            for t in list_fc(l)? {
                match &t {
                    Value::Tuple(t) if t.len() == 2 => {
                        xs.push(t[0].clone());
                        ys.push(t[1].clone());
                    }
                    _ => return Err(Fail::FunctionClause),
                }
            }
            Ok(Value::tuple(vec![list(xs), list(ys)]))
        }
        ("duplicate", [n, x]) => {
            let n = idx(n)?;
            ctx.charge(n)?;
            Ok(list(vec![x.clone(); n]))
        }
        ("sublist", [l, len]) => {
            let (l, len) = (list_fc(l)?, idx(len)?);
            Ok(list(l.into_iter().take(len).collect()))
        }
        ("sublist", [l, start, len]) => {
            let (l, start, len) = (list_fc(l)?, idx(start)?, idx(len)?);
            if start == 0 {
                return Err(Fail::FunctionClause);
            }
            Ok(list(l.into_iter().skip(start - 1).take(len).collect()))
        }
        ("delete", [x, l]) => {
            let mut l = list_fc(l)?;
            if let Some(p) = l.iter().position(|e| strict_eq(e, x)) {
                l.remove(p);
            }
            Ok(list(l))
        }
        ("subtract", [x, y]) => {
            let (mut l, y) = (list_arg(x)?, list_arg(y)?);
            for e in y {
                if let Some(p) = l.iter().position(|v| strict_eq(v, &e)) {
                    l.remove(p);
                }
            }
            Ok(list(l))
        }
        ("split", [n, l]) => {
            let (n, l) = (
                idx(n).map_err(|_| Fail::Badarg)?,
                list_fc(l).map_err(|_| Fail::Badarg)?,
            );
            if n > l.len() {
                return Err(Fail::Badarg);
            }
            Ok(Value::tuple(vec![
                list(l[..n].to_vec()),
                list(l[n..].to_vec()),
            ]))
        }
        ("foldl", [f, acc, l]) => {
            let mut acc = acc.clone();
            for x in list_fc(l)? {
                acc = fun(ctx, f, &[x, acc])?;
            }
            Ok(acc)
        }
        ("foldr", [f, acc, l]) => {
            let mut acc = acc.clone();
            for x in list_fc(l)?.into_iter().rev() {
                acc = fun(ctx, f, &[x, acc])?;
            }
            Ok(acc)
        }
        ("map", [f, l]) => {
            let mut out = Vec::new();
            for x in list_fc(l)? {
                out.push(fun(ctx, f, &[x])?);
            }
            Ok(list(out))
        }
        ("flatmap", [f, l]) => {
            let mut out = Vec::new();
            for x in list_fc(l)? {
                out.extend(list_fc(&fun(ctx, f, &[x])?)?);
            }
            Ok(list(out))
        }
        ("filter", [f, l]) => {
            let mut out = Vec::new();
            for x in list_fc(l)? {
                if truth(&fun(ctx, f, std::slice::from_ref(&x))?)? {
                    out.push(x);
                }
            }
            Ok(list(out))
        }
        ("partition", [f, l]) => {
            let (mut yes, mut no) = (Vec::new(), Vec::new());
            for x in list_fc(l)? {
                if truth(&fun(ctx, f, std::slice::from_ref(&x))?)? {
                    yes.push(x);
                } else {
                    no.push(x);
                }
            }
            Ok(Value::tuple(vec![list(yes), list(no)]))
        }
        ("any", [f, l]) => {
            for x in list_fc(l)? {
                if truth(&fun(ctx, f, &[x])?)? {
                    return Ok(Value::True);
                }
            }
            Ok(Value::False)
        }
        ("all", [f, l]) => {
            for x in list_fc(l)? {
                if !truth(&fun(ctx, f, &[x])?)? {
                    return Ok(Value::False);
                }
            }
            Ok(Value::True)
        }
        ("foreach", [f, l]) => {
            for x in list_fc(l)? {
                fun(ctx, f, &[x])?;
            }
            Ok(super::terms::atom("ok"))
        }
        ("keystore", [k, n, l, t]) => {
            let (n, mut l) = (key_pos(n)?, list_fc(l)?);
            tuple_fc(t)?;
            match l.iter().position(|e| key_at(e, n, k)) {
                Some(p) => l[p] = t.clone(),
                None => l.push(t.clone()),
            }
            Ok(list(l))
        }
        ("keyreplace", [k, n, l, t]) => {
            let (n, mut l) = (key_pos(n)?, list_fc(l)?);
            tuple_fc(t)?;
            if let Some(p) = l.iter().position(|e| key_at(e, n, k)) {
                l[p] = t.clone();
            }
            Ok(list(l))
        }
        ("keytake", [k, n, l]) => {
            let (n, mut l) = (key_pos(n)?, list_fc(l)?);
            Ok(match l.iter().position(|e| key_at(e, n, k)) {
                Some(p) => {
                    let t = l.remove(p);
                    Value::tuple(vec![atom("value"), t, list(l)])
                }
                None => Value::False,
            })
        }
        ("keysort", [n, l]) => {
            let (n, mut l) = (key_pos(n)?, list_fc(l)?);
            if l.len() < 2 {
                return Ok(list(l));
            }
            let keys = l
                .iter()
                .map(|e| element(e, n).cloned())
                .collect::<Option<Vec<_>>>()
                .ok_or(Fail::Badarg)?;
            let mut ix: Vec<usize> = (0..l.len()).collect();
            ix.sort_by(|&a, &b| erl_cmp(&keys[a], &keys[b]));
            l = ix.into_iter().map(|i| l[i].clone()).collect();
            Ok(list(l))
        }
        ("ukeysort", [n, l]) => {
            let (n, l) = (key_pos(n)?, list_fc(l)?);
            if l.len() < 2 {
                return Ok(list(l));
            }
            let mut keyed = l
                .into_iter()
                .map(|e| element(&e, n).cloned().map(|k| (k, e)))
                .collect::<Option<Vec<_>>>()
                .ok_or(Fail::Badarg)?;
            keyed.sort_by(|a, b| erl_cmp(&a.0, &b.0));
            keyed.dedup_by(|b, a| erl_cmp(&a.0, &b.0) == Ordering::Equal);
            Ok(list(keyed.into_iter().map(|(_, e)| e).collect()))
        }
        ("keymap", [f, n, l]) => {
            let (n, l) = (key_pos(n)?, list_fc(l)?);
            let mut out = Vec::with_capacity(l.len());
            for e in l {
                let mut t = match &e {
                    Value::Tuple(t) if t.len() >= n => t.to_vec(),
                    _ => return Err(Fail::Badarg),
                };
                t[n - 1] = fun(ctx, f, std::slice::from_ref(&t[n - 1]))?;
                out.push(Value::tuple(t));
            }
            Ok(list(out))
        }
        ("filtermap", [f, l]) => {
            let mut out = Vec::new();
            for x in list_fc(l)? {
                match &fun(ctx, f, std::slice::from_ref(&x))? {
                    Value::True => out.push(x),
                    Value::False => {}
                    Value::Tuple(t) if t.len() == 2 && matches!(t[0], Value::True) => {
                        out.push(t[1].clone())
                    }
                    _ => return Err(Fail::FunctionClause),
                }
            }
            Ok(list(out))
        }
        ("zip3", [x, y, z]) => {
            let (x, y, z) = (list_fc(x)?, list_fc(y)?, list_fc(z)?);
            if x.len() != y.len() || y.len() != z.len() {
                return Err(Fail::FunctionClause);
            }
            Ok(list(
                x.into_iter()
                    .zip(y)
                    .zip(z)
                    .map(|((a, b), c)| Value::tuple(vec![a, b, c]))
                    .collect(),
            ))
        }
        ("unzip3", [l]) => {
            let (mut xs, mut ys, mut zs) = (Vec::new(), Vec::new(), Vec::new());
            for t in list_fc(l)? {
                match &t {
                    Value::Tuple(t) if t.len() == 3 => {
                        xs.push(t[0].clone());
                        ys.push(t[1].clone());
                        zs.push(t[2].clone());
                    }
                    _ => return Err(Fail::FunctionClause),
                }
            }
            Ok(Value::tuple(vec![list(xs), list(ys), list(zs)]))
        }
        ("zipwith", [f, x, y]) => {
            let (x, y) = (list_fc(x)?, list_fc(y)?);
            if x.len() != y.len() {
                return Err(Fail::FunctionClause);
            }
            let mut out = Vec::with_capacity(x.len());
            for (a, b) in x.into_iter().zip(y) {
                out.push(fun(ctx, f, &[a, b])?);
            }
            Ok(list(out))
        }
        ("droplast", [l]) => {
            let mut l = list_fc(l)?;
            if l.pop().is_none() {
                return Err(Fail::FunctionClause);
            }
            Ok(list(l))
        }
        ("prefix", [p, l]) => {
            let (p, l) = (list_fc(p)?, list_fc(l)?);
            Ok(Value::bool(
                p.len() <= l.len() && p.iter().zip(&l).all(|(a, b)| strict_eq(a, b)),
            ))
        }
        ("suffix", [p, l]) => {
            let (p, l) = (list_fc(p)?, list_fc(l)?);
            Ok(Value::bool(
                p.len() <= l.len()
                    && p.iter()
                        .zip(&l[l.len() - p.len()..])
                        .all(|(a, b)| strict_eq(a, b)),
            ))
        }
        ("search", [f, l]) => {
            for x in list_fc(l)? {
                if truth(&fun(ctx, f, std::slice::from_ref(&x))?)? {
                    return Ok(Value::tuple(vec![atom("value"), x]));
                }
            }
            Ok(Value::False)
        }
        ("takewhile", [f, l]) => {
            let mut out = Vec::new();
            for x in list_fc(l)? {
                if !truth(&fun(ctx, f, std::slice::from_ref(&x))?)? {
                    break;
                }
                out.push(x);
            }
            Ok(list(out))
        }
        ("dropwhile", [f, l]) => {
            let l = list_fc(l)?;
            for (i, x) in l.iter().enumerate() {
                if !truth(&fun(ctx, f, std::slice::from_ref(x))?)? {
                    return Ok(list(l[i..].to_vec()));
                }
            }
            Ok(list(Vec::new()))
        }
        ("splitwith", [f, l]) => {
            let l = list_fc(l)?;
            for (i, x) in l.iter().enumerate() {
                if !truth(&fun(ctx, f, std::slice::from_ref(x))?)? {
                    return Ok(Value::tuple(vec![
                        list(l[..i].to_vec()),
                        list(l[i..].to_vec()),
                    ]));
                }
            }
            Ok(Value::tuple(vec![list(l), list(Vec::new())]))
        }
        ("mapfoldl", [f, acc, l]) => mapfold(ctx, f, acc, l, false),
        ("mapfoldr", [f, acc, l]) => mapfold(ctx, f, acc, l, true),
        ("enumerate", [l]) => enumerate(&Value::Int(1), l),
        ("enumerate", [i, l]) => enumerate(i, l),
        ("uniq", [l]) => {
            let mut out: Vec<Value> = Vec::new();
            for x in list_fc(l)? {
                if !out.iter().any(|e| strict_eq(e, &x)) {
                    out.push(x);
                }
            }
            Ok(list(out))
        }
        ("uniq", [f, l]) => {
            let (mut out, mut seen) = (Vec::new(), Vec::<Value>::new());
            for x in list_fc(l)? {
                let k = fun(ctx, f, std::slice::from_ref(&x))?;
                if !seen.iter().any(|e| strict_eq(e, &k)) {
                    seen.push(k);
                    out.push(x);
                }
            }
            Ok(list(out))
        }
        ("join", [sep, l]) => Ok(joined(sep, list_fc(l)?)),
        ("usort", [f, l]) => {
            let mut l = list_fc(l)?;
            sort_by(ctx, f, &mut l)?;
            let mut out: Vec<Value> = Vec::with_capacity(l.len());
            for x in l {
                // Equal neighbours (the fun answers true both ways) keep the first.
                if let Some(last) = out.last() {
                    if truth(&fun(ctx, f, &[last.clone(), x.clone()])?)?
                        && truth(&fun(ctx, f, &[x.clone(), last.clone()])?)?
                    {
                        continue;
                    }
                }
                out.push(x);
            }
            Ok(list(out))
        }
        ("merge", [x, y]) => merge_by(list_fc(x)?, list_fc(y)?, |e| Ok(e.clone())),
        ("flatlength", [l]) => {
            let mut out = Vec::new();
            flatten_into(&list_fc(l)?, &mut out);
            Ok(Value::Int(out.len() as i64))
        }
        ("flatten", [l, tail]) => {
            let mut out = Vec::new();
            flatten_into(&list_fc(l)?, &mut out);
            out.extend(list_fc(tail)?);
            Ok(list(out))
        }
        ("keymerge", [n, x, y]) => {
            let n = key_pos(n)?;
            merge_by(list_fc(x)?, list_fc(y)?, |e| {
                element(e, n).cloned().ok_or(Fail::FunctionClause)
            })
        }
        _ => Err(Fail::Undef),
    }
}

/// A key position of the BIFs (`keyfind`, `keymember`): 1 or more, else `badarg`.
fn pos_badarg(v: &Value) -> Result<usize, Fail> {
    match v {
        Value::Int(i) if *i >= 1 => Ok(*i as usize),
        _ => Err(Fail::Badarg),
    }
}

/// Applies a fun; a non-fun is `{badfun, F}` (the guarded functions have checked already).
fn fun(ctx: &mut Ctx, f: &Value, args: &[Value]) -> R {
    match f {
        Value::Block(_) => super::terms::fun(ctx, f, args),
        other => {
            let shown = crate::interp::print::element_print(ctx, other).unwrap_or_default();
            Err(Fail::Other(
                crate::value::Sym::new("badfun"),
                format!(" {{badfun,{shown}}}"),
            ))
        }
    }
}

fn key_pos(v: &Value) -> Result<usize, Fail> {
    match v {
        Value::Int(i) if *i >= 1 => Ok(*i as usize),
        _ => Err(Fail::FunctionClause),
    }
}

fn tuple_fc(v: &Value) -> Result<(), Fail> {
    match v {
        Value::Tuple(_) => Ok(()),
        _ => Err(Fail::FunctionClause),
    }
}

fn element(e: &Value, n: usize) -> Option<&Value> {
    match e {
        Value::Tuple(t) => t.get(n - 1),
        _ => None,
    }
}

fn key_at(e: &Value, n: usize, k: &Value) -> bool {
    element(e, n).is_some_and(|x| key_eq(x, k))
}

fn mapfold(ctx: &mut Ctx, f: &Value, acc: &Value, l: &Value, right: bool) -> R {
    let l = list_fc(l)?;
    let mut acc = acc.clone();
    let mut out = vec![Value::Nil; l.len()];
    let order: Vec<usize> = if right {
        (0..l.len()).rev().collect()
    } else {
        (0..l.len()).collect()
    };
    for i in order {
        match &fun(ctx, f, &[l[i].clone(), acc])? {
            Value::Tuple(t) if t.len() == 2 => {
                out[i] = t[0].clone();
                acc = t[1].clone();
            }
            _ => return Err(Fail::Badarg),
        }
    }
    Ok(Value::tuple(vec![list(out), acc]))
}

fn enumerate(from: &Value, l: &Value) -> R {
    let from = match from {
        Value::Int(i) => *i,
        _ => return Err(Fail::FunctionClause),
    };
    Ok(list(
        list_fc(l)?
            .into_iter()
            .enumerate()
            .map(|(i, x)| Value::tuple(vec![Value::Int(from + i as i64), x]))
            .collect(),
    ))
}

fn add(ctx: &mut Ctx, a: &Value, b: &Value) -> R {
    if !is_num(a) || !is_num(b) {
        return Err(Fail::Badarith);
    }
    Ok(ctx.send(a, crate::value::Sym::new("+"), std::slice::from_ref(b))?)
}

fn extreme(l: &Value, want: Ordering) -> R {
    let l = list_fc(l)?;
    let mut it = l.into_iter();
    let mut best = it.next().ok_or(Fail::FunctionClause)?;
    for x in it {
        if erl_cmp(&x, &best) == want {
            best = x;
        }
    }
    Ok(best)
}

fn seq(ctx: &mut Ctx, from: &Value, to: &Value, step: &Value, explicit_step: bool) -> R {
    let (from, to, step) = (
        int_arg(from).map_err(|_| Fail::FunctionClause)?,
        int_arg(to).map_err(|_| Fail::FunctionClause)?,
        int_arg(step).map_err(|_| Fail::FunctionClause)?,
    );
    // Erlang: the sequence may be empty only when To = From - Step.
    let ok = (step > 0 && to >= from - step)
        || (step < 0 && to <= from - step)
        || (step == 0 && from == to);
    if !ok {
        // seq/3 checks the step in its body (badarg), seq/2 in its guard.
        return Err(if explicit_step {
            Fail::Badarg
        } else {
            Fail::FunctionClause
        });
    }
    if step == 0 {
        return Ok(list(vec![Value::Int(from)]));
    }
    let count = ((to as i128 - from as i128) / step as i128 + 1).max(0) as usize;
    ctx.charge(count.saturating_mul(crate::interp::eval::charge::ELEM))?;
    // Straight into the List: no vector held beside it.
    Ok(Value::list(
        (0..count).map(|i| Value::Int(from + i as i64 * step)),
    ))
}

/// `lists:merge/2` and `keymerge/3`: two sorted lists into one, by `key`, taking from the
/// first list on ties.
fn merge_by(x: Vec<Value>, y: Vec<Value>, key: impl Fn(&Value) -> Result<Value, Fail>) -> R {
    let mut out = Vec::with_capacity(x.len() + y.len());
    let (mut i, mut j) = (0, 0);
    while i < x.len() && j < y.len() {
        if erl_cmp(&key(&x[i])?, &key(&y[j])?) != Ordering::Greater {
            out.push(x[i].clone());
            i += 1;
        } else {
            out.push(y[j].clone());
            j += 1;
        }
    }
    out.extend_from_slice(&x[i..]);
    out.extend_from_slice(&y[j..]);
    Ok(list(out))
}
