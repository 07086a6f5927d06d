//! A canonical S-expression dump of the AST (`bt parse --ast`), used by the golden tests.
//!
//! The dump is stable and readable: one node per form, no spans, lines broken only when a form
//! does not fit in 80 columns. Leading atoms of a form stay on its first line.

use crate::syntax::ast::*;

/// An S-expression.
enum S {
    Atom(String),
    List(Vec<S>),
}

fn atom(s: impl Into<String>) -> S {
    S::Atom(s.into())
}

fn list(items: Vec<S>) -> S {
    S::List(items)
}

fn tagged(tag: &str, mut rest: Vec<S>) -> S {
    rest.insert(0, atom(tag));
    S::List(rest)
}

/// Renders a module.
pub fn dump_module(m: &Module) -> String {
    let mut out = String::new();
    for item in &m.items {
        let s = item_s(item);
        render(&s, 0, &mut out);
        out.push('\n');
    }
    out
}

fn flat_len(s: &S) -> usize {
    match s {
        S::Atom(a) => a.len(),
        S::List(v) => 2 + v.iter().map(flat_len).sum::<usize>() + v.len().saturating_sub(1),
    }
}

fn render_flat(s: &S, out: &mut String) {
    match s {
        S::Atom(a) => out.push_str(a),
        S::List(v) => {
            out.push('(');
            for (i, x) in v.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                render_flat(x, out);
            }
            out.push(')');
        }
    }
}

fn render(s: &S, indent: usize, out: &mut String) {
    match s {
        S::Atom(a) => out.push_str(a),
        S::List(v) => {
            if indent + flat_len(s) <= 80 {
                render_flat(s, out);
                return;
            }
            out.push('(');
            let mut i = 0;
            while i < v.len() && matches!(v[i], S::Atom(_)) {
                if i > 0 {
                    out.push(' ');
                }
                render_flat(&v[i], out);
                i += 1;
            }
            for x in &v[i..] {
                if i == 0 {
                    render(x, indent + 1, out);
                    i = 1;
                    continue;
                }
                out.push('\n');
                for _ in 0..indent + 2 {
                    out.push(' ');
                }
                render(x, indent + 2, out);
            }
            out.push(')');
        }
    }
}

fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn symbol(s: &str) -> String {
    let plain = !s.is_empty()
        && (s.split_inclusive(':').all(|p| {
            let p = p.strip_suffix(':').unwrap_or(p);
            p.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }) || s.chars().all(|c| "+-*/<>=~%&?,\\".contains(c)));
    if plain {
        format!("#{s}")
    } else {
        format!("#'{}'", s.replace('\'', "''"))
    }
}

fn doc_s(doc: &Option<Doc>, v: &mut Vec<S>) {
    if let Some(d) = doc {
        v.push(list(vec![atom("doc"), atom(quote(&d.text()))]));
    }
}

fn item_s(item: &Item) -> S {
    match item {
        Item::Class(c) => class_s(c),
        Item::Method(m) => {
            let mut v = vec![atom("extend"), atom(m.class_name.name.as_str())];
            if m.class_side {
                v.push(atom("class"));
            }
            v.push(method_s(&m.method));
            list(v)
        }
        Item::Protocol(p) => {
            let mut v = vec![atom("protocol"), atom(p.name.name.as_str())];
            if let Some(e) = &p.extending {
                v.push(list(vec![atom("extending"), atom(e.name.as_str())]));
            }
            doc_s(&p.doc, &mut v);
            for s in &p.signatures {
                let mut sv = vec![atom("sig"), atom(s.selector.as_str())];
                if s.class_side {
                    sv.push(atom("class"));
                }
                if !s.params.is_empty() {
                    sv.push(params_s(&s.params));
                }
                if let Some(r) = &s.ret {
                    sv.push(list(vec![atom("returns"), type_s(r)]));
                }
                v.push(list(sv));
            }
            list(v)
        }
        Item::TypeAlias(a) => {
            let mut v = vec![atom("type"), atom(a.name.name.as_str())];
            if a.internal {
                v.push(atom("internal"));
            }
            v.push(type_s(&a.ty));
            doc_s(&a.doc, &mut v);
            list(v)
        }
        Item::Stmt(s) => stmt_s(s),
    }
}

