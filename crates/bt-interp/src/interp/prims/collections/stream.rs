//! The lazy Stream: a source (`Stream from: n`, `from:by:`, `on:`)
//! plus a chain of pending steps (`select:`, `collect:`, `reject:`, `drop:`), each answering a
//! new Stream. Nothing runs until a terminal operation (`take:`, `do:`, `inject:into:`,
//! `detect:`, `asList`, …) pulls elements one at a time, so infinite sources work as long as
//! the terminal stops. A Stream is a [`NativeObj`] of class Stream, equal only to itself.

use std::any::Any;

use crate::interp::error::ErrorKind;
use crate::interp::eval::charge::{BUILT_EVERY, ELEM};
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::print::simple_print;
use crate::value::{ClassRef, Native, NativeObj, Ref, Value};

use super::common::{arg, count_arg, elems, expected, test1};
use super::generic::{add, not_found};

pub fn register(p: &mut Prims) {
    let c = "Stream";
    p.add_class(c, "from:", class_from);
    p.add_class(c, "from:by:", class_from_by);
    p.add_class(c, "on:", class_on);
    p.add(c, "select:", select);
    p.add(c, "collect:", collect);
    p.add(c, "reject:", reject);
    p.add(c, "drop:", drop);
    p.add(c, "take:", take);
    p.add(c, "do:", do_);
    p.add(c, "inject:into:", inject_into);
    p.add(c, "detect:", detect);
    p.add(c, "detect:ifNone:", detect_if_none);
    p.add(c, "asList", as_list);
    p.add(c, "anySatisfy:", any_satisfy);
    p.add(c, "allSatisfy:", all_satisfy);
    p.add("String", "stream", string_stream);
}

/// Where a Stream's elements come from.
#[derive(Clone)]
enum Source {
    /// `from: n` — n, n+1, n+2, …
    From(Value),
    /// `from: n by: aBlock` — n, aBlock(n), aBlock(aBlock(n)), …
    FromBy(Value, Value),
    /// `on: aCollection` (a String is kept as it is and read a grapheme at a time).
    On(Value, OnKind),
    /// Defined elsewhere (a file's lines, `prims::file`): each traversal opens it afresh.
    External(std::sync::Arc<dyn ExternalSource>),
}

/// A Stream source outside the collections, e.g. the lines of a file read lazily. A traversal
/// (`do:`, `take:`, `asList` …) calls `open` once and pulls elements until `None`; an error
/// raises in the traversing process.
pub(crate) trait ExternalSource: Send + Sync {
    fn open(&self, ctx: &mut Ctx) -> Result<Box<dyn ExternalCursor>, Unwind>;
    /// What printString shows inside `Stream(…)`.
    fn describe(&self) -> String;
}

/// One traversal of an [`ExternalSource`].
pub(crate) trait ExternalCursor: Send {
    fn next(&mut self, ctx: &mut Ctx) -> Result<Option<Value>, Unwind>;
}

