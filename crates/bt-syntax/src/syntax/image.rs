//! A compact binary image of a built-in library file's syntax tree, made at build time
//! ([`encode`]) and read at start-up instead of lexing and parsing the file ([`decode`]).
//!
//! The image holds every node of the tree as the library parse (`syntax::parse_library`)
//! made it: a lazy method body as the place of its region (parsed on first read as before,
//! `parser/lazy.rs`), a doc kept as its lines' place (`ast::Doc`), a method's source as its
//! range of the file's `'static` text. Integers are LEB128; the image starts with its strings (each once), and a string in the
//! tree is its range of them, so the whole is checked as UTF-8 once.
//! The reader trusts the image (the build script wrote it from the same source): a
//! malformed one panics. `check::library` tests that every library file's decoded tree is
//! the one a fresh parse makes.

use std::borrow::Cow;

use num_bigint::BigInt;

use super::ast::*;
use super::parser::lazy::LazyBody;

/// The image of `module`, parsed from `src` by `syntax::parse_library`.
pub fn encode(module: &Module, src: &str) -> Vec<u8> {
    let mut w = Writer {
        out: Vec::with_capacity(src.len() / 4),
        src,
        strings: String::new(),
        string_at: Default::default(),
    };
    module.items.put(&mut w);
    // The strings first, then the tree.
    let tree = std::mem::take(&mut w.out);
    w.uint(w.strings.len() as u64);
    let mut out = w.out;
    out.extend_from_slice(w.strings.as_bytes());
    out.extend_from_slice(&tree);
    out
}

/// The tree [`encode`] made the image of; `src` is the file it was parsed from.
pub fn decode(image: &[u8], src: &'static str) -> Module {
    let mut r = Reader {
        at: image,
        src,
        strings: "",
    };
    let n = r.uint() as usize;
    let (strings, tree) = r.at.split_at(n);
    r.strings = std::str::from_utf8(strings).expect("a library image's strings are UTF-8");
    r.at = tree;
    let items = Vec::get(&mut r);
    assert!(r.at.is_empty(), "a library image with bytes past its tree");
    Module { items }
}

struct Writer<'a> {
    out: Vec<u8>,
    src: &'a str,
    /// Every string of the tree once, in the order first written.
    strings: String,
    string_at: std::collections::HashMap<String, usize>,
}

struct Reader<'i> {
    at: &'i [u8],
    src: &'static str,
    /// The image's strings (each string of the tree is a range of them).
    strings: &'i str,
}

impl Writer<'_> {
    fn byte(&mut self, b: u8) {
        self.out.push(b);
    }

    fn uint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.out.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.out.push(v as u8);
    }

    fn int(&mut self, v: i64) {
        self.uint(((v << 1) ^ (v >> 63)) as u64);
    }

    /// Its place in the image's strings.
    fn str(&mut self, s: &str) {
        let at = match self.string_at.get(s) {
            Some(&at) => at,
            None => {
                let at = self.strings.len();
                self.strings.push_str(s);
                self.string_at.insert(s.to_string(), at);
                at
            }
        };
        self.uint(at as u64);
        self.uint(s.len() as u64);
    }

    /// Where `s` lies in the source, when it is a slice of it.
    fn place_in_src(&self, s: &str) -> Option<(u32, u32)> {
        let base = self.src.as_ptr() as usize;
        let at = s.as_ptr() as usize;
        (at >= base && at + s.len() <= base + self.src.len())
            .then(|| ((at - base) as u32, (at - base + s.len()) as u32))
    }
}

impl<'i> Reader<'i> {
    #[inline]
    fn byte(&mut self) -> u8 {
        let b = self.at[0];
        self.at = &self.at[1..];
        b
    }

    #[inline]
    fn uint(&mut self) -> u64 {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let b = self.byte();
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return v;
            }
            shift += 7;
        }
    }

    #[inline]
    fn u32(&mut self) -> u32 {
        self.uint() as u32
    }

    fn int(&mut self) -> i64 {
        let v = self.uint();
        ((v >> 1) as i64) ^ -((v & 1) as i64)
    }

    fn str(&mut self) -> &'i str {
        let at = self.uint() as usize;
        let n = self.uint() as usize;
        &self.strings[at..at + n]
    }

    fn src_range(&mut self) -> &'static str {
        let from = self.u32() as usize;
        let to = from + self.u32() as usize;
        &self.src[from..to]
    }
}

