//! Lowering: AST → the evaluator's [`Node`] form.
//!
//! Two phases. Phase 1 walks the AST with the scoping rules (a local is
//! declared by its first assignment, in source order; a first assignment inside a real block is
//! local to it; the literal blocks of the control-flow selectors are inlined and their first
//! assignments belong to the enclosing scope) and emits `VarRef::Pending(id)`. Once a whole
//! method is seen, it is known which variables inner blocks capture; phase 2 rewrites every
//! pending reference to a stack slot, an owned cell or an upvalue, and fills in the slot/cell
//! counts and upvalue sources of each function.
//!
//! Files: this one (the walk of phase 1), `scope` (functions, variables and scopes of phase
//! 1), `resolve` (phase 2), `inline` (sends and the inlined control-flow selectors), `pattern`
//! (`match:` arms and patterns), `shape` (syntactic helpers), `scratch` (per-thread vectors).

mod inline;
mod lazy;
mod pattern;
mod resolve;
mod scope;
mod scratch;
mod shape;

#[cfg(test)]
pub(crate) use lazy::lower_decl;
use shape::*;

use std::sync::Arc;

use crate::diagnostic::Diagnostic;
use crate::interp::class::ClassKind;
use crate::interp::eval::code::*;
use crate::syntax::ast::{self, Expr, ExprKind, Name, Span, Stmt, StmtKind};
use crate::value::{ClassRef, Sym, Value};

/// What the code being lowered belongs to.
#[derive(Clone)]
pub struct Owner {
    pub class: Option<ClassRef>,
    pub class_side: bool,
    /// Field names when the class object is not created yet (defaults to `class`'s).
    pub fields: Vec<Sym>,
    pub kind: ClassKind,
    pub is_testcase: bool,
    /// Class variables visible from the class side.
    pub class_vars: Vec<Sym>,
}

impl Owner {
    pub fn toplevel() -> Owner {
        Owner {
            class: None,
            class_side: false,
            fields: Vec::new(),
            kind: ClassKind::Object,
            is_testcase: false,
            class_vars: Vec::new(),
        }
    }

    pub fn of_class(c: &ClassRef, class_side: bool) -> Owner {
        let mut class_vars = Vec::new();
        for k in c.chain() {
            for (n, _) in k.class_state.lock().iter() {
                class_vars.push(*n);
            }
        }
        Owner {
            class: Some(c.clone()),
            class_side,
            fields: c.field_names.clone(),
            kind: c.kind,
            is_testcase: c.is_testcase,
            class_vars,
        }
    }
}

struct VarInfo {
    owner: u32,
    captured: bool,
    param: Option<u32>,
    binding: Option<Sym>,
}

#[derive(Default)]
struct FnInfo {
    nparams: u32,
    owned: Vec<u32>,
    free: Vec<u32>,
}

struct Scope {
    base: bool,
    /// Inline names (no allocation for the usual short one).
    names: Vec<(Name, u32)>,
}

pub struct Lowerer {
    file: u32,
    owner: Owner,
    toplevel: bool,
    diags: Vec<Diagnostic>,
    vars: Vec<VarInfo>,
    fns: Vec<FnInfo>,
    fn_stack: Vec<u32>,
    scopes: Vec<Vec<Scope>>,
    self_var: Option<u32>,
    touches_class_state: bool,
    /// Every real block lowered so far (any depth), for [`FnCode::blocks`] of the root.
    blocks: std::cell::RefCell<Vec<Arc<FnCode>>>,
    /// Spare inner vectors (`scratch.rs`: reused per thread).
    pool: scratch::Pool,
}

const BINOPS: &[(&str, BinOp)] = &[
    ("+", BinOp::Add),
    ("-", BinOp::Sub),
    ("*", BinOp::Mul),
    ("<", BinOp::Lt),
    (">", BinOp::Gt),
    ("<=", BinOp::Le),
    (">=", BinOp::Ge),
    ("==", BinOp::Eq),
    ("/=", BinOp::Ne),
    ("=:=", BinOp::StrictEq),
    ("=/=", BinOp::StrictNe),
    ("%", BinOp::Rem),
];

fn is_upper(name: &str) -> bool {
    name.chars()
        .next()
        .map(|c| c.is_ascii_uppercase())
        .unwrap_or(false)
}

