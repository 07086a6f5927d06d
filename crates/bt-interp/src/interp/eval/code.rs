//! The lowered form the evaluator walks.
//!
//! Locals are resolved to slots: a variable no inner block captures lives in a stack slot
//! (`VarRef::Local`); a captured one lives in a heap cell shared with the closures
//! (`VarRef::Cell` in the declaring activation, `VarRef::Upval` inside the blocks). Selectors are
//! interned. The literal blocks of the control-flow selectors are inlined into dedicated
//! nodes, so they add no activation. Big variants are boxed to keep [`Node`] small.

use std::sync::Arc;

use crate::value::{Sym, Value};

/// A source position: file id (index in the program's file table) and byte offset.
/// `file == NO_FILE` marks library code, whose sends are not reported as error locations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Loc {
    pub file: u32,
    pub pos: u32,
}

pub const NO_FILE: u32 = u32::MAX;

/// Where a variable lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarRef {
    /// A stack slot of the current activation.
    Local(u32),
    /// A cell owned by the current activation (captured by an inner block).
    Cell(u32),
    /// A cell captured from an enclosing activation.
    Upval(u32),
    /// Not yet resolved (only during lowering).
    Pending(u32),
}

/// How a closure obtains each captured cell when it is created.
#[derive(Clone, Copy, Debug)]
pub enum UpvalSrc {
    Cell(u32),
    Upval(u32),
}

/// A function body: a method, a block, a top-level unit or a field default.
#[derive(Debug, Default)]
pub struct FnCode {
    pub nparams: u32,
    /// Stack slots including the parameters (which come first).
    pub nslots: u32,
    pub ncells: u32,
    /// Parameters that are captured: (param slot, cell index); copied into cells on entry.
    pub param_cells: Vec<(u32, u32)>,
    pub upvals: Vec<UpvalSrc>,
    /// Where `self` lives when the method rebinds it (TestCase `self.x :=`).
    pub self_var: Option<VarRef>,
    /// Top-level units: the binding name of each cell (cells are session bindings).
    pub toplevel_names: Vec<Sym>,
    /// Top-level units: the bindings that live in a stack slot while the unit runs (slot,
    /// name), loaded from and stored back to the session (`Lowerer::toplevel`).
    pub toplevel_slots: Vec<(u32, Sym)>,
    /// The body as lowered (moved into `op`/`stmts` when compiled).
    pub body: Node,
    /// The compiled body.
    pub op: crate::interp::eval::compile::Op,
    /// A method body `local cmp literal ifTrue: [..] ifFalse: [..]`, which a self-send's
    /// activation runs inline (`op` runs the same guard).
    pub guard: Option<Arc<crate::interp::eval::compile::Guard>>,
    /// A top-level unit's statements, compiled one by one.
    pub stmts: Vec<crate::interp::eval::compile::Op>,
    /// A top-level unit (runs statement by statement).
    pub is_toplevel: bool,
    /// Lowering id (only meaningful while lowering).
    pub fid: u32,
    /// True when the body reads or writes class state (class methods: class-state atomicity).
    pub touches_class_state: bool,
    /// A class method of a class with class variables that does not touch them itself: the
    /// class-variable changes of the class methods of the same class it calls are discarded
    /// when it raises (`Ctx::run_class_state_scope`).
    pub class_state_scope: bool,
    /// `self_var`, `touches_class_state` or `class_state_scope` is set (the activation needs
    /// the slow path).
    pub special: bool,
    /// A method whose whole body is `self sel: arg` (e.g. `add: n => self withTotal: …`):
    /// `x := x add: n` may run just the argument and update an unshared `x` in place when
    /// `sel` is a Value-class setter (see `Ctx::send_owned`).
    pub tail_self_send: Option<crate::interp::eval::compile::TailSelfSend>,
    /// The file this code was lowered from (`Loc::file`; `NO_FILE` for library code).
    pub file: u32,
    /// On the root of a lowering (method, top-level unit, default): every real block in it,
    /// at any depth, sorted by `fid` (the block's ordinal in that source). The value codec
    /// uses it to name a block's code and find it again.
    pub blocks: Vec<Arc<FnCode>>,
    /// A field default made of literals only (constants, collection literals of them,
    /// blocks): evaluating it sends no message, so it may run outside any process (the
    /// node service's inline remote spawn, `crate::dist::service_ops`).
    pub sendless: bool,
}