/// A part of the tree with an image.
trait Code: Sized {
    fn put(&self, w: &mut Writer);
    fn get(r: &mut Reader) -> Self;
}

impl<T: Code> Code for Vec<T> {
    fn put(&self, w: &mut Writer) {
        w.uint(self.len() as u64);
        for x in self {
            x.put(w);
        }
    }
    fn get(r: &mut Reader) -> Self {
        let n = r.uint() as usize;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(T::get(r));
        }
        v
    }
}

impl<T: Code> Code for Option<T> {
    fn put(&self, w: &mut Writer) {
        match self {
            None => w.byte(0),
            Some(x) => {
                w.byte(1);
                x.put(w);
            }
        }
    }
    fn get(r: &mut Reader) -> Self {
        match r.byte() {
            0 => None,
            _ => Some(T::get(r)),
        }
    }
}

impl<T: Code> Code for Box<T> {
    fn put(&self, w: &mut Writer) {
        (**self).put(w);
    }
    fn get(r: &mut Reader) -> Self {
        Box::new(T::get(r))
    }
}

impl<A: Code, B: Code> Code for (A, B) {
    fn put(&self, w: &mut Writer) {
        self.0.put(w);
        self.1.put(w);
    }
    fn get(r: &mut Reader) -> Self {
        let a = A::get(r);
        (a, B::get(r))
    }
}

impl Code for bool {
    fn put(&self, w: &mut Writer) {
        w.byte(u8::from(*self));
    }
    fn get(r: &mut Reader) -> Self {
        r.byte() != 0
    }
}

impl Code for u32 {
    fn put(&self, w: &mut Writer) {
        w.uint(u64::from(*self));
    }
    fn get(r: &mut Reader) -> Self {
        r.u32()
    }
}

impl Code for String {
    fn put(&self, w: &mut Writer) {
        w.str(self);
    }
    fn get(r: &mut Reader) -> Self {
        r.str().to_string()
    }
}

impl Code for Name {
    fn put(&self, w: &mut Writer) {
        w.str(self);
    }
    fn get(r: &mut Reader) -> Self {
        Name::new(r.str())
    }
}

/// Start, then length.
impl Code for Span {
    fn put(&self, w: &mut Writer) {
        w.uint(u64::from(self.start));
        w.uint(u64::from(self.end - self.start));
    }
    fn get(r: &mut Reader) -> Self {
        let start = r.u32();
        let end = start + r.u32();
        Span { start, end }
    }
}

impl Code for Ident {
    fn put(&self, w: &mut Writer) {
        self.name.put(w);
        self.span.put(w);
    }
    fn get(r: &mut Reader) -> Self {
        let name = Name::get(r);
        Ident {
            name,
            span: Span::get(r),
        }
    }
}

/// A doc kept as its lines: their place; another: its text.
impl Code for Doc {
    fn put(&self, w: &mut Writer) {
        match self.place() {
            Some((from, to)) => {
                w.byte(0);
                w.uint(u64::from(from));
                w.uint(u64::from(to - from));
            }
            None => {
                w.byte(1);
                w.str(&self.text());
            }
        }
    }
    fn get(r: &mut Reader) -> Self {
        match r.byte() {
            0 => {
                let from = r.u32();
                let to = from + r.u32();
                Doc::lines(r.src, from, to)
            }
            _ => Doc::new(r.str().to_string()),
        }
    }
}