fn class_s(c: &ClassDecl) -> S {
    let mut v = vec![atom("class"), atom(c.name.name.as_str())];
    let mut sup = vec![atom("super"), atom(c.superclass.name.as_str())];
    sup.extend(c.super_args.iter().map(type_s));
    v.push(list(sup));
    let m = &c.modifiers;
    let mods: Vec<S> = [
        ("abstract", m.is_abstract),
        ("sealed", m.sealed),
        ("typed", m.typed),
        ("internal", m.internal),
    ]
    .iter()
    .filter(|(_, on)| *on)
    .map(|(n, _)| atom(*n))
    .collect();
    if !mods.is_empty() {
        v.push(tagged("modifiers", mods));
    }
    if !c.type_params.is_empty() {
        let ps = c
            .type_params
            .iter()
            .map(|p| match &p.bound {
                Some(b) => list(vec![atom(p.name.name.as_str()), type_s(b)]),
                None => atom(p.name.name.as_str()),
            })
            .collect();
        v.push(tagged("type-params", ps));
    }
    if let Some(h) = &c.handle_scope {
        v.push(list(vec![atom("handle-scope"), atom(h.name.as_str())]));
    }
    doc_s(&c.doc, &mut v);
    for m in &c.members {
        v.push(match m {
            Member::Field(s) => slot_s("field", s),
            Member::State(s) => slot_s("state", s),
            Member::ClassState(s) => slot_s("class-state", s),
            Member::Method(m) => method_s(m),
            Member::Expect(e) => list(vec![atom("expect"), atom(e.category.name.as_str())]),
        });
    }
    list(v)
}

fn slot_s(tag: &str, s: &SlotDecl) -> S {
    let mut v = vec![atom(tag), atom(s.name.name.as_str())];
    if let Some(t) = &s.ty {
        v.push(list(vec![atom("type"), type_s(t)]));
    }
    if let Some(d) = &s.default {
        v.push(list(vec![atom("default"), expr_s(d)]));
    }
    doc_s(&s.doc, &mut v);
    list(v)
}

fn params_s(ps: &[Param]) -> S {
    tagged(
        "params",
        ps.iter()
            .map(|p| match &p.ty {
                Some(t) => list(vec![atom(p.name.name.as_str()), type_s(t)]),
                None => atom(p.name.name.as_str()),
            })
            .collect(),
    )
}

fn method_s(m: &MethodDecl) -> S {
    let mut v = vec![atom("method"), atom(m.selector.as_str())];
    for (flag, name) in [
        (m.class_side, "class"),
        (m.sealed, "sealed"),
        (m.internal, "internal"),
    ] {
        if flag {
            v.push(atom(name));
        }
    }
    if !m.params.is_empty() {
        v.push(params_s(&m.params));
    }
    if let Some(r) = &m.ret {
        v.push(list(vec![atom("returns"), type_s(r)]));
    }
    doc_s(&m.doc, &mut v);
    if let Some(p) = &m.primitive {
        v.push(list(vec![atom("primitive"), atom(p.name.as_str())]));
    } else {
        v.push(tagged("body", m.body.iter().map(stmt_s).collect()));
    }
    list(v)
}

fn stmt_s(s: &Stmt) -> S {
    match &s.kind {
        StmtKind::Expr(e) => expr_s(e),
        StmtKind::Cast(e) => list(vec![atom("cast"), expr_s(e)]),
        StmtKind::Expect(e) => list(vec![atom("expect"), atom(e.category.name.as_str())]),
    }
}

fn expr_s(e: &Expr) -> S {
    match &e.kind {
        ExprKind::Nil => atom("nil"),
        ExprKind::True => atom("true"),
        ExprKind::False => atom("false"),
        ExprKind::SelfRef => atom("self"),
        ExprKind::Super => atom("super"),
        ExprKind::Int(i) => atom(i.to_string()),
        ExprKind::BigInt(b) => atom(b.to_string()),
        ExprKind::Float(f) => atom(format!("{f:?}")),
        ExprKind::Str(s) => atom(quote(s)),
        ExprKind::Interp(parts) => tagged(
            "interp",
            parts
                .iter()
                .map(|p| match p {
                    InterpPart::Lit(s) => atom(quote(s)),
                    InterpPart::Expr(e) => expr_s(e),
                })
                .collect(),
        ),
        ExprKind::Char(c) => list(vec![atom("char"), atom(quote(&c.to_string()))]),
        ExprKind::Symbol(s) => atom(symbol(s)),
        ExprKind::Var(v) => atom(v.as_str()),
        ExprKind::Field(f) => atom(format!("self.{f}")),
        ExprKind::Assign { name, ty, value } => {
            let mut v = vec![atom(":="), atom(name.name.as_str())];
            if let Some(t) = ty {
                v.push(list(vec![atom("type"), type_s(t)]));
            }
            v.push(expr_s(value));
            list(v)
        }
        ExprKind::FieldAssign { name, value } => list(vec![
            atom(":="),
            atom(format!("self.{}", name.name)),
            expr_s(value),
        ]),
        ExprKind::Destructure { pattern, value } => {
            list(vec![atom("destructure"), pattern_s(pattern), expr_s(value)])
        }
        ExprKind::Send {
            receiver,
            selector,
            args,
            ..
        } => {
            let mut v = vec![atom("send"), expr_s(receiver), atom(selector.as_str())];
            v.extend(args.iter().map(expr_s));
            list(v)
        }
        ExprKind::Cascade { receiver, parts } => {
            let mut v = vec![atom("cascade"), expr_s(receiver)];
            for p in parts {
                let mut pv = vec![atom(p.selector.as_str())];
                pv.extend(p.args.iter().map(expr_s));
                v.push(list(pv));
            }
            list(v)
        }
        ExprKind::Block(b) => {
            let mut v = vec![atom("block")];
            if !b.params.is_empty() {
                v.push(params_s(&b.params));
            }
            v.extend(b.body.iter().map(stmt_s));
            list(v)
        }
        ExprKind::List(xs) => tagged("list", xs.iter().map(expr_s).collect()),
        ExprKind::ListCons { head, tail } => list(vec![atom("cons"), expr_s(head), expr_s(tail)]),
        ExprKind::Array(xs) => tagged("array", xs.iter().map(expr_s).collect()),
        ExprKind::Dict(kvs) => tagged(
            "dict",
            kvs.iter()
                .map(|(k, v)| list(vec![expr_s(k), expr_s(v)]))
                .collect(),
        ),
        ExprKind::TupleLit(xs) => tagged("tuple", xs.iter().map(expr_s).collect()),
        ExprKind::Match {
            receiver,
            exhaustive,
            arms,
        } => {
            let tag = if *exhaustive {
                "match-exhaustive"
            } else {
                "match"
            };
            let mut v = vec![atom(tag), expr_s(receiver)];
            for a in arms {
                let mut av = vec![atom("arm"), pattern_s(&a.pattern)];
                if let Some(g) = &a.guard {
                    av.push(list(vec![atom("when"), expr_s(g)]));
                }
                av.push(expr_s(&a.body));
                v.push(list(av));
            }
            list(v)
        }
        ExprKind::Return(e) => list(vec![atom("^"), expr_s(e)]),
        ExprKind::Error => atom("<error>"),
    }
}