/// One compiled method.
#[derive(Debug)]
pub struct CompiledMethod {
    pub selector: Sym,
    pub code: Arc<FnCode>,
    pub class_side: bool,
    pub source: String,
    pub doc: Option<String>,
    pub sealed: bool,
}

#[derive(Debug)]
pub struct SendNode {
    pub recv: Node,
    pub sel: Sym,
    pub args: Vec<Node>,
    pub loc: Loc,
    /// No argument assigns a variable: a local receiver may then be moved out of its slot for
    /// the duration of the send (no reference count traffic), since nothing else can see it.
    pub pure_args: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    StrictEq,
    StrictNe,
    Rem,
}

#[derive(Debug)]
pub struct BinNode {
    pub op: BinOp,
    pub lhs: Node,
    pub rhs: Node,
    pub sel: Sym,
    pub loc: Loc,
}

#[derive(Debug)]
pub struct CascadeNode {
    pub recv: Node,
    /// (selector, args, loc) of every part, first message first.
    pub parts: Vec<(Sym, Vec<Node>, Loc)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IfKind {
    IfTrue,
    IfFalse,
    IfTrueIfFalse,
    And,
    Or,
}

#[derive(Debug)]
pub struct IfNode {
    pub kind: IfKind,
    pub recv: Node,
    pub a: Node,
    pub b: Node,
    pub sel: Sym,
    pub loc: Loc,
}

#[derive(Debug)]
pub struct IfNilNode {
    pub recv: Node,
    /// Branch taken for nil (None: answer nil / the receiver as 5.11 says).
    pub if_nil: Option<Node>,
    /// Branch taken for non-nil, with the optional parameter bound to the receiver.
    pub if_not_nil: Option<(Option<VarRef>, Node)>,
}

#[derive(Debug)]
pub struct WhileNode {
    pub cond: Node,
    pub body: Node,
    pub while_true: bool,
    pub sel: Sym,
    pub loc: Loc,
}

#[derive(Debug)]
pub struct ToDoNode {
    pub from: Node,
    pub to: Node,
    pub by: Option<Node>,
    pub var: Option<VarRef>,
    pub body: Node,
    pub loc: Loc,
}

#[derive(Debug)]
pub struct TimesNode {
    pub count: Node,
    pub body: Node,
    pub loc: Loc,
}

/// How `self.name` is read/written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldMode {
    /// A Value instance's field (read only).
    Value,
    /// Rebinding copy of `self` (TestCase).
    Rebind,
    /// The running actor's state slot.
    Actor,
    /// A class variable (class-side methods).
    ClassVar,
}

#[derive(Debug)]
pub struct FieldNode {
    pub name: Sym,
    pub idx: u32,
    pub mode: FieldMode,
    /// The receiver (`self`, or the rebinding self variable).
    pub recv: Node,
    pub value: Option<Node>,
    pub loc: Loc,
}

#[derive(Debug)]
pub enum TypeTest {
    Any,
    Nil,
    Class(Sym),
    Union(Vec<TypeTest>),
}

#[derive(Debug)]
pub struct BinSeg {
    pub kind: BinSegKind,
    pub bits: u32,
    pub little: bool,
    pub signed: bool,
}

#[derive(Debug)]
pub enum BinSegKind {
    /// Integer segment bound to a variable (or `_` = None).
    Int(Option<(VarRef, bool)>),
    /// A literal integer segment.
    Lit(i64),
    /// The remaining bytes.
    Rest(Option<(VarRef, bool)>),
    /// One UTF-8 code point.
    Utf8(Option<(VarRef, bool)>),
}