impl Code for Item {
    fn put(&self, w: &mut Writer) {
        match self {
            Item::Class(c) => {
                w.byte(0);
                c.put(w);
            }
            Item::Method(m) => {
                w.byte(1);
                m.class_name.put(w);
                m.class_side.put(w);
                m.method.put(w);
            }
            Item::Protocol(p) => {
                w.byte(2);
                p.doc.put(w);
                p.name.put(w);
                p.extending.put(w);
                p.signatures.put(w);
                p.span.put(w);
            }
            Item::TypeAlias(a) => {
                w.byte(3);
                a.doc.put(w);
                a.internal.put(w);
                a.name.put(w);
                a.ty.put(w);
                a.span.put(w);
            }
            Item::Stmt(s) => {
                w.byte(4);
                s.put(w);
            }
        }
    }
    fn get(r: &mut Reader) -> Self {
        match r.byte() {
            0 => Item::Class(ClassDecl::get(r)),
            1 => Item::Method(StandaloneMethod {
                class_name: Code::get(r),
                class_side: Code::get(r),
                method: Code::get(r),
            }),
            2 => Item::Protocol(ProtocolDecl {
                doc: Code::get(r),
                name: Code::get(r),
                extending: Code::get(r),
                signatures: Code::get(r),
                span: Code::get(r),
            }),
            3 => Item::TypeAlias(TypeAlias {
                doc: Code::get(r),
                internal: Code::get(r),
                name: Code::get(r),
                ty: Code::get(r),
                span: Code::get(r),
            }),
            _ => Item::Stmt(Code::get(r)),
        }
    }
}

impl Code for ClassDecl {
    fn put(&self, w: &mut Writer) {
        self.doc.put(w);
        let m = &self.modifiers;
        w.byte(
            u8::from(m.is_abstract)
                | u8::from(m.sealed) << 1
                | u8::from(m.typed) << 2
                | u8::from(m.internal) << 3,
        );
        self.superclass.put(w);
        self.super_args.put(w);
        self.name.put(w);
        self.type_params.put(w);
        self.handle_scope.put(w);
        self.members.put(w);
        self.span.put(w);
    }
    fn get(r: &mut Reader) -> Self {
        let doc = Code::get(r);
        let m = r.byte();
        ClassDecl {
            doc,
            modifiers: ClassModifiers {
                is_abstract: m & 1 != 0,
                sealed: m & 2 != 0,
                typed: m & 4 != 0,
                internal: m & 8 != 0,
            },
            superclass: Code::get(r),
            super_args: Code::get(r),
            name: Code::get(r),
            type_params: Code::get(r),
            handle_scope: Code::get(r),
            members: Code::get(r),
            span: Code::get(r),
        }
    }
}

impl Code for TypeParam {
    fn put(&self, w: &mut Writer) {
        self.name.put(w);
        self.bound.put(w);
    }
    fn get(r: &mut Reader) -> Self {
        TypeParam {
            name: Code::get(r),
            bound: Code::get(r),
        }
    }
}

impl Code for Member {
    fn put(&self, w: &mut Writer) {
        match self {
            Member::Field(s) => {
                w.byte(0);
                s.put(w);
            }
            Member::State(s) => {
                w.byte(1);
                s.put(w);
            }
            Member::ClassState(s) => {
                w.byte(2);
                s.put(w);
            }
            Member::Method(m) => {
                w.byte(3);
                m.put(w);
            }
            Member::Expect(e) => {
                w.byte(4);
                e.put(w);
            }
        }
    }
    fn get(r: &mut Reader) -> Self {
        match r.byte() {
            0 => Member::Field(Code::get(r)),
            1 => Member::State(Code::get(r)),
            2 => Member::ClassState(Code::get(r)),
            3 => Member::Method(Code::get(r)),
            _ => Member::Expect(Code::get(r)),
        }
    }
}

impl Code for SlotDecl {
    fn put(&self, w: &mut Writer) {
        self.doc.put(w);
        self.name.put(w);
        self.ty.put(w);
        self.default.put(w);
        self.span.put(w);
    }
    fn get(r: &mut Reader) -> Self {
        SlotDecl {
            doc: Code::get(r),
            name: Code::get(r),
            ty: Code::get(r),
            default: Code::get(r),
            span: Code::get(r),
        }
    }
}

impl Code for Param {
    fn put(&self, w: &mut Writer) {
        self.name.put(w);
        self.ty.put(w);
    }
    fn get(r: &mut Reader) -> Self {
        Param {
            name: Code::get(r),
            ty: Code::get(r),
        }
    }
}