fn rest_s(v: &mut Vec<S>, rest: &Option<Ident>) {
    if let Some(r) = rest {
        v.push(list(vec![atom("rest"), atom(r.name.as_str())]));
    }
}

fn pattern_s(p: &Pattern) -> S {
    match p {
        Pattern::Wildcard(_) => atom("_"),
        Pattern::Literal(e) => expr_s(e),
        Pattern::Nil(_) => atom("nil"),
        Pattern::Bind(i) => atom(i.name.as_str()),
        Pattern::Typed { name, ty } => list(vec![atom("::"), atom(name.name.as_str()), type_s(ty)]),
        Pattern::Tuple(ps, _) => tagged("tuple-pat", ps.iter().map(pattern_s).collect()),
        Pattern::Array { elems, rest, .. } => {
            let mut v = vec![atom("array-pat")];
            v.extend(elems.iter().map(pattern_s));
            rest_s(&mut v, rest);
            list(v)
        }
        Pattern::List { elems, rest, .. } => {
            let mut v = vec![atom("list-pat")];
            v.extend(elems.iter().map(pattern_s));
            rest_s(&mut v, rest);
            list(v)
        }
        Pattern::Dict(kvs, _) => tagged(
            "dict-pat",
            kvs.iter()
                .map(|(k, p)| list(vec![expr_s(k), pattern_s(p)]))
                .collect(),
        ),
        Pattern::ResultOk(p, _) => list(vec![atom("ok-pat"), pattern_s(p)]),
        Pattern::ResultError(p, _) => list(vec![atom("error-pat"), pattern_s(p)]),
        Pattern::Binary(segs, _) => tagged(
            "binary-pat",
            segs.iter()
                .map(|s| {
                    let mut v = vec![atom("seg")];
                    v.push(match &s.value {
                        BinSegValue::Bind(i) => atom(i.name.as_str()),
                        BinSegValue::Wildcard => atom("_"),
                        BinSegValue::Int(n) => atom(n.to_string()),
                    });
                    if let Some(n) = s.size {
                        v.push(list(vec![atom("size"), atom(n.to_string())]));
                    }
                    v.extend(s.modifiers.iter().map(atom));
                    list(v)
                })
                .collect(),
        ),
        Pattern::Error(_) => atom("<error>"),
    }
}

fn type_s(t: &TypeExpr) -> S {
    match &t.kind {
        TypeKind::Named { name, args } => {
            if args.is_empty() {
                atom(name.as_str())
            } else {
                let mut v = vec![atom(name.as_str())];
                v.extend(args.iter().map(type_s));
                list(v)
            }
        }
        TypeKind::SelfType => atom("Self"),
        TypeKind::Meta(t) => list(vec![atom("class"), type_s(t)]),
        TypeKind::Symbol(s) => atom(symbol(s)),
        TypeKind::Nil => atom("nil"),
        TypeKind::False => atom("false"),
        TypeKind::True => atom("true"),
        TypeKind::Union(ts) => tagged("|", ts.iter().map(type_s).collect()),
        TypeKind::Inter(ts) => tagged("&", ts.iter().map(type_s).collect()),
        TypeKind::Diff(a, b) => list(vec![atom("\\"), type_s(a), type_s(b)]),
        TypeKind::Error => atom("<error>"),
    }
}