/// A literal block argument with exactly `n` parameters (or any of `ns`).
fn lit_block<'a>(e: &'a Expr, ns: &[usize]) -> Option<&'a ast::Block> {
    match &e.kind {
        ExprKind::Block(b) if ns.contains(&b.params.len()) => Some(b),
        _ => None,
    }
}

impl Lowerer {
    pub fn new(file: u32, owner: Owner) -> Lowerer {
        let s = scratch::take();
        Lowerer {
            file,
            owner,
            toplevel: false,
            diags: Vec::new(),
            vars: s.vars,
            fns: s.fns,
            fn_stack: s.fn_stack,
            scopes: s.scopes,
            self_var: None,
            blocks: Default::default(),
            touches_class_state: false,
            pool: s.pool,
        }
    }

    fn loc(&self, span: Span) -> Loc {
        Loc {
            file: self.file,
            pos: span.start,
        }
    }

    fn error(&mut self, code: &'static str, msg: String, span: Span) {
        self.diags.push(Diagnostic::error(code, msg, span));
    }

    fn self_node(&mut self) -> Node {
        match self.self_var {
            Some(id) => {
                self.note_use(id);
                Node::Var(VarRef::Pending(id))
            }
            None => Node::SelfRef,
        }
    }

    // ---------- entry points ----------

    /// Lowers a method body.
    pub fn method(mut self, m: &ast::MethodDecl) -> Result<Arc<FnCode>, Vec<Diagnostic>> {
        self.begin_fn(&m.params);
        let rebind = self.owner.is_testcase
            && !self.owner.class_side
            && m.body.iter().any(stmt_has_field_assign);
        if rebind {
            let id = self.new_var(0, None, None);
            self.self_var = Some(id);
        }
        let mut body = self.stmts(&m.body);
        if rebind {
            if let Some(last) = m.body.last() {
                if matches!(&last.kind, StmtKind::Expr(e) if matches!(e.kind, ExprKind::FieldAssign { .. }))
                {
                    let s = self.self_node();
                    body.push(s);
                }
            }
        }
        let mut body = seq(body);
        strip_tail_return(&mut body);
        self.end_fn();
        self.finish(body)
    }

    /// Lowers a parameterless expression (field or class-variable default).
    pub fn default_expr(mut self, e: &Expr) -> Result<Arc<FnCode>, Vec<Diagnostic>> {
        self.begin_fn(&[]);
        let body = self.expr(e);
        self.end_fn();
        let sendless = sendless(&body);
        let mut code = self.finish(body)?;
        if let Some(c) = Arc::get_mut(&mut code) {
            c.sendless = sendless;
        }
        Ok(code)
    }

    /// Lowers top-level statements; `bindings` are the session's existing binding names,
    /// each with whether its cell is shared (a live closure of an earlier unit holds it).
    ///
    /// A binding that no block of this unit captures and whose cell is not shared is a stack
    /// slot while the unit runs (`FnCode::toplevel_slots`: loaded from the session before,
    /// stored back after), since nothing but this unit's own code can reach it meanwhile;
    /// every other binding is its session cell.
    pub fn toplevel(
        mut self,
        stmts: &[&Stmt],
        bindings: &[(Sym, bool)],
    ) -> Result<Arc<FnCode>, Vec<Diagnostic>> {
        self.toplevel = true;
        self.begin_fn(&[]);
        // Sized up front: growing these vectors cost more than lowering a short input.
        self.vars.reserve(bindings.len() + 8);
        self.fns[0].owned.reserve(bindings.len() + 8);
        self.scopes[0][0].names.reserve(bindings.len() + 8);
        for &(b, shared) in bindings {
            let id = self.new_var(0, None, Some(b));
            self.vars[id as usize].captured = shared;
            self.scopes[0][0].names.push((Name::new(b.as_str()), id));
        }
        let mut body = Vec::with_capacity(stmts.len());
        for s in stmts {
            if let Some(n) = self.stmt(s) {
                body.push(n);
            }
        }
        self.end_fn();
        self.finish(Node::Seq(body))
    }