impl Code for MethodDecl {
    fn put(&self, w: &mut Writer) {
        self.doc.put(w);
        w.byte(
            u8::from(self.class_side) | u8::from(self.sealed) << 1 | u8::from(self.internal) << 2,
        );
        self.selector.put(w);
        self.selector_span.put(w);
        self.params.put(w);
        self.ret.put(w);
        self.primitive.put(w);
        self.body.put(w);
        self.span.put(w);
        match w.place_in_src(&self.source) {
            Some((from, to)) if matches!(self.source, Cow::Borrowed(_)) => {
                w.byte(0);
                w.uint(u64::from(from));
                w.uint(u64::from(to - from));
            }
            _ => {
                w.byte(1);
                w.str(&self.source);
            }
        }
    }
    fn get(r: &mut Reader) -> Self {
        let doc = Code::get(r);
        let flags = r.byte();
        MethodDecl {
            doc,
            class_side: flags & 1 != 0,
            sealed: flags & 2 != 0,
            internal: flags & 4 != 0,
            selector: Code::get(r),
            selector_span: Code::get(r),
            params: Code::get(r),
            ret: Code::get(r),
            primitive: Code::get(r),
            body: Code::get(r),
            span: Code::get(r),
            source: match r.byte() {
                0 => Cow::Borrowed(r.src_range()),
                _ => Cow::Owned(r.str().to_string()),
            },
        }
    }
}

/// A lazy body: the place of its region (`parser::lazy::LazyBody`); another: its statements.
impl Code for Body {
    fn put(&self, w: &mut Writer) {
        let lazy = self
            .deferred()
            .and_then(|d| d.as_any().downcast_ref::<LazyBody>());
        match lazy {
            Some(l) => {
                w.byte(0);
                w.byte(u8::from(l.allow_primitives) | u8::from(l.first_on_line) << 1);
                w.uint(u64::from(l.from));
                w.uint(u64::from(l.from - l.line_start));
                w.uint(u64::from(l.lex_end - l.from));
                for v in [l.skip, l.fence_col, l.depth] {
                    w.uint(u64::from(v));
                }
                l.arrow.put(w);
            }
            None => {
                w.byte(1);
                self.stmts().to_vec().put(w);
            }
        }
    }
    fn get(r: &mut Reader) -> Self {
        match r.byte() {
            0 => {
                let flags = r.byte();
                let from = r.u32();
                let line_start = from - r.u32();
                let lex_end = from + r.u32();
                Body::lazy(Box::new(LazyBody {
                    src: r.src,
                    allow_primitives: flags & 1 != 0,
                    first_on_line: flags & 2 != 0,
                    from,
                    line_start,
                    lex_end,
                    skip: r.u32(),
                    fence_col: r.u32(),
                    depth: r.u32(),
                    arrow: Code::get(r),
                    errors: std::sync::OnceLock::new(),
                }))
            }
            _ => Body::parsed(Code::get(r)),
        }
    }
}

impl Code for MethodSig {
    fn put(&self, w: &mut Writer) {
        self.class_side.put(w);
        self.selector.put(w);
        self.params.put(w);
        self.ret.put(w);
        self.span.put(w);
    }
    fn get(r: &mut Reader) -> Self {
        MethodSig {
            class_side: Code::get(r),
            selector: Code::get(r),
            params: Code::get(r),
            ret: Code::get(r),
            span: Code::get(r),
        }
    }
}

impl Code for Expect {
    fn put(&self, w: &mut Writer) {
        self.category.put(w);
        self.span.put(w);
    }
    fn get(r: &mut Reader) -> Self {
        Expect {
            category: Code::get(r),
            span: Code::get(r),
        }
    }
}

impl Code for Stmt {
    fn put(&self, w: &mut Writer) {
        match &self.kind {
            StmtKind::Expr(e) => {
                w.byte(0);
                e.put(w);
            }
            StmtKind::Cast(e) => {
                w.byte(1);
                e.put(w);
            }
            StmtKind::Expect(e) => {
                w.byte(2);
                e.put(w);
            }
        }
        self.span.put(w);
    }
    fn get(r: &mut Reader) -> Self {
        let kind = match r.byte() {
            0 => StmtKind::Expr(Code::get(r)),
            1 => StmtKind::Cast(Code::get(r)),
            _ => StmtKind::Expect(Code::get(r)),
        };
        Stmt {
            kind,
            span: Code::get(r),
        }
    }
}

