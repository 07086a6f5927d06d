//! Coroutine stacks: large virtual reservations committed lazily by the OS.
//!
//! A [`PooledStack`] is one anonymous `MAP_NORESERVE` mapping whose lowest page is a
//! `PROT_NONE` guard, so it costs two kernel mappings and only the pages actually touched
//! count as resident memory. Stacks are pooled per worker; a stack returned after deep use
//! gives its deep pages back with `madvise(MADV_DONTNEED)` so the pool does not pin memory.
//!
//! With `clock` (one `clock_gettime`), the only module of the runtime with `unsafe` code (the mapping syscalls and the
//! `Stack` trait implementation corosensei requires).

// unsafe: coroutine stacks are mmap'd reservations handed to corosensei (each block has a SAFETY comment).
#![allow(unsafe_code)]

use std::io;

use corosensei::stack::{Stack, StackPointer};

/// Bytes at the top of a stack kept resident when it returns to the pool (the hot part
/// every handler touches).
pub(super) const KEEP_RESIDENT: usize = 256 * 1024;

/// Safety margin below which [`crate::runtime::Cx::stack_remaining`] reports zero: enough
/// for the runtime's own frames and a signal-free unwind from the interpreter's check.
pub(super) const RED_ZONE: usize = 64 * 1024;

pub(super) fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p <= 0 {
        4096
    } else {
        p as usize
    }
}

/// A mapped stack: `[low, low + page)` is the guard, `[low + page, high)` is usable.
pub(super) struct PooledStack {
    low: usize,
    high: usize,
    page: usize,
}

impl PooledStack {
    /// Reserves a stack with at least `size` usable bytes (rounded up to pages).
    pub(super) fn new(size: usize) -> io::Result<PooledStack> {
        let page = page_size();
        let usable = size.max(corosensei::stack::MIN_STACK_SIZE).div_ceil(page) * page;
        let len = usable + page;
        // SAFETY: an anonymous private mapping at a kernel-chosen address touches no existing
        // memory; the result is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let low = p as usize;
        let stack = PooledStack {
            low,
            high: low + len,
            page,
        };
        // SAFETY: `[low, low + page)` lies inside the mapping just created and nothing uses it
        // yet; making it inaccessible turns an overflow into a fault instead of corruption.
        if unsafe { libc::mprotect(p, page, libc::PROT_NONE) } != 0 {
            return Err(io::Error::last_os_error()); // `stack` is dropped: unmapped
        }
        Ok(stack)
    }

    /// Highest address (the stack grows down from here).
    pub(super) fn top(&self) -> usize {
        self.high
    }

    /// Lowest usable address (just above the guard page).
    pub(super) fn usable_low(&self) -> usize {
        self.low + self.page
    }

    /// Releases the resident pages below the top [`KEEP_RESIDENT`] bytes if the stack was
    /// used deeper than that (`deepest` = lowest stack pointer observed).
    pub(super) fn trim(&mut self, deepest: usize) {
        let keep_from = self.high.saturating_sub(KEEP_RESIDENT);
        if deepest >= keep_from || keep_from <= self.usable_low() {
            return;
        }
        let start = self.usable_low();
        let len = (keep_from - start) / self.page * self.page;
        // SAFETY: the range lies inside this stack's usable part, and the stack is not in use
        // (it is being returned to the pool), so discarding the pages' contents is harmless:
        // they read back as zeros when next touched.
        unsafe {
            libc::madvise(start as *mut libc::c_void, len, libc::MADV_DONTNEED);
        }
    }
}

/// Bytes of the `len` bytes just below `top` (a stack's top, page-aligned) that are resident
/// now (`mincore`); None when the kernel does not tell.
pub(super) fn resident_below(top: usize, len: usize) -> Option<usize> {
    #[cfg(test)]
    PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let page = page_size();
    let pages = len.div_ceil(page);
    let start = top - pages * page;
    let mut small = [0u8; 128];
    let mut big = Vec::new();
    let v: &mut [u8] = if pages <= small.len() {
        &mut small[..pages]
    } else {
        big.resize(pages, 0);
        &mut big
    };
    // SAFETY: `[start, top)` lies inside one of this module's stack mappings (the caller's
    // coroutine stack, `len` at most its usable size) and `v` has one byte per page of it.
    let r = unsafe { libc::mincore(start as *mut libc::c_void, pages * page, v.as_mut_ptr()) };
    (r == 0).then(|| v.iter().filter(|b| **b & 1 != 0).count() * page)
}

/// Calls of [`resident_below`] (a system call each), for the tests.
#[cfg(test)]
pub(crate) static PROBES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Maps (and unmaps again) one coroutine stack of `size` usable bytes: whether stacks of
/// that size can be made here at all (an address-space limit, `vm.overcommit_memory = 2`).
pub(crate) fn probe(size: usize) -> io::Result<()> {
    PooledStack::new(size).map(drop)
}

impl Drop for PooledStack {
    fn drop(&mut self) {
        // SAFETY: the mapping was created by `new` with exactly this range and is no longer
        // used by any coroutine (a stack is only dropped when no coroutine owns it).
        unsafe {
            libc::munmap(self.low as *mut libc::c_void, self.high - self.low);
        }
    }
}

// SAFETY: the stack has a guard page at its low end (`new`), at least MIN_STACK_SIZE usable
// bytes, and both ends are page-aligned, hence aligned to STACK_ALIGNMENT.
unsafe impl Stack for PooledStack {
    fn base(&self) -> StackPointer {
        StackPointer::new(self.high).expect("mmap never returns address 0")
    }
    fn limit(&self) -> StackPointer {
        StackPointer::new(self.low).expect("mmap never returns address 0")
    }
}

/// The address of a local in the caller's frame: the current stack pointer, roughly.
#[inline(always)]
pub(super) fn approx_sp() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// The kernel's limit on memory mappings per process (`vm.max_map_count`), if readable.
pub(super) fn max_map_count() -> Option<usize> {
    // Read once per process (a file read per runtime showed in engine start-up).
    static MAPS: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    *MAPS.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/vm/max_map_count")
            .ok()?
            .trim()
            .parse()
            .ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_is_usable_and_trims() {
        let mut s = PooledStack::new(1 << 20).unwrap();
        assert!(s.top() - s.usable_low() >= 1 << 20);
        // Touch the deepest usable byte and the top one through the mapping.
        let low = s.usable_low() as *mut u8;
        let top = (s.top() - 1) as *mut u8;
        // SAFETY: both addresses lie in the usable (read-write) part of the mapping.
        unsafe {
            low.write(7);
            top.write(9);
            assert_eq!(low.read(), 7);
        }
        s.trim(s.usable_low());
        // SAFETY: as above; trimmed pages read back as zero, kept pages keep their contents.
        unsafe {
            assert_eq!(low.read(), 0);
            assert_eq!(top.read(), 9);
        }
    }

    #[test]
    fn huge_reservations_are_cheap() {
        // 64 stacks of 256 MiB = 16 GiB of address space, none of it committed.
        let stacks: Vec<_> = (0..64)
            .map(|_| PooledStack::new(256 << 20).unwrap())
            .collect();
        assert_eq!(stacks.len(), 64);
    }
}
