//! The abstract syntax tree: what the parser produces and every later stage reads.
//!
//! Conventions: every node carries a byte [`Span`] into its source file; names and selectors are
//! inline strings ([`Name`]) here (the interpreter interns them when it lowers); recovery nodes
//! (`ExprKind::Error`, `Pattern::Error`) let later stages keep going after a syntax error.
//! Nothing in this module knows about values or evaluation.

use num_bigint::BigInt;

pub use crate::base::span::Span;

/// A name, selector or short literal text in the tree: a string stored inline up to 24 bytes,
/// so the usual identifier, selector and symbol cost no allocation (a 10-line config has ~30
/// of them); it dereferences to `str`.
pub type Name = compact_str::CompactString;

/// A declaration's `///` documentation: the lines' text after `///` and one space, trimmed
/// at the end, joined by newlines ([`Doc::text`]).
///
/// A built-in library file keeps it as the place of its lines in the `'static` text, read
/// when asked (two-thirds of the library's text is `///` lines, and a program reads almost
/// none of them); other sources keep the text.
#[derive(Clone)]
pub struct Doc(DocRepr);

#[derive(Clone)]
enum DocRepr {
    Text(String),
    /// `src[from..to]`: `///` lines with only whitespace between them.
    Lines {
        src: &'static str,
        from: u32,
        to: u32,
    },
}

impl Doc {
    /// A documentation text.
    pub fn new(text: String) -> Doc {
        Doc(DocRepr::Text(text))
    }

    /// The `///` lines of `src[from..to]`, which holds only those lines and whitespace
    /// between them (the caller checks).
    pub(crate) fn lines(src: &'static str, from: u32, to: u32) -> Doc {
        Doc(DocRepr::Lines { src, from, to })
    }

    /// Where the lines lie in their `'static` source, for a doc kept as its lines.
    pub(crate) fn place(&self) -> Option<(u32, u32)> {
        match self.0 {
            DocRepr::Text(_) => None,
            DocRepr::Lines { from, to, .. } => Some((from, to)),
        }
    }

    /// The text.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        match &self.0 {
            DocRepr::Text(t) => std::borrow::Cow::Borrowed(t),
            DocRepr::Lines { src, from, to } => {
                let region = &src[*from as usize..*to as usize];
                let mut text = String::with_capacity(region.len());
                let mut first = true;
                for line in region.split('\n') {
                    let line = line.trim_start();
                    let Some(body) = line.strip_prefix("///") else {
                        continue;
                    };
                    let body = body.strip_prefix(' ').unwrap_or(body);
                    if !first {
                        text.push('\n');
                    }
                    first = false;
                    text.push_str(body.trim_end());
                }
                std::borrow::Cow::Owned(text)
            }
        }
    }
}

impl PartialEq for Doc {
    fn eq(&self, other: &Doc) -> bool {
        self.text() == other.text()
    }
}

/// The text, as a string prints.
impl std::fmt::Debug for Doc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.text(), f)
    }
}

impl std::fmt::Display for Doc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}

/// A name with the place it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: Name,
    pub span: Span,
}

/// One parsed source file (or one REPL input / one expression of a `.btscript`).
#[derive(Clone, Debug, Default)]
pub struct Module {
    pub items: Vec<Item>,
}