    fn finish(mut self, body: Node) -> Result<Arc<FnCode>, Vec<Diagnostic>> {
        if !self.diags.is_empty() {
            return Err(std::mem::take(&mut self.diags));
        }
        let mut code = FnCode {
            body,
            fid: 0,
            ..FnCode::default()
        };
        let layout = self.layout();
        self.fill(&mut code, 0, &layout);
        code.blocks = self.blocks.take();
        code.blocks.sort_by_key(|b| b.fid);
        code.touches_class_state = self.touches_class_state;
        if let Some(id) = self.self_var {
            code.self_var = Some(self.resolve(id, 0, &layout));
        }
        code.class_state_scope =
            self.owner.class_side && !self.touches_class_state && !self.owner.class_vars.is_empty();
        code.special =
            code.self_var.is_some() || code.touches_class_state || code.class_state_scope;
        Ok(Arc::new(code))
    }

    // ---------- phase 1 ----------

    fn stmts(&mut self, stmts: &[Stmt]) -> Vec<Node> {
        stmts.iter().filter_map(|s| self.stmt(s)).collect()
    }

    fn stmt(&mut self, s: &Stmt) -> Option<Node> {
        match &s.kind {
            StmtKind::Expr(e) => Some(self.expr(e)),
            StmtKind::Expect(_) => None,
            StmtKind::Cast(e) => Some(match &e.kind {
                ExprKind::Send {
                    receiver,
                    selector,
                    selector_span,
                    args,
                } if !matches!(receiver.kind, ExprKind::Super) => {
                    let recv = self.expr(receiver);
                    let args = args.iter().map(|a| self.expr(a)).collect();
                    Node::Cast(Box::new(SendNode {
                        recv,
                        sel: Sym::new(selector),
                        args,
                        loc: self.loc(at_selector(e.span, *selector_span)),
                        pure_args: false,
                    }))
                }
                _ => self.expr(e),
            }),
        }
    }

    /// The body of an inlined literal block, with its parameters declared in a new scope.
    fn inline_block(&mut self, b: &ast::Block) -> (Vec<VarRef>, Node) {
        self.push_scope();
        let params: Vec<VarRef> = b
            .params
            .iter()
            .map(|p| VarRef::Pending(self.declare_inner(&p.name.name)))
            .collect();
        let body = self.stmts(&b.body);
        self.pop_scope();
        (params, seq(body))
    }

    fn inline_body(&mut self, e: &Expr) -> Node {
        match &e.kind {
            ExprKind::Block(b) => self.inline_block(b).1,
            _ => self.expr(e),
        }
    }

    fn real_block(&mut self, b: &ast::Block) -> Node {
        let fid = self.begin_fn(&b.params);
        let body = self.block_body(b);
        self.end_fn();
        let code = FnCode {
            fid,
            nparams: b.params.len() as u32,
            body: seq(body),
            ..FnCode::default()
        };
        Node::Block(Arc::new(code))
    }

    /// A real block's statements. A last statement `p sel: args` that sends an in-place
    /// update (`add:`, `at:put:`, …) to one of the block's own parameters, which nothing
    /// else in the block captures and the arguments do not name, is lowered as `p := p
    /// sel: args`: the same answer (the parameter is dead after it), and a collection the
    /// caller moved in (`inject:into:`'s accumulator, `Ctx::call_block_moving`) is then
    /// updated in place instead of copied.
    fn block_body(&mut self, b: &ast::Block) -> Vec<Node> {
        let Some((last, init)) = b.body.split_last() else {
            return Vec::new();
        };
        let tail = match &last.kind {
            StmtKind::Expr(
                value @ Expr {
                    kind:
                        ExprKind::Send {
                            receiver,
                            selector,
                            args,
                            ..
                        },
                    ..
                },
            ) => match &receiver.kind {
                ExprKind::Var(v)
                    if IN_PLACE_SELECTORS.contains(&selector.as_str())
                        && b.params.iter().any(|p| p.name.name.as_str() == v.as_str())
                        && !args.iter().any(|a| shape::expr_mentions(a, v)) =>
                {
                    Some((v.as_str(), value))
                }
                _ => None,
            },
            _ => None,
        };
        let Some((name, value)) = tail else {
            return self.stmts(&b.body);
        };
        let mut body = self.stmts(init);
        let captured = self
            .lookup(name)
            .is_none_or(|id| self.vars[id as usize].captured);
        match (!captured).then(|| self.in_place(name, value)).flatten() {
            Some(n) => body.push(n),
            None => body.extend(self.stmt(last)),
        }
        body
    }

