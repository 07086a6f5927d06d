//! The per-node queries: what a node answers when a peer asks for its
//! actors, supervisors, process tree, shape manifest or a process's status — operations of
//! the node service `'$bt_node'` ([`super::service`], [`super::service::Op::Table`]) — and
//! the asking side of those queries.
//!
//! `gen_server:call({'$bt_node', Node}, {Query, Args})` answers `{ok, Answer}` or
//! `{error, {Kind, Message}}`, on the connection's task (each answer is a read of the
//! runtime's tables: no bt process is involved, and a busy actor never delays it). Queries:
//!
//! | request | answer |
//! |---|---|
//! | `{actors, []}` | list of `{Pid, ClassName}` of live actors |
//! | `{'actorsOf:', [ClassName]}` | the same, for instances of that class or a subclass |
//! | `{'actorAt:', [Number]}` | `{Pid, ClassName}` of the live actor with that process number, or `nil` |
//! | `{supervisors, []}` | list of `{Pid, ClassName}` of running bt supervisors |
//! | `{'from:', [Number, Limit]}` | the subtree rooted at that process (`ProcessNavigation from:`), or `stale_handle` |
//! | `{processes, []}` | the `default` snapshot in the transfer form (`runtime::snapshot::transfer`) |
//! | `{shapeManifest, []}` | map of Value class name → shape version |
//! | `{globalWhereis, [Name]}` | the node holding the global name in this node's view, or `nil` |
//! | `{status, [Number]}` | `#{module, queueLength, memory, droppedCasts}` of a live process, or `nil` |
//!
//! An Erlang node has no such service: asking it answers `node_down` ("not a bt node").

use std::collections::HashMap;
use std::time::Duration;

use eetf::{Atom, Binary, FixInteger, List, Map, Term, Tuple};

use super::node::DistNode;
use crate::codec::etf::{atom, local_pid, NodeId};
use crate::interp::actor::prims::node::remote::remote_actor;
use crate::interp::actor::prims::node_query::{manifest_value, shape_manifest};
use crate::interp::actor::{await_external, ActorSys, Done};
use crate::interp::distribution::{CallReply, ErlangInterop, NodeError};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult};
use crate::interp::prims::collections::dict_from_pairs;
use crate::runtime::snapshot::{self, is_runtime_process, transfer, SnapOptions};
use crate::runtime::Pid;
use crate::value::{Sym, Value};

use super::service::Answer;
use super::terms::SERVICE;

/// The queries this module answers for the node service ([`super::service`]).
pub(super) const QUERIES: [&str; 9] = [
    "actors",
    "actorsOf:",
    "actorAt:",
    "supervisors",
    "processes",
    "from:",
    "shapeManifest",
    "status",
    "globalWhereis",
];

fn me(sys: &ActorSys) -> NodeId {
    match sys.prog.dist.get() {
        Some(d) => NodeId {
            name: d.node_name().as_str().to_string(),
            creation: d.creation(),
        },
        None => NodeId {
            name: sys.node_name.as_str().to_string(),
            creation: 0,
        },
    }
}

fn int(n: i64) -> Term {
    match i32::try_from(n) {
        Ok(i) => Term::from(FixInteger::from(i)),
        Err(_) => Term::from(eetf::BigInteger::from(n)),
    }
}

fn number_arg(args: &[Term]) -> Option<u64> {
    match args.first()? {
        Term::FixInteger(i) if i.value >= 0 => Some(i.value as u64),
        Term::BigInteger(b) => u64::try_from(&b.value).ok(),
        _ => None,
    }
}

/// Whether the actor class `c` is `name` or inherits from it.
fn class_is(c: &Value, name: &str) -> bool {
    let Value::Class(c) = c else { return false };
    let mut k = Some(c.clone());
    while let Some(cls) = k {
        if cls.name.as_str() == name {
            return true;
        }
        k = cls.superclass.clone();
    }
    false
}

/// Live user processes with `label`, in spawn order.
fn live(sys: &ActorSys, label: &str) -> Vec<crate::runtime::ProcRef> {
    sys.rt
        .processes(false)
        .into_iter()
        .filter(|p| p.label == label && !is_runtime_process(p.pid, p.name) && p.proc.is_alive())
        .map(|p| p.proc)
        .collect()
}