/// A Stream over an external source.
pub(crate) fn stream_external(ctx: &Ctx, src: std::sync::Arc<dyn ExternalSource>) -> EvalResult {
    make(ctx, Source::External(src), Vec::new())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum OnKind {
    Sequence,
    Text,
    Set,
}

/// A pending lazy step.
#[derive(Clone)]
enum Op {
    Select(Value),
    Collect(Value),
    Reject(Value),
    Drop(usize),
}

/// A Stream value.
pub struct StreamObj {
    class: ClassRef,
    source: Source,
    ops: Vec<Op>,
}

impl NativeObj for StreamObj {
    fn class(&self) -> ClassRef {
        self.class.clone()
    }
    fn print_string(&self) -> String {
        let mut s = match &self.source {
            Source::From(n) => {
                format!(
                    "Stream(from: {})",
                    simple_print(n).unwrap_or_else(|| "...".into())
                )
            }
            Source::FromBy(n, _) => format!(
                "Stream(from: {} by: [...])",
                simple_print(n).unwrap_or_else(|| "...".into())
            ),
            Source::On(_, OnKind::Sequence) => "Stream(on: [...])".to_string(),
            Source::On(_, OnKind::Text) => "Stream(on: '...')".to_string(),
            Source::On(_, OnKind::Set) => "Stream(on: Set(...))".to_string(),
            Source::External(x) => format!("Stream({})", x.describe()),
        };
        for op in &self.ops {
            match op {
                Op::Select(_) => s.push_str(" | select: [...]"),
                Op::Collect(_) => s.push_str(" | collect: [...]"),
                Op::Reject(_) => s.push_str(" | reject: [...]"),
                Op::Drop(n) => s.push_str(&format!(" | drop: {n}")),
            }
        }
        s
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        other
            .as_any()
            .downcast_ref::<StreamObj>()
            .is_some_and(|o| std::ptr::eq(self, o))
    }
    fn hash_code(&self) -> u64 {
        self as *const StreamObj as usize as u64
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        (9, vec![self.hash_code()])
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A Stream taken apart for the value codec:
/// source tag (0 `from:`, 1 `from:by:`, 2 `on:` a sequence, 3 `on:` a String's graphemes,
/// 4 `on:` a Set) with its values, then the steps (0 select, 1 collect, 2 reject, 3 drop).
pub struct StreamParts {
    pub source: u8,
    pub values: Vec<Value>,
    pub steps: Vec<(u8, Value)>,
}

impl StreamObj {
    pub fn parts(&self) -> StreamParts {
        let (source, values) = match &self.source {
            Source::From(n) => (0, vec![n.clone()]),
            Source::FromBy(n, b) => (1, vec![n.clone(), b.clone()]),
            Source::On(c, OnKind::Sequence) => (2, vec![c.clone()]),
            Source::On(c, OnKind::Text) => (3, vec![c.clone()]),
            Source::On(c, OnKind::Set) => (4, vec![c.clone()]),
            // Not transferable: `from_parts` rejects tag 5.
            Source::External(_) => (5, Vec::new()),
        };
        let steps = self
            .ops
            .iter()
            .map(|op| match op {
                Op::Select(b) => (0, b.clone()),
                Op::Collect(b) => (1, b.clone()),
                Op::Reject(b) => (2, b.clone()),
                Op::Drop(n) => (3, Value::Int(*n as i64)),
            })
            .collect();
        StreamParts {
            source,
            values,
            steps,
        }
    }

    /// The inverse of [`StreamObj::parts`]; None when the parts are malformed.
    pub fn from_parts(class: ClassRef, p: StreamParts) -> Option<StreamObj> {
        let mut vals = p.values.into_iter();
        let source = match p.source {
            0 => Source::From(vals.next()?),
            1 => Source::FromBy(vals.next()?, vals.next()?),
            2 => Source::On(vals.next()?, OnKind::Sequence),
            3 => Source::On(vals.next()?, OnKind::Text),
            4 => Source::On(vals.next()?, OnKind::Set),
            _ => return None,
        };
        let mut ops = Vec::with_capacity(p.steps.len());
        for (tag, v) in p.steps {
            ops.push(match tag {
                0 => Op::Select(v),
                1 => Op::Collect(v),
                2 => Op::Reject(v),
                3 => Op::Drop(usize::try_from(v.as_int()?).ok()?),
                _ => return None,
            });
        }
        Some(StreamObj { class, source, ops })
    }
}

fn make(ctx: &Ctx, source: Source, ops: Vec<Op>) -> EvalResult {
    let class = ctx
        .class_named("Stream")
        .ok_or_else(|| ctx.err(ErrorKind::ClassNotFound, "Class 'Stream' not found"))?;
    Ok(Value::Native(Ref::new(Native(Box::new(StreamObj {
        class,
        source,
        ops,
    })))))
}

/// `Stream on: aCollection` / `aCollection stream`: Lists, Arrays, Intervals, Strings, Sets
/// (and the other built-in collections except Dictionary, which raises `type_error`).
pub(crate) fn stream_on(ctx: &mut Ctx, coll: &Value) -> EvalResult {
    let (src, kind) = match coll {
        // The String itself: a traversal reads its graphemes one at a time.
        Value::Str(_) => (coll.clone(), OnKind::Text),
        Value::Set(_) => (coll.clone(), OnKind::Set),
        Value::Dict(_) => return Err(ctx.type_err("a Dictionary cannot be streamed")),
        v if elems(v).is_some() => (coll.clone(), OnKind::Sequence),
        v => return Err(expected(ctx, "on:", "a collection", v)),
    };
    make(ctx, Source::On(src, kind), Vec::new())
}

fn class_from(ctx: &mut Ctx, _: &Value, args: &[Value]) -> EvalResult {
    make(ctx, Source::From(arg(args, 0).clone()), Vec::new())
}

fn class_from_by(ctx: &mut Ctx, _: &Value, args: &[Value]) -> EvalResult {
    make(
        ctx,
        Source::FromBy(arg(args, 0).clone(), arg(args, 1).clone()),
        Vec::new(),
    )
}

fn class_on(ctx: &mut Ctx, _: &Value, args: &[Value]) -> EvalResult {
    stream_on(ctx, arg(args, 0))
}

fn string_stream(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    stream_on(ctx, recv)
}

fn stream_of<'a>(ctx: &Ctx, sel: &str, v: &'a Value) -> Result<&'a StreamObj, Unwind> {
    match v {
        Value::Native(n) => n.0.as_any().downcast_ref::<StreamObj>(),
        _ => None,
    }
    .ok_or_else(|| expected(ctx, sel, "a Stream", v))
}

fn with_op(ctx: &mut Ctx, sel: &str, recv: &Value, op: Op) -> EvalResult {
    let s = stream_of(ctx, sel, recv)?;
    let mut ops = s.ops.clone();
    ops.push(op);
    make(ctx, s.source.clone(), ops)
}

fn select(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    with_op(ctx, "select:", recv, Op::Select(arg(args, 0).clone()))
}

fn collect(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    with_op(ctx, "collect:", recv, Op::Collect(arg(args, 0).clone()))
}

fn reject(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    with_op(ctx, "reject:", recv, Op::Reject(arg(args, 0).clone()))
}

fn drop(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let n = count_arg(ctx, "drop:", arg(args, 0))?;
    with_op(ctx, "drop:", recv, Op::Drop(n))
}

/// A pull cursor over a Stream.
struct Cursor<'a> {
    src: SrcCursor<'a>,
    ops: &'a [Op],
    dropped: Vec<usize>,
}

