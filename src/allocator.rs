//! The `bt` binary's global allocator: mimalloc through its plain entry points, counted by
//! `bt::CountingAlloc` so `bt run --max-memory` sees what a program holds
//! (src/cli/max_memory.rs).
//!
//! It lives in the binary, not the library, so an embedder linking `bt` keeps its own
//! allocator. The one module of the binary that needs `unsafe` (allocator calls).
#![allow(unsafe_code)]

/// Faster small allocations (value instances, closures) than the system allocator, and
/// per-thread heaps for the worker threads every actor runs on (glibc grows a thread arena one
/// `mprotect` at a time). The count costs a thread-local add per allocation.
#[global_allocator]
static GLOBAL: bt::CountingAlloc<Mi> = bt::CountingAlloc::new(Mi);

/// mimalloc through its plain entry points when the alignment is the natural one: the
/// `mimalloc` crate always calls the `_aligned` variants, which take a slower path
/// (`mi_malloc_aligned` and its helpers cost ~60 instructions per Value-class copy).
struct Mi;

/// The alignment every mimalloc block has (its size classes are whole machine words).
const MI_ALIGN: usize = std::mem::size_of::<usize>();

/// Blocks of at least this many bytes (4 MiB) come straight from the kernel: mapped on
/// allocation, unmapped when freed, and grown or shrunk by moving their pages (`mremap`)
/// instead of copying them. mimalloc keeps a freed block's memory resident for a while to
/// reuse it, so a String or List that doubles its way to a size left each of its earlier
/// copies resident beside the next: a printString of 64 MB peaked at ~165 MB of resident
/// memory under `--max-memory 64M`. Mapped, a freed block leaves at once and a doubling
/// neither copies nor holds two copies; what the memory limit counts is what is resident.
/// (glibc's malloc maps large blocks the same way.)
#[cfg(target_os = "linux")]
const HUGE: usize = 4 << 20;

/// The largest alignment a mapping always has (the smallest page size).
#[cfg(target_os = "linux")]
const PAGE: usize = 4096;

/// Whether a block of `size` bytes aligned to `align` is mapped (see [`HUGE`]).
#[inline]
fn huge(size: usize, align: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        size >= HUGE && align <= PAGE
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (size, align);
        false
    }
}

#[cfg(target_os = "linux")]
mod mapped {
    //! The kernel's side of huge blocks (`HUGE`): anonymous private mappings.

    /// A fresh zeroed mapping of `size` bytes, or null.
    ///
    /// # Safety
    /// `size` is not zero.
    pub(super) unsafe fn map(size: usize) -> *mut u8 {
        // SAFETY: an anonymous private mapping at an address the kernel chooses; no file.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            std::ptr::null_mut()
        } else {
            p as *mut u8
        }
    }

    /// Returns a mapping made by [`map`] or [`remap`] to the kernel.
    ///
    /// # Safety
    /// `p` and `size` are a live mapping's start and size, not used afterwards.
    pub(super) unsafe fn unmap(p: *mut u8, size: usize) {
        // SAFETY: the caller's contract.
        unsafe { libc::munmap(p as *mut libc::c_void, size) };
    }

    /// The mapping at `p` grown or shrunk to `new` bytes, moved if it must be (its pages
    /// move with it, nothing is copied), or null (the old one left as it was).
    ///
    /// # Safety
    /// `p` and `old` are a live mapping's start and size; `new` is not zero.
    pub(super) unsafe fn remap(p: *mut u8, old: usize, new: usize) -> *mut u8 {
        // SAFETY: the caller's contract; MREMAP_MAYMOVE lets the kernel choose a new address.
        let q = unsafe { libc::mremap(p as *mut libc::c_void, old, new, libc::MREMAP_MAYMOVE) };
        if q == libc::MAP_FAILED {
            std::ptr::null_mut()
        } else {
            q as *mut u8
        }
    }
}

impl Mi {
    /// A mimalloc block of `size` bytes aligned to `align`.
    ///
    /// # Safety
    /// `size` is not zero; `align` is a power of two.
    #[inline]
    unsafe fn small(size: usize, align: usize) -> *mut u8 {
        if align <= MI_ALIGN && align <= size {
            // SAFETY: see the `GlobalAlloc` impl's comment.
            unsafe { libmimalloc_sys::mi_malloc(size) as *mut u8 }
        } else {
            // SAFETY: see the `GlobalAlloc` impl's comment.
            unsafe { libmimalloc_sys::mi_malloc_aligned(size, align) as *mut u8 }
        }
    }
}

