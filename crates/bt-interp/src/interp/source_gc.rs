//! Releasing the sources of finished evaluations: the program's file table
//! (`Program::files`, indexed by `Loc::file`) would otherwise keep every REPL line and every
//! `Engine::eval` source for the program's life.
//!
//! * **What is released.** Only inputs of `Interpreter::eval` that declare nothing (no
//!   class, method or extension): their code is the top-level unit, dropped when the input
//!   has run, and the blocks it made. Files with declarations stay (their methods can run
//!   and raise later), as do the files `load_unit` loads (`bt run`, `bt test`).
//! * **When.** After the input ran, its top-level blocks (`FnCode::blocks`) are held only
//!   weakly here ([`SourceGc::pending`]); a closure a binding, a value or the host
//!   (`Engine::compile`'s `Script`) still holds keeps its block alive, and its file with it,
//!   so errors from that block still name their source line. Each `add_file` sweeps: a file
//!   whose blocks are all gone becomes a free slot (an empty tombstone) that the next file
//!   reuses, so the table is bounded by the sources of live code.
//! * **The value codec** finds a live top-level block of a released-pending file through
//!   [`Program::pending_unit_blocks`] (instead of `unit_blocks`, which holds its code
//!   strongly). A block it encodes is pinned ([`Program::pin_block`]): another node may
//!   send it back after every local reference is gone, so its code and file stay.

use std::sync::{Arc, Weak};

use crate::interp::eval::FnCode;
use crate::interp::program::{Program, SourceFile, SourceGc};

impl Program {
    /// Adds a source file to the table (reusing a released slot) and answers its id.
    pub fn add_file(&self, path: &str, src: &str) -> u32 {
        let mut gc = self.source_gc.lock();
        self.sweep(&mut gc);
        let file = SourceFile::new(path.to_string(), Arc::from(src));
        let mut f = self.files.write();
        match gc.free.pop() {
            Some(i) => {
                f[i as usize] = file;
                i
            }
            None => {
                f.push(file);
                (f.len() - 1) as u32
            }
        }
    }

    /// The input of file `id` has run and declared nothing: its source goes once no block
    /// it made is alive (`root`, the input's code, is dropped by the caller).
    pub fn release_file(&self, id: u32, root: Option<&Arc<FnCode>>) {
        let blocks = self.unit_blocks.write().remove(&id).unwrap_or_default();
        let mut weak: Vec<Weak<FnCode>> = blocks.iter().map(Arc::downgrade).collect();
        if let Some(r) = root {
            weak.extend(r.blocks.iter().map(Arc::downgrade));
        }
        drop(blocks);
        let mut gc = self.source_gc.lock();
        gc.pending.push((id, weak));
    }

    /// Keeps the code of a top-level block the value codec encoded (see `SourceGc`; also
    /// while the input that made it still runs, before its release is pending).
    pub fn pin_block(&self, code: &Arc<FnCode>) {
        let mut gc = self.source_gc.lock();
        if !gc.pinned.iter().any(|c| Arc::ptr_eq(c, code)) {
            gc.pinned.push(code.clone());
        }
    }

    /// The live top-level blocks of a file whose release is pending (the value codec).
    pub fn pending_unit_blocks(&self, id: u32) -> Option<Vec<Arc<FnCode>>> {
        let gc = self.source_gc.lock();
        let (_, w) = gc.pending.iter().find(|(f, _)| *f == id)?;
        let mut v: Vec<Arc<FnCode>> = w.iter().filter_map(Weak::upgrade).collect();
        v.sort_by_key(|c| c.fid);
        v.dedup_by(|a, b| Arc::ptr_eq(a, b));
        Some(v)
    }

    /// Source files in the table now (released slots not counted).
    pub fn live_files(&self) -> usize {
        let gc = self.source_gc.lock();
        self.files.read().len() - gc.free.len()
    }

    /// Frees every pending file none of whose blocks is alive.
    fn sweep(&self, gc: &mut SourceGc) {
        if gc.pending.is_empty() {
            return;
        }
        // Freed ids go straight onto the free list (no vector per sweep: one runs per eval).
        let SourceGc { free, pending, .. } = gc;
        let before = free.len();
        pending.retain(|(id, w)| {
            let live = w.iter().any(|b| b.strong_count() > 0);
            if !live {
                free.push(*id);
            }
            live
        });
        if free.len() == before {
            return;
        }
        let mut f = self.files.write();
        let mut k = before;
        while k < free.len() {
            match f.get_mut(free[k] as usize) {
                Some(slot) => {
                    *slot = SourceFile::new(String::new(), empty_source());
                    k += 1;
                }
                None => {
                    free.swap_remove(k);
                }
            }
        }
    }
}

/// The text of a released file's tombstone: one shared empty source (an `Arc<str>` made per
/// release was an allocation per eval).
fn empty_source() -> Arc<str> {
    static EMPTY: std::sync::OnceLock<Arc<str>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| Arc::from("")).clone()
}