    pub(crate) fn expr(&mut self, e: &Expr) -> Node {
        match &e.kind {
            ExprKind::Nil => Node::Nil,
            ExprKind::True => Node::Const(Value::True),
            ExprKind::False => Node::Const(Value::False),
            ExprKind::SelfRef | ExprKind::Super => self.self_node(),
            ExprKind::Int(i) => Node::Const(Value::Int(*i)),
            ExprKind::BigInt(b) => Node::Const(Value::from_bigint((**b).clone())),
            ExprKind::Float(x) => Node::Const(Value::float(*x)),
            ExprKind::Str(s) => Node::Const(Value::str(s.clone())),
            ExprKind::Char(c) => Node::Const(Value::ch(*c)),
            ExprKind::Symbol(s) => Node::Const(Value::sym(s)),
            ExprKind::Interp(parts) => Node::Interp(
                parts
                    .iter()
                    .map(|p| match p {
                        ast::InterpPart::Lit(s) => InterpPart::Lit(s.clone()),
                        ast::InterpPart::Expr(x) => InterpPart::Expr(self.expr(x)),
                    })
                    .collect(),
            ),
            ExprKind::Var(name) => match self.lookup(name) {
                Some(id) => Node::Var(VarRef::Pending(id)),
                None if is_upper(name) => Node::Global(Sym::new(name), self.loc(e.span)),
                None => {
                    self.error("E0201", format!("Undefined variable: {name}"), e.span);
                    Node::Nil
                }
            },
            ExprKind::Field(name) => self.field(name, None, e.span),
            ExprKind::FieldAssign { name, value } => self.field(&name.name, Some(value), e.span),
            ExprKind::Assign { name, ty: _, value } => {
                if let Some(n) = self.in_place(&name.name, value) {
                    return n;
                }
                let v = self.expr(value);
                let id = match self.lookup(&name.name) {
                    Some(id) => id,
                    None => self.declare(&name.name),
                };
                Node::SetVar(VarRef::Pending(id), Box::new(v))
            }
            ExprKind::Destructure { pattern, value } => {
                let v = self.expr(value);
                let mut seen = Vec::new();
                let p = self.pattern(pattern, &mut seen, true);
                Node::Destructure(Box::new((p, v, self.loc(e.span))))
            }
            // A send is located at its selector (`x foo`: at `foo`), where a report's caret
            // points.
            ExprKind::Send {
                receiver,
                selector,
                selector_span,
                args,
            } => self.send(
                receiver,
                selector,
                args,
                at_selector(e.span, *selector_span),
            ),
            ExprKind::Cascade { receiver, parts } => {
                let recv = self.expr(receiver);
                let parts = parts
                    .iter()
                    .map(|p| {
                        let args = p.args.iter().map(|a| self.expr(a)).collect();
                        (Sym::new(&p.selector), args, self.loc(p.span))
                    })
                    .collect();
                Node::Cascade(Box::new(CascadeNode { recv, parts }))
            }
            ExprKind::Block(b) => self.real_block(b),
            ExprKind::List(items) => {
                let nodes: Vec<Node> = items.iter().map(|x| self.expr(x)).collect();
                if nodes.iter().all(|n| matches!(n, Node::Const(_))) {
                    let vals = nodes.into_iter().map(|n| {
                        if let Node::Const(v) = n {
                            v
                        } else {
                            Value::Nil
                        }
                    });
                    Node::Const(Value::list(vals))
                } else {
                    Node::List(nodes)
                }
            }
            ExprKind::ListCons { head, tail } => {
                let h = self.expr(head);
                let t = self.expr(tail);
                Node::Cons(Box::new((h, t, self.loc(e.span))))
            }
            ExprKind::Array(items) => Node::Array(items.iter().map(|x| self.expr(x)).collect()),
            ExprKind::Dict(pairs) => Node::Dict(
                pairs
                    .iter()
                    .map(|(k, v)| (self.expr(k), self.expr(v)))
                    .collect(),
            ),
            ExprKind::TupleLit(_) => {
                self.error(
                    "E0102",
                    "tuple literal used as an expression: `{a, b}` is only a pattern".to_string(),
                    e.span,
                );
                Node::Nil
            }
            ExprKind::Match {
                receiver,
                exhaustive: _,
                arms,
            } => {
                let recv = self.expr(receiver);
                let arms = arms.iter().map(|a| self.arm(a)).collect();
                Node::Match(Box::new(MatchNode {
                    recv,
                    arms,
                    loc: self.loc(e.span),
                }))
            }
            ExprKind::Return(x) => {
                let v = self.expr(x);
                if self.in_block() {
                    Node::NlReturn(Box::new(v))
                } else {
                    Node::Return(Box::new(v))
                }
            }
            ExprKind::Error => Node::Nil,
        }
    }