impl Code for InterpPart {
    fn put(&self, w: &mut Writer) {
        match self {
            InterpPart::Lit(s) => {
                w.byte(0);
                s.put(w);
            }
            InterpPart::Expr(e) => {
                w.byte(1);
                e.put(w);
            }
        }
    }
    fn get(r: &mut Reader) -> Self {
        match r.byte() {
            0 => InterpPart::Lit(Code::get(r)),
            _ => InterpPart::Expr(Code::get(r)),
        }
    }
}

impl Code for Block {
    fn put(&self, w: &mut Writer) {
        self.params.put(w);
        self.body.put(w);
    }
    fn get(r: &mut Reader) -> Self {
        Block {
            params: Code::get(r),
            body: Code::get(r),
        }
    }
}

impl Code for CascadePart {
    fn put(&self, w: &mut Writer) {
        self.selector.put(w);
        self.selector_span.put(w);
        self.args.put(w);
        self.span.put(w);
    }
    fn get(r: &mut Reader) -> Self {
        CascadePart {
            selector: Code::get(r),
            selector_span: Code::get(r),
            args: Code::get(r),
            span: Code::get(r),
        }
    }
}

impl Code for MatchArm {
    fn put(&self, w: &mut Writer) {
        self.pattern.put(w);
        self.guard.put(w);
        self.body.put(w);
        self.span.put(w);
    }
    fn get(r: &mut Reader) -> Self {
        MatchArm {
            pattern: Code::get(r),
            guard: Code::get(r),
            body: Code::get(r),
            span: Code::get(r),
        }
    }
}