/// A top-level item, in source order.
#[derive(Clone, Debug)]
pub enum Item {
    Class(ClassDecl),
    /// `Foo >> sel => body` / `Foo class >> sel => body`.
    Method(StandaloneMethod),
    Protocol(ProtocolDecl),
    TypeAlias(TypeAlias),
    /// A top-level statement (run after all declarations are installed).
    Stmt(Stmt),
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClassModifiers {
    pub is_abstract: bool,
    pub sealed: bool,
    pub typed: bool,
    pub internal: bool,
}

/// `[modifiers] Super[(Args)] subclass: Name[(Params)]` followed by indented members.
#[derive(Clone, Debug)]
pub struct ClassDecl {
    pub doc: Option<Doc>,
    pub modifiers: ClassModifiers,
    pub superclass: Ident,
    /// Type arguments given to the superclass: `DynamicSupervisor(Worker) subclass: Pool`.
    pub super_args: Vec<TypeExpr>,
    pub name: Ident,
    pub type_params: Vec<TypeParam>,
    /// `handleScope: #process | #node`.
    pub handle_scope: Option<Ident>,
    pub members: Vec<Member>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct TypeParam {
    pub name: Ident,
    pub bound: Option<TypeExpr>,
}

#[derive(Clone, Debug)]
pub enum Member {
    /// `field:` (Value classes).
    Field(SlotDecl),
    /// `state:` (Actor classes).
    State(SlotDecl),
    /// `classState:` (any class).
    ClassState(SlotDecl),
    Method(MethodDecl),
    /// `@expect category` on its own line at the member column: applies to the next member.
    Expect(Expect),
}

/// `field: name [:: Type] [= expr]` and its `state:` / `classState:` siblings.
#[derive(Clone, Debug)]
pub struct SlotDecl {
    pub doc: Option<Doc>,
    pub name: Ident,
    pub ty: Option<TypeExpr>,
    pub default: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: Ident,
    pub ty: Option<TypeExpr>,
}

/// A method: header `=>` body. Also used for standalone methods.
#[derive(Clone, Debug)]
pub struct MethodDecl {
    pub doc: Option<Doc>,
    pub class_side: bool,
    pub sealed: bool,
    pub internal: bool,
    /// The full selector: `increment`, `+`, `at:put:`.
    pub selector: Name,
    pub selector_span: Span,
    pub params: Vec<Param>,
    pub ret: Option<TypeExpr>,
    /// `=> @primitive name` (built-in library only): the body is bound to a Rust primitive.
    pub primitive: Option<Ident>,
    /// The statements (read through `Deref<Target = [Stmt]>`; a built-in library method's
    /// body is parsed on first read, see [`Body`]).
    pub body: Body,
    /// The whole method, header included.
    pub span: Span,
    /// The source text of the whole method (for `CompiledMethod source`): borrowed from the
    /// `'static` text of a built-in library file, a copy for other sources.
    pub source: std::borrow::Cow<'static, str>,
}

/// A method body: its statements, parsed with the declaration ([`Body::parsed`]) or, for
/// the built-in library (`syntax::parse_library`), on first read.
///
/// Why: `bt run` parsed the whole library (~190 KB) before running anything, and a program
/// runs a few dozen of its ~1,700 methods; the declarations (selectors, parameters, types,
/// docs, spans, source text) are what the checker's class table, the loader, `bt doc` and
/// reflection read. A lazy body keeps where its method's region lies in the `'static` library
/// source and parses it the first time anything dereferences it (lowering on the method's
/// first call, `bt parse --ast`, a checker walk), with the same tokens, fence and parser
/// state the whole-file parse would have had — so its statements and diagnostics are the ones
/// an eager parse gives (tests in `check::lazy_body_tests`). The body's own syntax errors are
/// then [`Body::errors`] (the lexer's are reported with the file, which is lexed whole).
#[derive(Clone, Default)]
pub struct Body {
    stmts: std::sync::OnceLock<Vec<Stmt>>,
    /// Boxed: a method declaration stays small (a class's members vector is grown by copying).
    lazy: Option<Box<dyn DeferredBody>>,
}

/// A method body not parsed yet: what [`Body`] calls to parse it on first read. The parser
/// implements it (`parser::LazyBody`); the tree only holds it, so this module names no part
/// of the parser.
pub(crate) trait DeferredBody: Send + Sync {
    /// Parses the body: its statements; its own syntax errors are then [`DeferredBody::errors`].
    fn parse(&self) -> Vec<Stmt>;
    /// The body's syntax errors, sorted by span (empty until [`DeferredBody::parse`] ran).
    fn errors(&self) -> &[crate::diagnostic::Diagnostic];
    /// A copy (for `Clone` on the tree).
    fn clone_box(&self) -> Box<dyn DeferredBody>;
    /// What it is (the library image writes its place: `syntax::image`).
    fn as_any(&self) -> &dyn std::any::Any;
}

impl Clone for Box<dyn DeferredBody> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

impl Body {
    /// A body parsed with its declaration.
    pub fn parsed(stmts: Vec<Stmt>) -> Body {
        let cell = std::sync::OnceLock::new();
        let _ = cell.set(stmts);
        Body {
            stmts: cell,
            lazy: None,
        }
    }

