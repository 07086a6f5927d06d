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

// SAFETY: each method forwards to the matching mimalloc function; the plain variants are used
// only when `align <= MI_ALIGN` and `align <= size`, for which mimalloc's blocks are aligned
// (the same rule std's System allocator applies to malloc); everything else is aligned.
unsafe impl std::alloc::GlobalAlloc for Mi {
    #[inline]
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        if l.align() <= MI_ALIGN && l.align() <= l.size() {
            // SAFETY: see the impl's comment.
            unsafe { libmimalloc_sys::mi_malloc(l.size()) as *mut u8 }
        } else {
            // SAFETY: see the impl's comment.
            unsafe { libmimalloc_sys::mi_malloc_aligned(l.size(), l.align()) as *mut u8 }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, l: std::alloc::Layout) -> *mut u8 {
        if l.align() <= MI_ALIGN && l.align() <= l.size() {
            // SAFETY: see the impl's comment.
            unsafe { libmimalloc_sys::mi_zalloc(l.size()) as *mut u8 }
        } else {
            // SAFETY: see the impl's comment.
            unsafe { libmimalloc_sys::mi_zalloc_aligned(l.size(), l.align()) as *mut u8 }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, _l: std::alloc::Layout) {
        // SAFETY: `p` came from this allocator.
        unsafe { libmimalloc_sys::mi_free(p as *mut std::ffi::c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, p: *mut u8, l: std::alloc::Layout, new_size: usize) -> *mut u8 {
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