enum SrcCursor<'a> {
    Count(Option<Value>, &'a Value),
    By {
        prev: Option<Value>,
        seed: &'a Value,
        block: &'a Value,
    },
    Items(Box<dyn Iterator<Item = Value> + 'a>),
    /// An external source not opened yet, then its iterator.
    ExtPending(&'a std::sync::Arc<dyn ExternalSource>),
    Ext(Box<dyn ExternalCursor>),
}

impl<'a> Cursor<'a> {
    fn new(s: &'a StreamObj) -> Cursor<'a> {
        let src = match &s.source {
            Source::From(n) => SrcCursor::Count(None, n),
            Source::FromBy(seed, block) => SrcCursor::By {
                prev: None,
                seed,
                block,
            },
            Source::On(Value::Str(t), OnKind::Text) => {
                use unicode_segmentation::UnicodeSegmentation;
                SrcCursor::Items(Box::new(t.graphemes(true).map(Value::str)))
            }
            Source::On(c, _) => {
                SrcCursor::Items(elems(c).unwrap_or_else(|| Box::new(std::iter::empty())))
            }
            Source::External(x) => SrcCursor::ExtPending(x),
        };
        Cursor {
            src,
            ops: &s.ops,
            dropped: vec![0; s.ops.len()],
        }
    }

    fn next_source(&mut self, ctx: &mut Ctx) -> Result<Option<Value>, Unwind> {
        Ok(match &mut self.src {
            SrcCursor::Count(prev, start) => {
                let next = match prev.take() {
                    None => (*start).clone(),
                    Some(p) => add(ctx, &p, &Value::Int(1))?,
                };
                *prev = Some(next.clone());
                Some(next)
            }
            SrcCursor::By { prev, seed, block } => {
                let next = match prev.take() {
                    None => (*seed).clone(),
                    Some(p) => ctx.call_block(block, &[p])?,
                };
                *prev = Some(next.clone());
                Some(next)
            }
            SrcCursor::Items(it) => it.next(),
            SrcCursor::ExtPending(x) => {
                let mut it = x.open(ctx)?;
                let first = it.next(ctx)?;
                self.src = SrcCursor::Ext(it);
                first
            }
            SrcCursor::Ext(it) => it.next(ctx)?,
        })
    }

    /// The next element after all pending steps, or `None` at the end.
    fn next(&mut self, ctx: &mut Ctx) -> Result<Option<Value>, Unwind> {
        'outer: loop {
            ctx.tick()?;
            let Some(mut x) = self.next_source(ctx)? else {
                return Ok(None);
            };
            for (i, op) in self.ops.iter().enumerate() {
                match op {
                    Op::Select(b) => {
                        if !test1(ctx, "select:", b, &x)? {
                            continue 'outer;
                        }
                    }
                    Op::Reject(b) => {
                        if test1(ctx, "reject:", b, &x)? {
                            continue 'outer;
                        }
                    }
                    Op::Collect(b) => x = ctx.call_block(b, &[x])?,
                    Op::Drop(n) => {
                        if self.dropped[i] < *n {
                            self.dropped[i] += 1;
                            continue 'outer;
                        }
                    }
                }
            }
            return Ok(Some(x));
        }
    }
}

fn take(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let s = stream_of(ctx, "take:", recv)?;
    let n = count_arg(ctx, "take:", arg(args, 0))?;
    let mut out = imbl::Vector::new();
    let mut c = Cursor::new(s);
    while out.len() < n {
        match c.next(ctx)? {
            Some(x) => out.push_back(x),
            None => break,
        }
    }
    Ok(Value::List(Ref::new(out)))
}

fn do_(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let s = stream_of(ctx, "do:", recv)?;
    let block = arg(args, 0);
    let mut c = Cursor::new(s);
    while let Some(x) = c.next(ctx)? {
        ctx.call_block(block, &[x])?;
    }
    Ok(Value::Nil)
}

fn inject_into(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let s = stream_of(ctx, "inject:into:", recv)?;
    let block = arg(args, 1);
    let mut acc = arg(args, 0).clone();
    let mut c = Cursor::new(s);
    while let Some(x) = c.next(ctx)? {
        acc = ctx.call_block_moving(block, &mut [acc, x])?;
    }
    Ok(acc)
}

fn find(ctx: &mut Ctx, sel: &str, recv: &Value, block: &Value) -> Result<Option<Value>, Unwind> {
    let s = stream_of(ctx, sel, recv)?;
    let mut c = Cursor::new(s);
    while let Some(x) = c.next(ctx)? {
        if test1(ctx, sel, block, &x)? {
            return Ok(Some(x));
        }
    }
    Ok(None)
}

fn detect(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    find(ctx, "detect:", recv, arg(args, 0))?.ok_or_else(|| not_found(ctx))
}

fn detect_if_none(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    match find(ctx, "detect:ifNone:", recv, arg(args, 0))? {
        Some(x) => Ok(x),
        None => ctx.call_block(arg(args, 1), &[]),
    }
}

fn as_list(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let s = stream_of(ctx, "asList", recv)?;
    let mut out = imbl::Vector::new();
    let mut c = Cursor::new(s);
    while let Some(x) = c.next(ctx)? {
        out.push_back(x);
        if out.len() % BUILT_EVERY == 0 {
            ctx.built(out.len().saturating_mul(ELEM))?;
        }
    }
    Ok(Value::List(Ref::new(out)))
}

fn any_satisfy(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    Ok(Value::bool(
        find(ctx, "anySatisfy:", recv, arg(args, 0))?.is_some(),
    ))
}

fn all_satisfy(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let s = stream_of(ctx, "allSatisfy:", recv)?;
    let block = arg(args, 0);
    let mut c = Cursor::new(s);
    while let Some(x) = c.next(ctx)? {
        if !test1(ctx, "allSatisfy:", block, &x)? {
            return Ok(Value::False);
        }
    }
    Ok(Value::True)
}