/// The answer to one query (the term inside `{ok, …}`), computed from the runtime's tables.
pub(super) fn answer(
    sys: &ActorSys,
    node: Option<&super::state::Inner>,
    q: &str,
    args: &[Term],
) -> Answer {
    let me = me(sys);
    // `{Pid, ClassName}`: the asker makes actor handles of its class of that name.
    let one = |p: &crate::runtime::ProcRef| {
        let class = match p.info().class_object_name() {
            Some(c) => atom(c.as_str()),
            None => atom("nil"),
        };
        Term::from(Tuple::from(vec![
            Term::from(local_pid(&me, p.pid().number)),
            class,
        ]))
    };
    let pids = |ps: Vec<crate::runtime::ProcRef>| {
        Term::from(List::from(ps.iter().map(one).collect::<Vec<_>>()))
    };
    Ok(match q {
        "actors" => pids(
            live(sys, "actor")
                .into_iter()
                .filter(|p| matches!(p.info(), Value::Class(_)))
                .collect(),
        ),
        "actorsOf:" => {
            let Some(Term::Atom(name)) = args.first() else {
                return Err(("type_error", "actorsOf: expects a class name".into()));
            };
            pids(
                live(sys, "actor")
                    .into_iter()
                    .filter(|p| class_is(p.info(), &name.name))
                    .collect(),
            )
        }
        "actorAt:" => {
            let found = number_arg(args)
                .map(|number| Pid {
                    node: 0,
                    number,
                    service: false,
                })
                .and_then(|p| sys.rt.lookup(p))
                .filter(|p| p.is_alive() && p.label() == "actor")
                .filter(|p| matches!(p.info(), Value::Class(_)));
            match found {
                Some(p) => one(&p),
                None => atom("nil"),
            }
        }
        "supervisors" => pids(
            live(sys, "supervisor")
                .into_iter()
                .filter(|p| sys.supervision.by_pid(p.pid()).is_some())
                .collect(),
        ),
        "processes" => {
            let opts = SnapOptions {
                node: me.name.clone(),
                ..SnapOptions::default()
            };
            let s = snapshot::default_snapshot(&sys.supervision, &opts);
            Term::from(Binary::from(transfer::encode(&s)))
        }
        "from:" => {
            let Some(number) = number_arg(args) else {
                return Err(("type_error", "from: expects a process number".into()));
            };
            let limit = match args.get(1) {
                Some(Term::FixInteger(l)) if l.value > 0 => Some(l.value as usize),
                _ => None,
            };
            let opts = SnapOptions {
                node: me.name.clone(),
                limit,
                ..SnapOptions::default()
            };
            let pid = Pid {
                node: 0,
                number,
                service: false,
            };
            match snapshot::from_pid(&sys.supervision, pid, &opts) {
                Ok(s) => Term::from(Binary::from(transfer::encode(&s))),
                Err(_) => {
                    let msg = format!("process <0.{number}.0> on {} is not alive", me.name);
                    return Err(("stale_handle", msg));
                }
            }
        }
        "shapeManifest" => {
            let m = shape_manifest(&sys.prog);
            Term::from(Map::from(
                m.iter()
                    .map(|(n, v)| (atom(n.as_str()), int(*v)))
                    .collect::<HashMap<_, _>>(),
            ))
        }
        "status" => {
            let st = number_arg(args).and_then(|number| {
                snapshot::status(
                    &sys.rt,
                    Pid {
                        node: 0,
                        number,
                        service: false,
                    },
                )
            });
            match st {
                Some(st) => Term::from(Map::from(HashMap::from([
                    (atom("module"), atom(&st.module)),
                    (atom("queueLength"), int(st.queue_length as i64)),
                    (atom("memory"), int(st.memory as i64)),
                    (atom("droppedCasts"), int(st.dropped_casts as i64)),
                ]))),
                None => atom("nil"),
            }
        }
        "globalWhereis" => {
            let held = match (args.first(), node) {
                (Some(Term::Atom(n)), Some(node)) => {
                    Sym::lookup(&n.name).and_then(|s| super::global::whereis(node, s))
                }
                _ => None,
            };
            match held {
                Some((n, _)) => atom(n.as_str()),
                None => atom("nil"),
            }
        }
        other => return Err(("does_not_understand", format!("no query #{other}"))),
    })
}

// ---- the asking side ----------------------------------------------------------------

fn node_error(e: NodeError, node: &str) -> NodeError {
    if e.kind == "no_such_process" {
        return NodeError {
            kind: "node_down",
            message: format!("{node} does not answer per-node queries (not a bt node?)"),
            hint: None,
        };
    }
    e
}

/// Asks `node`'s query service from the process `from` (0: no process), answering through
/// `done`: the term inside `{ok, …}`, or why not.
fn ask(
    d: &DistNode,
    from: u64,
    node: &str,
    q: &str,
    args: Vec<Term>,
    timeout: Duration,
    done: Done<Result<Term, NodeError>>,
) {
    let request = Term::from(Tuple::from(vec![
        Term::from(Atom::from(q)),
        crate::codec::etf::list(args),
    ]));
    let who = node.to_string();
    d.call_name(
        from,
        node,
        SERVICE,
        request,
        Some(timeout),
        Box::new(move |r: Result<CallReply, NodeError>| {
            done(match r {
                Err(e) => Err(node_error(e, &who)),
                Ok(reply) => unwrap_reply(reply.term, &who),
            })
        }),
    );
}