impl Code for Expr {
    fn put(&self, w: &mut Writer) {
        match &self.kind {
            ExprKind::Nil => w.byte(0),
            ExprKind::True => w.byte(1),
            ExprKind::False => w.byte(2),
            ExprKind::SelfRef => w.byte(3),
            ExprKind::Super => w.byte(4),
            ExprKind::Int(i) => {
                w.byte(5);
                w.int(*i);
            }
            ExprKind::BigInt(b) => {
                w.byte(6);
                let bytes = b.to_signed_bytes_le();
                w.uint(bytes.len() as u64);
                w.out.extend_from_slice(&bytes);
            }
            ExprKind::Float(f) => {
                w.byte(7);
                w.out.extend_from_slice(&f.to_bits().to_le_bytes());
            }
            ExprKind::Str(s) => {
                w.byte(8);
                s.put(w);
            }
            ExprKind::Interp(parts) => {
                w.byte(9);
                parts.put(w);
            }
            ExprKind::Char(c) => {
                w.byte(10);
                w.uint(u64::from(*c));
            }
            ExprKind::Symbol(s) => {
                w.byte(11);
                s.put(w);
            }
            ExprKind::Var(s) => {
                w.byte(12);
                s.put(w);
            }
            ExprKind::Field(s) => {
                w.byte(13);
                s.put(w);
            }
            ExprKind::Assign { name, ty, value } => {
                w.byte(14);
                name.put(w);
                ty.put(w);
                value.put(w);
            }
            ExprKind::FieldAssign { name, value } => {
                w.byte(15);
                name.put(w);
                value.put(w);
            }
            ExprKind::Destructure { pattern, value } => {
                w.byte(16);
                pattern.put(w);
                value.put(w);
            }
            ExprKind::Send {
                receiver,
                selector,
                selector_span,
                args,
            } => {
                w.byte(17);
                receiver.put(w);
                selector.put(w);
                selector_span.put(w);
                args.put(w);
            }
            ExprKind::Cascade { receiver, parts } => {
                w.byte(18);
                receiver.put(w);
                parts.put(w);
            }
            ExprKind::Block(b) => {
                w.byte(19);
                b.put(w);
            }
            ExprKind::List(v) => {
                w.byte(20);
                v.put(w);
            }
            ExprKind::ListCons { head, tail } => {
                w.byte(21);
                head.put(w);
                tail.put(w);
            }
            ExprKind::Array(v) => {
                w.byte(22);
                v.put(w);
            }
            ExprKind::Dict(v) => {
                w.byte(23);
                v.put(w);
            }
            ExprKind::TupleLit(v) => {
                w.byte(24);
                v.put(w);
            }
            ExprKind::Match {
                receiver,
                exhaustive,
                arms,
            } => {
                w.byte(25);
                receiver.put(w);
                exhaustive.put(w);
                arms.put(w);
            }
            ExprKind::Return(e) => {
                w.byte(26);
                e.put(w);
            }
            ExprKind::Error => w.byte(27),
        }
        self.span.put(w);
    }
    fn get(r: &mut Reader) -> Self {
        let kind = match r.byte() {
            0 => ExprKind::Nil,
            1 => ExprKind::True,
            2 => ExprKind::False,
            3 => ExprKind::SelfRef,
            4 => ExprKind::Super,
            5 => ExprKind::Int(r.int()),
            6 => {
                let n = r.uint() as usize;
                let (bytes, rest) = r.at.split_at(n);
                r.at = rest;
                ExprKind::BigInt(Box::new(BigInt::from_signed_bytes_le(bytes)))
            }
            7 => {
                let (bytes, rest) = r.at.split_at(8);
                r.at = rest;
                let bits = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
                ExprKind::Float(f64::from_bits(bits))
            }
            8 => ExprKind::Str(Code::get(r)),
            9 => ExprKind::Interp(Code::get(r)),
            10 => ExprKind::Char(char::from_u32(r.u32()).expect("a character")),
            11 => ExprKind::Symbol(Code::get(r)),
            12 => ExprKind::Var(Code::get(r)),
            13 => ExprKind::Field(Code::get(r)),
            14 => ExprKind::Assign {
                name: Code::get(r),
                ty: Code::get(r),
                value: Code::get(r),
            },
            15 => ExprKind::FieldAssign {
                name: Code::get(r),
                value: Code::get(r),
            },
            16 => ExprKind::Destructure {
                pattern: Code::get(r),
                value: Code::get(r),
            },
            17 => ExprKind::Send {
                receiver: Code::get(r),
                selector: Code::get(r),
                selector_span: Code::get(r),
                args: Code::get(r),
            },
            18 => ExprKind::Cascade {
                receiver: Code::get(r),
                parts: Code::get(r),
            },
            19 => ExprKind::Block(Code::get(r)),
            20 => ExprKind::List(Code::get(r)),
            21 => ExprKind::ListCons {
                head: Code::get(r),
                tail: Code::get(r),
            },
            22 => ExprKind::Array(Code::get(r)),
            23 => ExprKind::Dict(Code::get(r)),
            24 => ExprKind::TupleLit(Code::get(r)),
            25 => ExprKind::Match {
                receiver: Code::get(r),
                exhaustive: Code::get(r),
                arms: Code::get(r),
            },
            26 => ExprKind::Return(Code::get(r)),
            _ => ExprKind::Error,
        };
        Expr {
            kind,
            span: Code::get(r),
        }
    }
}

impl Code for BinSegment {
    fn put(&self, w: &mut Writer) {
        match &self.value {
            BinSegValue::Bind(i) => {
                w.byte(0);
                i.put(w);
            }
            BinSegValue::Wildcard => w.byte(1),
            BinSegValue::Int(v) => {
                w.byte(2);
                w.int(*v);
            }
        }
        self.size.put(w);
        self.modifiers.put(w);
        self.span.put(w);
    }
    fn get(r: &mut Reader) -> Self {
        let value = match r.byte() {
            0 => BinSegValue::Bind(Code::get(r)),
            1 => BinSegValue::Wildcard,
            _ => BinSegValue::Int(r.int()),
        };
        BinSegment {
            value,
            size: Code::get(r),
            modifiers: Code::get(r),
            span: Code::get(r),
        }
    }
}

