//! `maps`: Dictionaries as Erlang maps. A non-map argument is `{badmap, M}`; a missing key
//! for `get/2` is `{badkey, K}`.

use super::terms::{atom, fun, list, list_arg, truth, Fail, R};
use crate::interp::eval::Ctx;
use crate::value::dict::Dict;
use crate::value::{Ref, Value};

fn map(v: &Value) -> Result<&Dict, Fail> {
    match v {
        Value::Dict(d) => Ok(d),
        other => Err(Fail::Badmap(other.clone())),
    }
}

fn dict(d: Dict) -> Value {
    Value::Dict(Ref::new(d))
}

pub(super) fn call(ctx: &mut Ctx, f: &str, a: &[Value]) -> R {
    // The functions taking a fun check it first: a non-fun is `badarg`.
    let takes_fun = matches!(
        (f, a.len()),
        ("map" | "filter" | "foreach" | "filtermap", 2)
            | ("fold" | "merge_with" | "intersect_with", 3)
    );
    if takes_fun && !matches!(a[0], Value::Block(_)) {
        return Err(Fail::Badarg);
    }
    match (f, a) {
        ("get", [k, m]) => map(m)?
            .get(k)
            .cloned()
            .ok_or_else(|| Fail::Badkey(k.clone())),
        ("get", [k, m, default]) => Ok(map(m)?.get(k).cloned().unwrap_or_else(|| default.clone())),
        ("find", [k, m]) => Ok(match map(m)?.get(k) {
            Some(v) => Value::tuple(vec![atom("ok"), v.clone()]),
            None => atom("error"),
        }),
        ("put", [k, v, m]) => {
            let mut d = map(m)?.clone();
            d.insert(k.clone(), v.clone());
            Ok(dict(d))
        }
        ("update", [k, v, m]) => {
            let mut d = map(m)?.clone();
            if !d.contains_key(k) {
                return Err(Fail::Badkey(k.clone()));
            }
            d.insert(k.clone(), v.clone());
            Ok(dict(d))
        }
        ("remove", [k, m]) => {
            let mut d = map(m)?.clone();
            d.remove(k);
            Ok(dict(d))
        }
        ("keys", [m]) => Ok(list(walk(ctx, m)?.into_iter().map(|p| p.0).collect())),
        ("values", [m]) => Ok(list(walk(ctx, m)?.into_iter().map(|p| p.1).collect())),
        ("to_list", [m]) => Ok(list(
            walk(ctx, m)?
                .into_iter()
                .map(|(k, v)| Value::tuple(vec![k, v]))
                .collect(),
        )),
        ("from_list", [l]) => {
            let mut d = Dict::new();
            for t in list_arg(l)? {
                match &t {
                    Value::Tuple(t) if t.len() == 2 => {
                        d.insert(t[0].clone(), t[1].clone());
                    }
                    _ => return Err(Fail::Badarg),
                }
            }
            Ok(dict(d))
        }
        ("from_keys", [l, v]) => {
            let mut d = Dict::new();
            for k in list_arg(l)? {
                d.insert(k, v.clone());
            }
            Ok(dict(d))
        }
        ("is_key", [k, m]) => Ok(Value::bool(map(m)?.contains_key(k))),
        ("size", [m]) => Ok(Value::Int(map(m)?.len() as i64)),
        ("new", []) => Ok(dict(Dict::new())),
        ("merge", [x, y]) => Ok(dict(map(x)?.merged(map(y)?))),
        ("with", [ks, m]) => {
            let (ks, m) = (list_arg(ks)?, map(m)?);
            let mut d = Dict::new();
            for k in ks {
                if let Some(v) = m.get(&k) {
                    d.insert(k, v.clone());
                }
            }
            Ok(dict(d))
        }
        ("without", [ks, m]) => {
            let mut d = map(m)?.clone();
            for k in list_arg(ks)? {
                d.remove(&k);
            }
            Ok(dict(d))
        }
        ("map", [f, m]) => {
            let mut d = Dict::new();
            for (k, v) in pairs(m)? {
                let nv = fun(ctx, f, &[k.clone(), v])?;
                d.insert(k, nv);
            }
            Ok(dict(d))
        }
        ("filter", [f, m]) => {
            let mut d = Dict::new();
            for (k, v) in pairs(m)? {
                if truth(&fun(ctx, f, &[k.clone(), v.clone()])?)? {
                    d.insert(k, v);
                }
            }
            Ok(dict(d))
        }
        ("fold", [f, acc, m]) => {
            let mut acc = acc.clone();
            for (k, v) in visit(ctx, m)? {
                acc = fun(ctx, f, &[k, v, acc])?;
            }
            Ok(acc)
        }
        ("update_with", [k, f, m]) => {
            let mut d = map(m)?.clone();
            let old = d.get(k).cloned().ok_or_else(|| Fail::Badkey(k.clone()))?;
            let nv = fun(ctx, f, &[old])?;
            d.insert(k.clone(), nv);
            Ok(dict(d))
        }
        ("update_with", [k, f, init, m]) => {
            let mut d = map(m)?.clone();
            let nv = match d.get(k).cloned() {
                Some(old) => fun(ctx, f, &[old])?,
                None => init.clone(),
            };
            d.insert(k.clone(), nv);
            Ok(dict(d))
        }
        ("take", [k, m]) => {
            let mut d = map(m)?.clone();
            Ok(match d.get(k).cloned() {
                Some(v) => {
                    d.remove(k);
                    Value::tuple(vec![v, dict(d)])
                }
                None => atom("error"),
            })
        }
        ("merge_with", [f, x, y]) => {
            let (mut d, y) = (map(x)?.clone(), pairs(y)?);
            for (k, v) in y {
                let nv = match d.get(&k).cloned() {
                    Some(old) => fun(ctx, f, &[k.clone(), old, v])?,
                    None => v,
                };
                d.insert(k, nv);
            }
            Ok(dict(d))
        }
        ("intersect", [x, y]) => {
            let (x, y) = (map(x)?, map(y)?);
            let mut d = Dict::new();
            for (k, v) in y.iter() {
                let k = k.to_value();
                if x.contains_key(&k) {
                    d.insert(k, v.clone());
                }
            }
            Ok(dict(d))
        }
        ("intersect_with", [f, x, y]) => {
            let (xm, ym) = (map(x)?.clone(), pairs(y)?);
            let mut d = Dict::new();
            for (k, v) in ym {
                if let Some(old) = xm.get(&k).cloned() {
                    let nv = fun(ctx, f, &[k.clone(), old, v])?;
                    d.insert(k, nv);
                }
            }
            Ok(dict(d))
        }
        ("foreach", [f, m]) => {
            for (k, v) in visit(ctx, m)? {
                fun(ctx, f, &[k, v])?;
            }
            Ok(atom("ok"))
        }
        ("filtermap", [f, m]) => {
            let mut d = Dict::new();
            for (k, v) in pairs(m)? {
                match &fun(ctx, f, &[k.clone(), v.clone()])? {
                    Value::True => {
                        d.insert(k, v);
                    }
                    Value::False => {}
                    Value::Tuple(t) if t.len() == 2 && matches!(t[0], Value::True) => {
                        d.insert(k, t[1].clone());
                    }
                    _ => return Err(Fail::Badarg),
                }
            }
            Ok(dict(d))
        }
        ("groups_from_list", [kf, l]) => groups(ctx, kf, None, l),
        ("groups_from_list", [kf, vf, l]) => groups(ctx, kf, Some(vf), l),
        _ => Err(Fail::Undef),
    }
}