    /// `x := x add: e` and friends on a collection held in `x`: the collection can be updated
    /// in place when nothing else shares it (collections' in-place rule).
    fn in_place(&mut self, name: &str, value: &Expr) -> Option<Node> {
        let ExprKind::Send {
            receiver,
            selector,
            args,
            ..
        } = &value.kind
        else {
            return None;
        };
        if selector == "++" {
            // `s := s ++ a ++ b`: a chain of concatenations starting at `s`.
            let mut parts = vec![&args[0]];
            let mut cur = &**receiver;
            while let ExprKind::Send {
                receiver: r,
                selector: sel,
                args: a,
                ..
            } = &cur.kind
            {
                if sel != "++" {
                    break;
                }
                parts.push(&a[0]);
                cur = r;
            }
            if !matches!(&cur.kind, ExprKind::Var(v) if v == name) {
                return None;
            }
            let id = self.lookup(name)?;
            parts.reverse();
            let args = parts.into_iter().map(|a| self.expr(a)).collect();
            return Some(Node::InPlace(Box::new(InPlaceNode {
                var: VarRef::Pending(id),
                sel: Sym::new("++"),
                name: "++",
                args,
                loc: self.loc(value.span),
            })));
        }
        if !IN_PLACE_SELECTORS.contains(&selector.as_str())
            || !matches!(&receiver.kind, ExprKind::Var(v) if v == name)
        {
            return None;
        }
        let id = self.lookup(name)?;
        let args = args.iter().map(|a| self.expr(a)).collect();
        Some(Node::InPlace(Box::new(InPlaceNode {
            var: VarRef::Pending(id),
            sel: Sym::new(selector),
            name: Sym::new(selector).as_str(),
            args,
            loc: self.loc(value.span),
        })))
    }

    fn field(&mut self, name: &str, value: Option<&Expr>, span: Span) -> Node {
        let sym = Sym::new(name);
        let loc = self.loc(span);
        if self.owner.class.is_none() && self.owner.fields.is_empty() && !self.owner.class_side {
            self.error(
                "E0308",
                format!("`self.{name}` used outside a method"),
                span,
            );
            return Node::Nil;
        }
        let recv = self.self_node();
        let value_node = value.map(|v| self.expr(v));
        if self.owner.class_side {
            if !self.owner.class_vars.contains(&sym) {
                self.error("E0308", format!("Undefined class variable: {name}"), span);
                return Node::Nil;
            }
            self.touches_class_state = true;
            return Node::Field(Box::new(FieldNode {
                name: sym,
                idx: 0,
                mode: FieldMode::ClassVar,
                recv,
                value: value_node,
                loc,
            }));
        }
        let idx = self.owner.fields.iter().position(|f| *f == sym);
        let mode = match self.owner.kind {
            ClassKind::Actor => FieldMode::Actor,
            ClassKind::Value if self.owner.is_testcase => FieldMode::Rebind,
            ClassKind::Value => {
                if value_node.is_some() {
                    let setter = crate::interp::class::Class::setter_name(name);
                    self.error(
                        "E0302",
                        format!("Cannot assign to field '{name}' of a value class: use `self {setter} v`"),
                        span,
                    );
                    return Node::Nil;
                }
                FieldMode::Value
            }
            ClassKind::Object => {
                self.error(
                    "E0308",
                    format!("Undefined field: {name} (object classes have no fields)"),
                    span,
                );
                return Node::Nil;
            }
        };
        if idx.is_none() && mode != FieldMode::Rebind {
            self.error("E0308", format!("Undefined field: {name}"), span);
            return Node::Nil;
        }
        Node::Field(Box::new(FieldNode {
            name: sym,
            idx: idx.unwrap_or(u32::MAX as usize) as u32,
            mode,
            recv,
            value: value_node,
            loc,
        }))
    }
}

/// The span of a send from its selector on (a send's location is its selector's).
fn at_selector(send: Span, selector: Span) -> Span {
    if selector.start >= send.start && selector.start <= send.end {
        Span {
            start: selector.start,
            end: send.end,
        }
    } else {
        send
    }
}