impl Code for Pattern {
    fn put(&self, w: &mut Writer) {
        match self {
            Pattern::Wildcard(s) => {
                w.byte(0);
                s.put(w);
            }
            Pattern::Literal(e) => {
                w.byte(1);
                e.put(w);
            }
            Pattern::Nil(s) => {
                w.byte(2);
                s.put(w);
            }
            Pattern::Bind(i) => {
                w.byte(3);
                i.put(w);
            }
            Pattern::Typed { name, ty } => {
                w.byte(4);
                name.put(w);
                ty.put(w);
            }
            Pattern::Tuple(v, s) => {
                w.byte(5);
                v.put(w);
                s.put(w);
            }
            Pattern::Array { elems, rest, span } => {
                w.byte(6);
                elems.put(w);
                rest.put(w);
                span.put(w);
            }
            Pattern::List { elems, rest, span } => {
                w.byte(7);
                elems.put(w);
                rest.put(w);
                span.put(w);
            }
            Pattern::Dict(v, s) => {
                w.byte(8);
                v.put(w);
                s.put(w);
            }
            Pattern::ResultOk(p, s) => {
                w.byte(9);
                p.put(w);
                s.put(w);
            }
            Pattern::ResultError(p, s) => {
                w.byte(10);
                p.put(w);
                s.put(w);
            }
            Pattern::Binary(v, s) => {
                w.byte(11);
                v.put(w);
                s.put(w);
            }
            Pattern::Error(s) => {
                w.byte(12);
                s.put(w);
            }
        }
    }
    fn get(r: &mut Reader) -> Self {
        match r.byte() {
            0 => Pattern::Wildcard(Code::get(r)),
            1 => Pattern::Literal(Code::get(r)),
            2 => Pattern::Nil(Code::get(r)),
            3 => Pattern::Bind(Code::get(r)),
            4 => Pattern::Typed {
                name: Code::get(r),
                ty: Code::get(r),
            },
            5 => {
                let v = Code::get(r);
                Pattern::Tuple(v, Code::get(r))
            }
            6 => Pattern::Array {
                elems: Code::get(r),
                rest: Code::get(r),
                span: Code::get(r),
            },
            7 => Pattern::List {
                elems: Code::get(r),
                rest: Code::get(r),
                span: Code::get(r),
            },
            8 => {
                let v = Code::get(r);
                Pattern::Dict(v, Code::get(r))
            }
            9 => {
                let p = Code::get(r);
                Pattern::ResultOk(p, Code::get(r))
            }
            10 => {
                let p = Code::get(r);
                Pattern::ResultError(p, Code::get(r))
            }
            11 => {
                let v = Code::get(r);
                Pattern::Binary(v, Code::get(r))
            }
            _ => Pattern::Error(Code::get(r)),
        }
    }
}

impl Code for TypeExpr {
    fn put(&self, w: &mut Writer) {
        match &self.kind {
            TypeKind::Named { name, args } => {
                w.byte(0);
                name.put(w);
                args.put(w);
            }
            TypeKind::SelfType => w.byte(1),
            TypeKind::Meta(t) => {
                w.byte(2);
                t.put(w);
            }
            TypeKind::Symbol(s) => {
                w.byte(3);
                s.put(w);
            }
            TypeKind::Nil => w.byte(4),
            TypeKind::False => w.byte(5),
            TypeKind::True => w.byte(6),
            TypeKind::Union(v) => {
                w.byte(7);
                v.put(w);
            }
            TypeKind::Inter(v) => {
                w.byte(8);
                v.put(w);
            }
            TypeKind::Diff(a, b) => {
                w.byte(9);
                a.put(w);
                b.put(w);
            }
            TypeKind::Error => w.byte(10),
        }
        self.span.put(w);
    }
    fn get(r: &mut Reader) -> Self {
        let kind = match r.byte() {
            0 => TypeKind::Named {
                name: Code::get(r),
                args: Code::get(r),
            },
            1 => TypeKind::SelfType,
            2 => TypeKind::Meta(Code::get(r)),
            3 => TypeKind::Symbol(Code::get(r)),
            4 => TypeKind::Nil,
            5 => TypeKind::False,
            6 => TypeKind::True,
            7 => TypeKind::Union(Code::get(r)),
            8 => TypeKind::Inter(Code::get(r)),
            9 => {
                let a = Code::get(r);
                TypeKind::Diff(a, Code::get(r))
            }
            _ => TypeKind::Error,
        };
        TypeExpr {
            kind,
            span: Code::get(r),
        }
    }
}