/// A lowered pattern. `bool` in bindings: true on the first occurrence (binds), false on a
/// repeated occurrence (compares with `=:=`).
#[derive(Debug)]
pub enum Pat {
    Wild,
    Lit(Value),
    Nil,
    Bind(VarRef, bool),
    Typed(Option<(VarRef, bool)>, TypeTest),
    Tuple(Vec<Pat>),
    /// Elements and the `...rest` element: `None` without one, `Some(None)` for `..._`.
    Array(Vec<Pat>, Option<Option<(VarRef, bool)>>),
    List(Vec<Pat>, Option<Option<(VarRef, bool)>>),
    Dict(Vec<(Value, Pat)>),
    ResultOk(Box<Pat>),
    ResultErr(Box<Pat>),
    Binary(Vec<BinSeg>),
}

#[derive(Debug)]
pub struct Arm {
    pub pat: Pat,
    pub guard: Option<Node>,
    pub body: Node,
}

#[derive(Debug)]
pub struct MatchNode {
    pub recv: Node,
    pub arms: Vec<Arm>,
    pub loc: Loc,
}

/// `x := x sel: args` for an in-place-capable collection selector.
#[derive(Debug)]
pub struct InPlaceNode {
    pub var: VarRef,
    pub sel: Sym,
    /// The selector's name (looked up once, at lowering).
    pub name: &'static str,
    pub args: Vec<Node>,
    pub loc: Loc,
}

#[derive(Debug)]
pub enum InterpPart {
    Lit(String),
    Expr(Node),
}

#[derive(Debug, Default)]
pub enum Node {
    #[default]
    Nil,
    Const(Value),
    SelfRef,
    Var(VarRef),
    SetVar(VarRef, Box<Node>),
    /// A capitalised name resolved when the statement runs (class, `Transcript`).
    Global(Sym, Loc),
    Field(Box<FieldNode>),
    Send(Box<SendNode>),
    /// `super sel …`: the receiver node is `self` (or the rebinding self variable).
    Super(Box<SendNode>),
    /// A statement `recv msg!`.
    Cast(Box<SendNode>),
    Bin(Box<BinNode>),
    Cascade(Box<CascadeNode>),
    Block(Arc<FnCode>),
    List(Vec<Node>),
    Array(Vec<Node>),
    Dict(Vec<(Node, Node)>),
    Cons(Box<(Node, Node, Loc)>),
    Interp(Vec<InterpPart>),
    Seq(Vec<Node>),
    If(Box<IfNode>),
    IfNil(Box<IfNilNode>),
    While(Box<WhileNode>),
    Repeat(Box<Node>),
    ToDo(Box<ToDoNode>),
    Times(Box<TimesNode>),
    Match(Box<MatchNode>),
    Destructure(Box<(Pat, Node, Loc)>),
    /// `x := x add: e` (and the other in-place selectors) on a local collection.
    InPlace(Box<InPlaceNode>),
    /// `^ e` in a method body (or a top-level statement).
    Return(Box<Node>),
    /// `^ e` inside a block: returns from the home method if it is still running.
    NlReturn(Box<Node>),
}

impl FnCode {
    pub fn arity(&self) -> usize {
        self.nparams as usize
    }
}

/// The selectors `x := x sel: args` updates in place (`collections::in_place`).
pub(crate) const IN_PLACE_SELECTORS: &[&str] = &[
    "add:",
    "addFirst:",
    "at:put:",
    "removeKey:",
    "remove:",
    "add:withCount:",
    "enqueue:",
];

/// Number of arguments a selector takes (`foo` 0, `+` 1, `at:put:` 2).
pub fn sel_arity(sel: &str) -> usize {
    let colons = sel.bytes().filter(|b| *b == b':').count();
    if colons > 0 {
        colons
    } else if sel
        .bytes()
        .next()
        .map(|b| b.is_ascii_alphabetic() || b == b'_')
        .unwrap_or(false)
    {
        0
    } else {
        1
    }
}
