//! `lists`: the list functions, with bt blocks as funs. A non-list argument is
//! `function_clause`, as the Erlang clauses raise it.

use std::cmp::Ordering;

use super::modules::erl_cmp;
use super::terms::{fun, int_arg, is_num, list, list_fc, truth, Fail, R};
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

pub(super) fn call(ctx: &mut Ctx, f: &str, a: &[Value]) -> R {
    let n = a.len();
    ctx.charge(n)?;
    match (f, a) {
        ("reverse", [l]) => {
            let mut l = list_fc(l)?;
            l.reverse();
            Ok(list(l))
        }
        ("reverse", [l, tail]) => {
            let mut l = list_fc(l)?;
            l.reverse();
            l.extend(list_fc(tail)?);
            Ok(list(l))
        }
        ("seq", [from, to]) => seq(ctx, from, to, &Value::Int(1)),
        ("seq", [from, to, step]) => seq(ctx, from, to, step),
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
            let mut out = Vec::new();
            for x in list_fc(l)? {
                out.extend(list_fc(&x)?);
            }
            Ok(list(out))
        }
        ("append", [x, y]) => {
            let mut l = list_fc(x)?;
            l.extend(list_fc(y)?);
            Ok(list(l))
        }
        ("concat", [l]) => {
            let mut s = String::new();
            for x in list_fc(l)? {
                match &x {
                    Value::Str(t) => s.push_str(t),
                    Value::Symbol(t) => s.push_str(t.as_str()),
                    Value::Int(i) => s.push_str(&i.to_string()),
                    _ => return Err(Fail::FunctionClause),
                }
            }
            Ok(super::terms::charlist(&s))
        }
        ("flatten", [l]) => {
            let mut out = Vec::new();
            flatten_into(&list_fc(l)?, &mut out);
            Ok(list(out))
        }
        ("member", [x, l]) => Ok(Value::bool(list_fc(l)?.iter().any(|e| strict_eq(e, x)))),
        ("keyfind", [k, n, l]) => {
            let (n, l) = (idx(n)?, list_fc(l)?);
            Ok(keyfind(k, n, &l).cloned().unwrap_or(Value::False))
        }
        ("keymember", [k, n, l]) => {
            let (n, l) = (idx(n)?, list_fc(l)?);
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
            if start == 0 || start > l.len() + 1 {
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
            let (mut l, y) = (list_fc(x)?, list_fc(y)?);
            for e in y {
                if let Some(p) = l.iter().position(|v| strict_eq(v, &e)) {
                    l.remove(p);
                }
            }
            Ok(list(l))
        }
        ("split", [n, l]) => {
            let (n, l) = (idx(n)?, list_fc(l)?);
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
        _ => Err(Fail::Undef),
    }
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

fn seq(ctx: &mut Ctx, from: &Value, to: &Value, step: &Value) -> R {
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
        return Err(Fail::FunctionClause);
    }
    if step == 0 {
        return Ok(list(vec![Value::Int(from)]));
    }
    let count = ((to as i128 - from as i128) / step as i128 + 1).max(0) as usize;
    ctx.charge(count)?;
    Ok(list(
        (0..count)
            .map(|i| Value::Int(from + i as i64 * step))
            .collect(),
    ))
}