/// `maps:groups_from_list/2,3`: the elements (or their values) grouped by key, each group in
/// list order.
fn groups(ctx: &mut Ctx, kf: &Value, vf: Option<&Value>, l: &Value) -> R {
    let items = match l {
        Value::List(_) | Value::Array(_) => list_arg(l)?,
        _ => return Err(Fail::Badarg),
    };
    let mut d = Dict::new();
    for x in items {
        let k = fun(ctx, kf, std::slice::from_ref(&x))?;
        let v = match vf {
            Some(vf) => fun(ctx, vf, &[x])?,
            None => x,
        };
        let mut group = match d.get(&k) {
            Some(Value::List(g)) => g.iter().cloned().collect::<Vec<_>>(),
            _ => Vec::new(),
        };
        group.push(v);
        d.insert(k, list(group));
    }
    Ok(dict(d))
}

/// A map's pairs in the order `maps:keys/1`, `values/1` and `to_list/1` answer them.
fn walk(ctx: &mut Ctx, m: &Value) -> Result<Vec<(Value, Value)>, Fail> {
    Ok(trie_order(ctx, pairs(m)?)?.0)
}

/// A map's pairs in the order `maps:fold/3` and `foreach/2` visit them: a hash-trie map's
/// backwards.
fn visit(ctx: &mut Ctx, m: &Value) -> Result<Vec<(Value, Value)>, Fail> {
    let (mut p, trie) = trie_order(ctx, pairs(m)?)?;
    if trie {
        p.reverse();
    }
    Ok(p)
}

/// The pairs of a map of more than 32 pairs in the order `erl` walks its hash trie, when
/// every key's place in it is the same on every node ([`super::hamt`]), and whether they
/// were reordered; other maps' pairs as given (key order).
pub(super) fn trie_order(
    ctx: &mut Ctx,
    pairs: Vec<(Value, Value)>,
) -> Result<(Vec<(Value, Value)>, bool), Fail> {
    if pairs.len() <= 32 {
        return Ok((pairs, false));
    }
    let Some(c) = crate::interp::distribution::term_codec() else {
        return Ok((pairs, false));
    };
    let keys = Value::list(pairs.iter().map(|p| p.0.clone()));
    super::external::charge_term(ctx, &keys)?;
    let mut terms = Vec::with_capacity(pairs.len());
    for (k, _) in &pairs {
        match c.to_term(ctx, k) {
            Ok(t) => terms.push(t),
            Err(_) => return Ok((pairs, false)),
        }
    }
    let refs: Vec<&eetf::Term> = terms.iter().collect();
    let Some(order) = super::hamt::order(&refs) else {
        return Ok((pairs, false));
    };
    let mut slots: Vec<Option<(Value, Value)>> = pairs.into_iter().map(Some).collect();
    Ok((
        order.into_iter().filter_map(|i| slots[i].take()).collect(),
        true,
    ))
}

fn pairs(m: &Value) -> Result<Vec<(Value, Value)>, Fail> {
    Ok(map(m)?
        .iter()
        .map(|(k, v)| (k.to_value(), v.clone()))
        .collect())
}
