//! `proplists`: lists of `{Key, Value}` tuples and bare atoms (an atom `A` stands for
//! `{A, true}`). Keys compare with `=:=`, as in Erlang.

use super::terms::{atom, list, list_arg, Fail, R};
use crate::value::dict::Dict;
use crate::value::order::strict_eq;
use crate::value::{Ref, Value};

fn is_atom(v: &Value) -> bool {
    matches!(
        v,
        Value::Symbol(_) | Value::Nil | Value::True | Value::False
    )
}

/// The entry's key and its value, when the entry is a property.
fn entry(e: &Value) -> Option<(Value, Value)> {
    match e {
        Value::Tuple(t) if !t.is_empty() => {
            let v = if t.len() == 2 {
                t[1].clone()
            } else {
                Value::Nil
            };
            Some((t[0].clone(), v))
        }
        a if is_atom(a) => Some((a.clone(), Value::True)),
        _ => None,
    }
}

fn props(v: &Value) -> Result<Vec<Value>, Fail> {
    list_arg(v).map_err(|_| Fail::FunctionClause)
}

pub(super) fn proplists(f: &str, a: &[Value]) -> R {
    match (f, a) {
        ("get_value", [k, l]) | ("get_value", [k, l, _]) => {
            let default = a.get(2).cloned().unwrap_or_else(|| atom("undefined"));
            for e in props(l)? {
                if let Some((key, v)) = entry(&e) {
                    if strict_eq(&key, k) {
                        // `{K, V1, V2}` has no single value: the default.
                        return Ok(match &e {
                            Value::Tuple(t) if t.len() != 2 => default,
                            _ => v,
                        });
                    }
                }
            }
            Ok(default)
        }
        ("get_bool", [k, l]) => {
            for e in props(l)? {
                if let Some((key, v)) = entry(&e) {
                    if strict_eq(&key, k) {
                        return Ok(Value::bool(matches!(v, Value::True)));
                    }
                }
            }
            Ok(Value::False)
        }
        ("lookup", [k, l]) => {
            for e in props(l)? {
                if entry(&e).is_some_and(|(key, _)| strict_eq(&key, k)) {
                    return Ok(match &e {
                        Value::Tuple(_) => e,
                        _ => Value::tuple(vec![e.clone(), Value::True]),
                    });
                }
            }
            Ok(atom("none"))
        }
        ("lookup_all", [k, l]) => Ok(list(
            props(l)?
                .into_iter()
                .filter(|e| entry(e).is_some_and(|(key, _)| strict_eq(&key, k)))
                .map(|e| match &e {
                    Value::Tuple(_) => e,
                    _ => Value::tuple(vec![e.clone(), Value::True]),
                })
                .collect(),
        )),
        ("get_all_values", [k, l]) => Ok(list(
            props(l)?
                .into_iter()
                .filter_map(|e| match &e {
                    Value::Tuple(t) if t.len() == 2 && strict_eq(&t[0], k) => Some(t[1].clone()),
                    a if is_atom(a) && strict_eq(a, k) => Some(Value::True),
                    _ => None,
                })
                .collect(),
        )),
        ("is_defined", [k, l]) => {
            Ok(Value::bool(props(l)?.iter().any(|e| {
                entry(e).is_some_and(|(key, _)| strict_eq(&key, k))
            })))
        }
        ("delete", [k, l]) => Ok(list(
            props(l)?
                .into_iter()
                .filter(|e| !entry(e).is_some_and(|(key, _)| strict_eq(&key, k)))
                .collect(),
        )),
        ("get_keys", [l]) => {
            let mut keys: Vec<Value> = Vec::new();
            for e in props(l)? {
                if let Some((k, _)) = entry(&e) {
                    if !keys.iter().any(|x| strict_eq(x, &k)) {
                        keys.push(k);
                    }
                }
            }
            keys.sort_by(super::modules::erl_cmp);
            Ok(list(keys))
        }
        ("property", [p]) => Ok(match p {
            Value::Tuple(t) if t.len() == 2 && matches!(t[1], Value::True) && is_atom(&t[0]) => {
                t[0].clone()
            }
            other => other.clone(),
        }),
        ("property", [k, v]) => Ok(if matches!(v, Value::True) && is_atom(k) {
            k.clone()
        } else {
            Value::tuple(vec![k.clone(), v.clone()])
        }),
        ("compact", [l]) => Ok(list(
            props(l)?
                .into_iter()
                .map(|e| proplists("property", &[e]))
                .collect::<Result<_, _>>()?,
        )),
        ("unfold", [l]) => Ok(list(
            props(l)?
                .into_iter()
                .map(|e| {
                    if is_atom(&e) {
                        Value::tuple(vec![e, Value::True])
                    } else {
                        e
                    }
                })
                .collect(),
        )),
        ("to_map", [l]) => {
            let mut d = Dict::new();
            // Earlier entries win.
            for e in props(l)?.into_iter().rev() {
                if let Some((k, v)) = match &e {
                    Value::Tuple(t) if t.len() == 2 => Some((t[0].clone(), t[1].clone())),
                    Value::Tuple(_) => None,
                    a if is_atom(a) => Some((a.clone(), Value::True)),
                    _ => None,
                } {
                    d.insert(k, v);
                }
            }
            Ok(Value::Dict(Ref::new(d)))
        }
        ("from_map", [m]) => match m {
            Value::Dict(d) => Ok(list(
                d.iter()
                    .map(|(k, v)| Value::tuple(vec![k.to_value(), v.clone()]))
                    .collect(),
            )),
            other => Err(Fail::Badmap(other.clone())),
        },
        _ => Err(Fail::Undef),
    }
}