    /// A body parsed on first read.
    pub(crate) fn lazy(at: Box<dyn DeferredBody>) -> Body {
        Body {
            stmts: std::sync::OnceLock::new(),
            lazy: Some(at),
        }
    }

    /// The statements (parsed now if this body is lazy and not read yet).
    pub fn stmts(&self) -> &[Stmt] {
        self.stmts.get_or_init(|| match &self.lazy {
            Some(at) => at.parse(),
            None => Vec::new(),
        })
    }

    /// The syntax errors of a lazily parsed body (parsed now if needed); empty for a body
    /// parsed with its declaration, whose diagnostics came with the file's.
    pub fn errors(&self) -> &[crate::diagnostic::Diagnostic] {
        self.stmts();
        match &self.lazy {
            Some(at) => at.errors(),
            None => &[],
        }
    }

    /// The body parsed on first read, if it is one (parsed or not).
    pub(crate) fn deferred(&self) -> Option<&dyn DeferredBody> {
        self.lazy.as_deref()
    }

    /// Whether the body is lazy and has not been parsed yet (tests, statistics).
    pub fn is_pending(&self) -> bool {
        self.lazy.is_some() && self.stmts.get().is_none()
    }
}

/// The statements (parsing a lazy body), so that a tree prints the same however it was parsed.
impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.stmts()).finish()
    }
}

impl std::ops::Deref for Body {
    type Target = [Stmt];
    fn deref(&self) -> &[Stmt] {
        self.stmts()
    }
}

#[derive(Clone, Debug)]
pub struct StandaloneMethod {
    pub class_name: Ident,
    pub class_side: bool,
    pub method: MethodDecl,
}