fn unwrap_reply(t: Term, node: &str) -> Result<Term, NodeError> {
    let bad = || NodeError {
        kind: "runtime_error",
        message: format!("unexpected answer from {node}'s query service"),
        hint: None,
    };
    let Term::Tuple(tu) = t else {
        return Err(bad());
    };
    let mut e = tu.elements.into_iter();
    match (e.next(), e.next(), e.next()) {
        (Some(Term::Atom(a)), Some(v), None) if a.name == "ok" => Ok(v),
        (Some(Term::Atom(a)), Some(Term::Tuple(why)), None) if a.name == "error" => {
            match &why.elements[..] {
                [Term::Atom(k), Term::Binary(m)] => Err(NodeError {
                    kind: kind_static(&k.name),
                    message: String::from_utf8_lossy(&m.bytes).into_owned(),
                    hint: None,
                }),
                _ => Err(bad()),
            }
        }
        _ => Err(bad()),
    }
}

fn kind_static(k: &str) -> &'static str {
    match k {
        "node_down" => "node_down",
        "timeout" => "timeout",
        "type_error" => "type_error",
        "stale_handle" => "stale_handle",
        "badarg" => "badarg",
        "does_not_understand" => "does_not_understand",
        _ => "runtime_error",
    }
}

/// A blocking query from outside any bt process (`bt observe NODE`).
pub fn ask_blocking(
    d: &DistNode,
    node: &str,
    q: &str,
    args: Vec<Term>,
    timeout: Duration,
) -> Result<Term, NodeError> {
    let (tx, rx) = std::sync::mpsc::channel();
    ask(
        d,
        0,
        node,
        q,
        args,
        timeout,
        Box::new(move |r| {
            let _ = tx.send(r);
        }),
    );
    rx.recv().unwrap_or_else(|_| {
        Err(NodeError {
            kind: "node_down",
            message: "distribution has stopped".into(),
            hint: None,
        })
    })
}

/// `node`'s `default` snapshot, its pids renumbered with `index` (a blocking query).
pub fn fetch_snapshot(
    d: &DistNode,
    node: &str,
    timeout: Duration,
) -> Result<snapshot::Snapshot, NodeError> {
    let t = ask_blocking(d, node, "processes", Vec::new(), timeout)?;
    decode_snapshot(d, node, &t)
}

fn decode_snapshot(d: &DistNode, node: &str, t: &Term) -> Result<snapshot::Snapshot, NodeError> {
    let Term::Binary(b) = t else {
        return Err(NodeError {
            kind: "runtime_error",
            message: format!("{node} answered something other than a snapshot"),
            hint: None,
        });
    };
    let index = d.inner.index_of(node).unwrap_or(0);
    transfer::decode(&b.bytes, index).map_err(|m| NodeError {
        kind: "runtime_error",
        message: format!("{node}: {m}"),
        hint: None,
    })
}

/// The status of process `number` of `node` (a blocking query; None when it is not alive
/// or the node does not answer in time).
pub fn fetch_status(
    d: &DistNode,
    node: &str,
    number: u64,
    timeout: Duration,
) -> Option<snapshot::Status> {
    let t = ask_blocking(d, node, "status", vec![int(number as i64)], timeout).ok()?;
    let Term::Map(m) = t else { return None };
    let get_int = |k: &str| match m.map.get(&atom(k)) {
        Some(Term::FixInteger(i)) => i.value.max(0) as u64,
        _ => 0,
    };
    let module = match m.map.get(&atom("module")) {
        Some(Term::Atom(a)) => a.name.clone(),
        _ => String::new(),
    };
    Some(snapshot::Status {
        module,
        queue_length: get_int("queueLength") as usize,
        memory: get_int("memory") as usize,
        dropped_casts: get_int("droppedCasts"),
    })
}

