//! Lazy line reading for `File`: the Streams of `File lines:` and of a
//! `FileHandle` lent by `File open: path do: [:h | …]`.
//!
//! A line is read only when a traversal pulls it (`BufReader::read_until`), so `take:`,
//! `detect:` or `inject:into:` over a huge file never hold more than one line. Lines end at
//! `\n` (a `\r` before it is dropped); a line that is not UTF-8 raises `type_error` naming
//! the path and the line number.
//!
//! `File lines:` opens the file afresh for every traversal (the Stream is a value); a handle's
//! `lines` reads on from where the handle is (the handle is consumed as it is read) and
//! raises `io_error` once the `open:do:` block has ended and closed it.

use std::io::{BufRead, BufReader};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::interp::capability::{require_path, Access};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::collections::stream::{stream_external, ExternalCursor, ExternalSource};
use crate::interp::prims::file::io_fault;
use crate::value::{ClassRef, Native, NativeObj, Ref, Value};

pub fn register(p: &mut Prims) {
    let h = "FileHandle";
    p.add_class(h, "new", |ctx, r, _| {
        crate::interp::prims::class::refuse_new(ctx, r, "Use File open: path do: [:handle | …]")
    });
    p.add(h, "lines", |ctx, r, _| {
        let fh = handle(ctx, r)?;
        require_path(ctx, Access::Read, "FileHandle lines", &fh.path)?;
        let src: Arc<dyn ExternalSource> = Arc::new(HandleLines(fh.state.clone()));
        stream_external(ctx, src)
    });
    p.add(h, "readLine", |ctx, r, _| {
        let fh = handle(ctx, r)?;
        require_path(ctx, Access::Read, "FileHandle readLine", &fh.path)?;
        let st = fh.state.clone();
        let mut g = st.lock();
        let line = next_line(ctx, &mut g)?;
        Ok(line.unwrap_or(Value::Nil))
    });
    p.add(h, "path", |ctx, r, _| {
        Ok(Value::str(handle(ctx, r)?.path.clone()))
    });
    p.add(h, "isOpen", |ctx, r, _| {
        Ok(Value::bool(handle(ctx, r)?.state.lock().reader.is_some()))
    });
}

/// An open file being read line by line.
struct Reading {
    path: String,
    reader: Option<BufReader<std::fs::File>>,
    line_no: usize,
    buf: Vec<u8>,
}

/// Reads the next line (None at the end of the file).
fn next_line(ctx: &mut Ctx, r: &mut Reading) -> Result<Option<Value>, Unwind> {
    let Some(reader) = r.reader.as_mut() else {
        return Err(ctx.err(
            ErrorKind::IoError,
            format!("{}: the file handle is closed", r.path),
        ));
    };
    r.buf.clear();
    match reader.read_until(b'\n', &mut r.buf) {
        Ok(0) => Ok(None),
        Ok(n) => {
            ctx.charge(n)?;
            r.line_no += 1;
            if r.buf.last() == Some(&b'\n') {
                r.buf.pop();
                if r.buf.last() == Some(&b'\r') {
                    r.buf.pop();
                }
            }
            match std::str::from_utf8(&r.buf) {
                Ok(s) => Ok(Some(Value::str(s))),
                Err(_) => Err(ctx.type_err(format!(
                    "{} line {} is not valid UTF-8 text (read it with File readBinary:)",
                    r.path, r.line_no
                ))),
            }
        }
        Err(e) => {
            let (kind, msg) = io_fault(&r.path, &e);
            Err(ctx.err(kind, msg))
        }
    }
}

/// `File lines: path`: every traversal opens the file.
struct PathLines(String);

struct OwnCursor(Reading);

impl ExternalCursor for OwnCursor {
    fn next(&mut self, ctx: &mut Ctx) -> Result<Option<Value>, Unwind> {
        next_line(ctx, &mut self.0)
    }
}

impl ExternalSource for PathLines {
    fn open(&self, ctx: &mut Ctx) -> Result<Box<dyn ExternalCursor>, Unwind> {
        require_path(ctx, Access::Read, "File lines:", &self.0)?;
        match std::fs::File::open(&self.0) {
            Ok(f) => Ok(Box::new(OwnCursor(Reading {
                path: self.0.clone(),
                reader: Some(BufReader::new(f)),
                line_no: 0,
                buf: Vec::new(),
            }))),
            Err(e) => {
                let (kind, msg) = io_fault(&self.0, &e);
                Err(ctx.err(kind, msg))
            }
        }
    }
    fn describe(&self) -> String {
        format!("lines of {}", crate::interp::print::quote_string(&self.0))
    }
}

/// The Stream of `File lines: path`.
pub fn path_lines(ctx: &mut Ctx, path: &str) -> EvalResult {
    let src: Arc<dyn ExternalSource> = Arc::new(PathLines(path.to_string()));
    stream_external(ctx, src)
}

/// A handle's `lines`: reads on from the shared open file.
struct HandleLines(Arc<Mutex<Reading>>);

struct SharedCursor(Arc<Mutex<Reading>>);

impl ExternalCursor for SharedCursor {
    fn next(&mut self, ctx: &mut Ctx) -> Result<Option<Value>, Unwind> {
        // The lock is held for one read, never across a send.
        let mut g = self.0.lock();
        next_line(ctx, &mut g)
    }
}

impl ExternalSource for HandleLines {
    fn open(&self, _ctx: &mut Ctx) -> Result<Box<dyn ExternalCursor>, Unwind> {
        Ok(Box::new(SharedCursor(self.0.clone())))
    }
    fn describe(&self) -> String {
        format!(
            "lines of {}",
            crate::interp::print::quote_string(&self.0.lock().path)
        )
    }
}

/// The handle lent to an `open:do:` block.
pub struct FileHandle {
    class: ClassRef,
    path: String,
    state: Arc<Mutex<Reading>>,
}

impl NativeObj for FileHandle {
    fn class(&self) -> ClassRef {
        self.class.clone()
    }
    fn print_string(&self) -> String {
        format!(
            "FileHandle({})",
            crate::interp::print::quote_string(&self.path)
        )
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        other
            .as_any()
            .downcast_ref::<FileHandle>()
            .is_some_and(|o| Arc::ptr_eq(&o.state, &self.state))
    }
    fn hash_code(&self) -> u64 {
        Arc::as_ptr(&self.state) as usize as u64
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        (9, vec![self.hash_code()])
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn handle<'a>(ctx: &Ctx, v: &'a Value) -> Result<&'a FileHandle, Unwind> {
    match v {
        Value::Native(n) => n.0.as_any().downcast_ref::<FileHandle>(),
        _ => None,
    }
    .ok_or_else(|| ctx.type_err("expected a FileHandle"))
}

/// `File open: path do: aBlock`: the block's value as `Result ok:`; the handle is closed when
/// the block ends, also when it raises (the exception propagates).
pub fn open_do(ctx: &mut Ctx, path: &str, file: std::fs::File, block: &Value) -> EvalResult {
    let class = ctx
        .class_named("FileHandle")
        .ok_or_else(|| ctx.err(ErrorKind::ClassNotFound, "Class 'FileHandle' not found"))?;
    let state = Arc::new(Mutex::new(Reading {
        path: path.to_string(),
        reader: Some(BufReader::new(file)),
        line_no: 0,
        buf: Vec::new(),
    }));
    let h = Value::Native(Ref::new(Native(Box::new(FileHandle {
        class,
        path: path.to_string(),
        state: state.clone(),
    }))));
    let r = ctx.call_block(block, &[h]);
    state.lock().reader = None;
    Ok(ctx.make_ok(r?))
}