/// `Protocol define: Name` with indented method signatures.
#[derive(Clone, Debug)]
pub struct ProtocolDecl {
    pub doc: Option<Doc>,
    pub name: Ident,
    pub extending: Option<Ident>,
    pub signatures: Vec<MethodSig>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct MethodSig {
    pub class_side: bool,
    pub selector: Name,
    pub params: Vec<Param>,
    pub ret: Option<TypeExpr>,
    pub span: Span,
}

/// `[internal] type Name = TypeExpr`.
#[derive(Clone, Debug)]
pub struct TypeAlias {
    pub doc: Option<Doc>,
    pub internal: bool,
    pub name: Ident,
    pub ty: TypeExpr,
    pub span: Span,
}

/// `@expect category`.
#[derive(Clone, Debug, PartialEq)]
pub struct Expect {
    pub category: Ident,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum StmtKind {
    Expr(Expr),
    /// `receiver message!` — the expression is the send to perform asynchronously.
    Cast(Expr),
    /// `@expect category` applying to the next statement.
    Expect(Expect),
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

/// One part of an interpolated string `"a {x} b"`.
#[derive(Clone, Debug)]
pub enum InterpPart {
    Lit(String),
    Expr(Expr),
}

#[derive(Clone, Debug)]
pub struct Block {
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
}

/// One message of a cascade: `; sel` or `; key: arg`.
#[derive(Clone, Debug)]
pub struct CascadePart {
    pub selector: Name,
    pub selector_span: Span,
    pub args: Vec<Expr>,
    pub span: Span,
}

impl Expr {
    /// Calls `f` on each direct sub-expression that runs where this one runs or in a block
    /// it holds (assigned and sent values, receivers and arguments, statements of nested
    /// blocks, literal elements, match arms and guards, interpolated parts).
    pub fn each_sub_expr<'a>(&'a self, mut f: impl FnMut(&'a Expr)) {
        match &self.kind {
            ExprKind::Assign { value, .. }
            | ExprKind::FieldAssign { value, .. }
            | ExprKind::Return(value)
            | ExprKind::Destructure { value, .. } => f(value),
            ExprKind::Send { receiver, args, .. } => {
                f(receiver);
                args.iter().for_each(f);
            }
            ExprKind::Cascade { receiver, parts } => {
                f(receiver);
                for p in parts {
                    p.args.iter().for_each(&mut f);
                }
            }
            ExprKind::Block(b) => {
                for s in &b.body {
                    if let StmtKind::Expr(x) | StmtKind::Cast(x) = &s.kind {
                        f(x);
                    }
                }
            }
            ExprKind::List(xs) | ExprKind::Array(xs) | ExprKind::TupleLit(xs) => {
                xs.iter().for_each(f)
            }
            ExprKind::ListCons { head, tail } => {
                f(head);
                f(tail);
            }
            ExprKind::Dict(pairs) => {
                for (k, v) in pairs {
                    f(k);
                    f(v);
                }
            }
            ExprKind::Match { receiver, arms, .. } => {
                f(receiver);
                for a in arms {
                    if let Some(g) = &a.guard {
                        f(g);
                    }
                    f(&a.body);
                }
            }
            ExprKind::Interp(parts) => {
                for p in parts {
                    if let InterpPart::Expr(x) = p {
                        f(x);
                    }
                }
            }
            _ => {}
        }
    }
}

#[derive(Clone, Debug)]
pub struct MatchArm {
    pub pattern: Pattern,
    pub guard: Option<Expr>,
    pub body: Expr,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Nil,
    True,
    False,
    SelfRef,
    Super,
    /// An integer literal that fits in i64.
    Int(i64),
    /// An integer literal beyond i64.
    BigInt(Box<BigInt>),
    Float(f64),
    Str(Name),
    /// A string with `{expr}` interpolation.
    Interp(Vec<InterpPart>),
    Char(char),
    /// `#foo`, `#at:put:`, `#+`, `#'a b'` — the symbol's name without `#`.
    Symbol(Name),
    /// A variable or class name.
    Var(Name),
    /// `self.name` (read).
    Field(Name),
    /// `x := e`, `x :: T := e` (the annotation is rare: boxed to keep `Expr` small).
    Assign {
        name: Ident,
        ty: Option<Box<TypeExpr>>,
        value: Box<Expr>,
    },
    /// `self.name := e`.
    FieldAssign {
        name: Ident,
        value: Box<Expr>,
    },
    /// `{a, b} := e`, `#[a, ...r] := e`, `#(a) := e`, `#{#k => v} := e`.
    Destructure {
        pattern: Box<Pattern>,
        value: Box<Expr>,
    },
    /// Unary, binary or keyword send.
    Send {
        receiver: Box<Expr>,
        selector: Name,
        selector_span: Span,
        args: Vec<Expr>,
    },
    /// `r m1; m2; m3`: `receiver` is the receiver of the first message; `parts[0]` is the first.
    Cascade {
        receiver: Box<Expr>,
        parts: Vec<CascadePart>,
    },
    Block(Box<Block>),
    /// `#(a, b)`.
    List(Vec<Expr>),
    /// `#(head | tail)`.
    ListCons {
        head: Box<Expr>,
        tail: Box<Expr>,
    },
    /// `#[a, b]`.
    Array(Vec<Expr>),
    /// `#{k => v}`.
    Dict(Vec<(Expr, Expr)>),
    /// `{a, b}` used as an expression: kept so the checker can report E0102.
    TupleLit(Vec<Expr>),
    /// `e match: [arms]` / `e matchExhaustive: [arms]`.
    Match {
        receiver: Box<Expr>,
        exhaustive: bool,
        arms: Vec<MatchArm>,
    },
    /// `^ e` (statement position and match-arm bodies).
    Return(Box<Expr>),
    /// A syntax error was reported here.
    Error,
}

/// A segment of a binary pattern `<<a:8, rest/binary>>`.
#[derive(Clone, Debug)]
pub struct BinSegment {
    pub value: BinSegValue,
    /// Size in bits (`:N`); None means the default for the type.
    pub size: Option<u32>,
    /// `/binary`, `/utf8`, `/little-signed` … in source order.
    pub modifiers: Vec<String>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum BinSegValue {
    Bind(Ident),
    Wildcard,
    Int(i64),
}

#[derive(Clone, Debug)]
pub enum Pattern {
    /// `_`
    Wildcard(Span),
    /// A literal (number, string, symbol, character); the expr is one of the literal kinds.
    Literal(Expr),
    /// `nil`
    Nil(Span),
    /// `x`
    Bind(Ident),
    /// `x :: Class` (`_ :: Class` binds nothing: name `_`).
    Typed {
        name: Ident,
        ty: TypeExpr,
    },
    /// `{p1, p2}`
    Tuple(Vec<Pattern>, Span),
    /// `#[p1, p2, ...rest]`
    Array {
        elems: Vec<Pattern>,
        rest: Option<Ident>,
        span: Span,
    },
    /// `#(p1, p2, ...rest)`
    List {
        elems: Vec<Pattern>,
        rest: Option<Ident>,
        span: Span,
    },
    /// `#{#k => p}` — keys are literal expressions.
    Dict(Vec<(Expr, Pattern)>, Span),
    /// `Result ok: p`
    ResultOk(Box<Pattern>, Span),
    /// `Result error: p`
    ResultError(Box<Pattern>, Span),
    /// `<<seg, …>>`
    Binary(Vec<BinSegment>, Span),
    Error(Span),
}

#[derive(Clone, Debug, PartialEq)]
pub struct TypeExpr {
    pub kind: TypeKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeKind {
    /// `Integer`, `List(Integer)`, `Dictionary(K, V)`, `Block(A, R)`, `Nil`, `Dynamic`, `T`.
    Named {
        name: Name,
        args: Vec<TypeExpr>,
    },
    /// `Self`
    SelfType,
    /// `Foo class`, `Self class`
    Meta(Box<TypeExpr>),
    /// `#sym` singleton
    Symbol(String),
    /// `nil`
    Nil,
    /// `false` / `true` as types
    False,
    True,
    Union(Vec<TypeExpr>),
    Inter(Vec<TypeExpr>),
    Diff(Box<TypeExpr>, Box<TypeExpr>),
    Error,
}

impl Pattern {
    pub fn span(&self) -> Span {
        match self {
            Pattern::Wildcard(s) | Pattern::Nil(s) | Pattern::Error(s) => *s,
            Pattern::Literal(e) => e.span,
            Pattern::Bind(i) => i.span,
            Pattern::Typed { name, ty } => name.span.to(ty.span),
            Pattern::Tuple(_, s)
            | Pattern::Dict(_, s)
            | Pattern::ResultOk(_, s)
            | Pattern::ResultError(_, s)
            | Pattern::Binary(_, s) => *s,
            Pattern::Array { span, .. } | Pattern::List { span, .. } => *span,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parser builds an `Expr` per node and the checker walks them: keep the node small
    /// (big, rare payloads are boxed).
    #[test]
    fn expr_stays_small() {
        eprintln!(
            "Expr {} ExprKind {} TypeExpr {} Pattern {}",
            std::mem::size_of::<Expr>(),
            std::mem::size_of::<ExprKind>(),
            std::mem::size_of::<TypeExpr>(),
            std::mem::size_of::<Pattern>()
        );
        assert!(std::mem::size_of::<Expr>() <= 72, "Expr grew past 72 bytes");
    }
}