/// `NodeServices::query` of a named node: asks `node` and turns the answer into bt values.
pub fn query(
    d: &DistNode,
    ctx: &mut Ctx,
    node: Sym,
    sel: &str,
    args: &[Value],
    timeout_ms: u64,
) -> EvalResult {
    // `shapeSkew` compares the peer's manifest with this node's.
    let q = if sel == "shapeSkew" {
        "shapeManifest"
    } else {
        sel
    };
    let targs = match (sel, args.first()) {
        ("actorsOf:", Some(Value::Class(c))) => vec![Term::from(Atom::from(c.name.as_str()))],
        ("globalWhereis", Some(Value::Symbol(s))) => vec![Term::from(Atom::from(s.as_str()))],
        ("from:", Some(Value::Int(n))) => {
            let limit = match args.get(1) {
                Some(Value::Int(l)) => int(*l),
                _ => atom("infinity"),
            };
            vec![int(*n), limit]
        }
        ("actorAt:" | "status", Some(v)) => match pid_number(v) {
            Some(n) => vec![int(n as i64)],
            None => return Ok(Value::Nil),
        },
        _ => Vec::new(),
    };
    let from = ctx.pid;
    let who = node.as_str().to_string();
    let r = await_external(ctx, "the distribution layer", move |done| {
        ask(
            d,
            from,
            &who,
            q,
            targs,
            Duration::from_millis(timeout_ms),
            done,
        )
    })?;
    let t = match r {
        Ok(t) => t,
        Err(e) => {
            return Err(match e.hint {
                Some(h) => ctx.err_hint(ErrorKind::from_name(e.kind), e.message, &h),
                None => ctx.err(ErrorKind::from_name(e.kind), e.message),
            })
        }
    };
    let handle = |ctx: &Ctx, t: &Term| -> Value {
        let Term::Tuple(tu) = t else {
            return Value::Nil;
        };
        match &tu.elements[..] {
            [Term::Pid(p), Term::Atom(c)] => {
                let number = (p.id as u64) | ((p.serial as u64) << 32);
                let class = (c.name != "nil").then(|| Sym::new(&c.name));
                remote_actor(ctx, node, number, p.creation, class)
            }
            _ => Value::Nil,
        }
    };
    Ok(match sel {
        "actors" | "actorsOf:" | "supervisors" => match &t {
            Term::List(l) => Value::list(l.elements.iter().map(|e| handle(ctx, e))),
            _ => Value::list(Vec::new()),
        },
        "actorAt:" => handle(ctx, &t),
        "globalWhereis" => match &t {
            Term::Atom(a) if a.name != "nil" => Value::Symbol(Sym::new(&a.name)),
            _ => Value::Nil,
        },
        "processes" | "from:" => {
            let snap = decode_snapshot(d, node.as_str(), &t)
                .map_err(|e| ctx.err(ErrorKind::from_name(e.kind), e.message))?;
            let nv = crate::interp::actor::prims::node_query::node_of(ctx, node);
            crate::interp::actor::prims::supervision::nav::remote_tree(ctx, snap, nv)
        }
        "shapeManifest" => manifest_value(&manifest_of(&t)),
        "shapeSkew" => {
            let theirs: HashMap<Sym, i64> = manifest_of(&t).into_iter().collect();
            let mine = shape_manifest(&ctx.prog);
            Value::list(mine.into_iter().filter_map(|(name, local)| {
                let remote = *theirs.get(&name)?;
                (remote != local).then(|| {
                    dict_from_pairs([
                        (Value::sym("className"), Value::Symbol(name)),
                        (Value::sym("localVersion"), Value::Int(local)),
                        (Value::sym("remoteVersion"), Value::Int(remote)),
                    ])
                })
            }))
        }
        "status" => match &t {
            Term::Map(m) => {
                let mut pairs = Vec::new();
                for k in [
                    "module",
                    "sysState",
                    "queueLength",
                    "memory",
                    "droppedCasts",
                ] {
                    let v = match (k, m.map.get(&atom(k))) {
                        ("sysState", _) => Value::sym("running"),
                        (_, Some(Term::Atom(a))) => Value::sym(&a.name),
                        (_, Some(Term::FixInteger(i))) => Value::Int(i.value as i64),
                        _ => Value::Nil,
                    };
                    pairs.push((Value::sym(k), v));
                }
                dict_from_pairs(pairs)
            }
            _ => Value::Nil,
        },
        _ => Value::Nil,
    })
}

/// The process number a pid-like argument names (a remote pid, a Pid, or `"<0.7.0>"`).
fn pid_number(v: &Value) -> Option<u64> {
    if let Some(p) = crate::interp::actor::prims::node_query::as_remote_pid(v) {
        return Some(p.number);
    }
    if let Some(a) = crate::interp::actor::handle::downcast::<
        crate::interp::actor::prims::node::remote::RemoteActor,
    >(v)
    {
        return Some(a.number);
    }
    match v {
        Value::Str(s) => crate::interp::actor::prims::node_query::parse_pid(s).map(|p| p.number),
        Value::Int(n) if *n >= 0 => Some(*n as u64),
        _ => None,
    }
}

/// A manifest map term as (class name, version) pairs, sorted by name.
fn manifest_of(t: &Term) -> Vec<(Sym, i64)> {
    let Term::Map(m) = t else { return Vec::new() };
    let mut v: Vec<(Sym, i64)> = m
        .map
        .iter()
        .filter_map(|(k, x)| match (k, x) {
            (Term::Atom(a), Term::FixInteger(i)) => Some((Sym::new(&a.name), i.value as i64)),
            _ => None,
        })
        .collect();
    v.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
    v
}