// SAFETY: each method forwards to the matching mimalloc function, or for a huge block
// (`huge`: at least `HUGE` bytes, aligned to at most a page) to the kernel's mappings, which
// are page-aligned. A block's layout decides which of the two made it, and Rust frees and
// reallocates a block with the layout it was made with (after a `realloc`, the new size),
// so a block always goes back to the one that made it. The plain mimalloc variants are used
// only when `align <= MI_ALIGN` and `align <= size`, for which mimalloc's blocks are aligned
// (the same rule std's System allocator applies to malloc); everything else is aligned.
unsafe impl std::alloc::GlobalAlloc for Mi {
    #[inline]
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        #[cfg(target_os = "linux")]
        if huge(l.size(), l.align()) {
            // SAFETY: `l.size()` is at least `HUGE`.
            return unsafe { mapped::map(l.size()) };
        }
        // SAFETY: `GlobalAlloc` layouts have a non-zero size and a power-of-two alignment.
        unsafe { Self::small(l.size(), l.align()) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, l: std::alloc::Layout) -> *mut u8 {
        #[cfg(target_os = "linux")]
        if huge(l.size(), l.align()) {
            // SAFETY: `l.size()` is at least `HUGE`; a fresh anonymous mapping is zeroed.
            return unsafe { mapped::map(l.size()) };
        }
        if l.align() <= MI_ALIGN && l.align() <= l.size() {
            // SAFETY: see the impl's comment.
            unsafe { libmimalloc_sys::mi_zalloc(l.size()) as *mut u8 }
        } else {
            // SAFETY: see the impl's comment.
            unsafe { libmimalloc_sys::mi_zalloc_aligned(l.size(), l.align()) as *mut u8 }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) {
        #[cfg(target_os = "linux")]
        if huge(l.size(), l.align()) {
            // SAFETY: a block of this layout was mapped (the impl's comment), with this size.
            return unsafe { mapped::unmap(p, l.size()) };
        }
        // SAFETY: `p` came from mimalloc.
        unsafe { libmimalloc_sys::mi_free(p as *mut std::ffi::c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, p: *mut u8, l: std::alloc::Layout, new_size: usize) -> *mut u8 {
        #[cfg(target_os = "linux")]
        {
            let (was, will) = (huge(l.size(), l.align()), huge(new_size, l.align()));
            if was || will {
                // SAFETY: `p` is a live block of layout `l` made by the side `was` names;
                // the new block is made by the side `will` names, with `new_size` bytes
                // (non-zero, `GlobalAlloc::realloc`'s contract), and the old one is freed
                // only once its bytes are in the new one.
                return unsafe {
                    if was && will {
                        mapped::remap(p, l.size(), new_size)
                    } else {
                        let q = if will {
                            mapped::map(new_size)
                        } else {
                            Self::small(new_size, l.align())
                        };
                        if !q.is_null() {
                            std::ptr::copy_nonoverlapping(p, q, l.size().min(new_size));
                            self.dealloc(p, l);
                        }
                        q
                    }
                };
            }
        }
        if l.align() <= MI_ALIGN && l.align() <= new_size {
            // SAFETY: `p` came from this allocator; see the impl's comment.
            unsafe { libmimalloc_sys::mi_realloc(p as *mut std::ffi::c_void, new_size) as *mut u8 }
        } else {
            // SAFETY: `p` came from this allocator.
            unsafe {
                libmimalloc_sys::mi_realloc_aligned(p as *mut std::ffi::c_void, new_size, l.align())
                    as *mut u8
            }
        }
    }
}

/// The first arena mimalloc takes its pages from: 64 MiB, reserved before anything is
/// allocated. Its default first arena is 1 GiB, and the bitmaps that track an arena's pages
/// are zeroed when it is reserved: ~170 KB (~40 page faults) at every start for 1 GiB. A
/// heap past 64 MiB reserves mimalloc's default arenas after it, as before. Run from the
/// binary's constructors (`.init_array`), because the standard library allocates before
/// `main`.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static FIRST_ARENA: extern "C" fn() = reserve_first_arena;

#[cfg(target_os = "linux")]
extern "C" fn reserve_first_arena() {
    unsafe extern "C" {
        fn mi_reserve_os_memory(size: usize, commit: bool, allow_large: bool) -> std::ffi::c_int;
    }
    // SAFETY: a reservation mimalloc manages (callable before its initialisation); a plain C
    // call with no pointer arguments. Committed as mimalloc's default arenas are on Linux
    // (pages become resident only when touched); no large pages.
    unsafe {
        mi_reserve_os_memory(64 << 20, true, false);
    }
}

/// mimalloc reads each of its ~50 options from the environment when it initialises (its
/// constructor, the last of the binary's), each by a case-insensitive scan of every
/// variable: ~0.13M instructions at every start. When no variable is named `MIMALLOC_…` (in
/// any case) none of them is set, so the scans are made over an empty environment instead:
/// `environ` is swapped for an empty one by a constructor that runs before the binary's
/// others (priority 100; the standard library's is 99, mimalloc's and the first arena's
/// have none and run after every numbered one) and put back by [`restore_environment`], the
/// first thing `main` does. No code between the two reads the environment but mimalloc's.
/// With any `MIMALLOC_…` variable, nothing is swapped.
///
/// Before that, the default of `mi_option_destroy_on_exit` becomes 2, which makes
/// mimalloc's exit hook do nothing: at exit it collected the main thread's heap and returned
/// its free pages to the system (a few `madvise` calls) just before the process ended. A
/// `MIMALLOC_DESTROY_ON_EXIT` variable still overrides it. The option's number in
/// mimalloc's enum is read from its header by build.rs.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array.00100")]
static BEFORE_MIMALLOC: extern "C" fn() = before_mimalloc;

/// The process's `environ` while mimalloc initialises over the empty one (null: not swapped).
#[cfg(target_os = "linux")]
static SAVED_ENVIRON: std::sync::atomic::AtomicPtr<*mut std::ffi::c_char> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

/// An empty environment (its terminating null alone); mimalloc only reads it.
#[cfg(target_os = "linux")]
struct EmptyEnviron([*mut std::ffi::c_char; 1]);

// SAFETY: the one element is a null pointer that nothing writes.
#[cfg(target_os = "linux")]
unsafe impl Sync for EmptyEnviron {}

#[cfg(target_os = "linux")]
static EMPTY_ENVIRON: EmptyEnviron = EmptyEnviron([std::ptr::null_mut()]);

#[cfg(target_os = "linux")]
unsafe extern "C" {
    static mut environ: *mut *mut std::ffi::c_char;
    fn mi_option_set_default(option: std::ffi::c_int, value: std::ffi::c_long);
}

#[cfg(target_os = "linux")]
extern "C" fn before_mimalloc() {
    if let Some(n) = option_env!("BT_MI_OPTION_DESTROY_ON_EXIT").and_then(|n| n.parse().ok()) {
        // SAFETY: sets the default value of an option mimalloc has not read yet (a plain
        // store into its option table, allowed before its initialisation); `n` is the
        // option's number in the header of the mimalloc linked (build.rs).
        unsafe { mi_option_set_default(n, 2) };
    }
    // SAFETY: constructors run on the one thread of the process, so `environ` is read and
    // written by no one else; its entries are null-terminated strings up to a null entry.
    // The empty environment is never written through (mimalloc only reads it), and
    // `restore_environment` puts the process's own back first thing in `main`.
    unsafe {
        let env = environ;
        if env.is_null() || names_mimalloc_variable(env) {
            return;
        }
        SAVED_ENVIRON.store(env, std::sync::atomic::Ordering::Relaxed);
        environ = EMPTY_ENVIRON.0.as_ptr() as *mut *mut std::ffi::c_char;
    }
}

/// Puts the process's environment back after mimalloc has read its options (see
/// `BEFORE_MIMALLOC`). Called first thing in `main` (src/entry.rs), before any thread is
/// started.
pub(crate) fn restore_environment() {
    #[cfg(target_os = "linux")]
    {
        let env = SAVED_ENVIRON.swap(std::ptr::null_mut(), std::sync::atomic::Ordering::Relaxed);
        if !env.is_null() {
            // SAFETY: the process has one thread yet (this is the start of `main`), so
            // nothing else reads or writes `environ`; this puts its own value back.
            unsafe { environ = env };
        }
    }
}

/// Whether a variable of `env` is named `MIMALLOC_…` in any case (how mimalloc matches).
///
/// # Safety
/// `env` points to null-terminated strings up to a null entry (the C `environ`).
#[cfg(target_os = "linux")]
unsafe fn names_mimalloc_variable(env: *mut *mut std::ffi::c_char) -> bool {
    const PREFIX: &[u8] = b"mimalloc_";
    let mut p = env;
    // SAFETY: the caller's contract: every entry up to the null one is a C string, read no
    // further than its terminating zero (a mismatch stops the comparison at it).
    unsafe {
        while !(*p).is_null() {
            let s = *p as *const u8;
            let mut i = 0;
            while i < PREFIX.len() && (*s.add(i)).to_ascii_lowercase() == PREFIX[i] {
                i += 1;
            }
            if i == PREFIX.len() {
                return true;
            }
            p = p.add(1);
        }
    }
    false
}
