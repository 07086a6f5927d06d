//! Gives the pages of a large buffer back to the OS just before the buffer is freed.
//!
//! A growing Dictionary replaces its index by one twice the size; the allocator keeps the old
//! buffer's pages resident after the free (mimalloc purges freed memory only after a delay),
//! so a million-entry table's peak RSS carried every index it had outgrown (4 MB + 2 MB + …).
//! `madvise(MADV_DONTNEED)` on the whole pages inside the buffer drops them at once; they
//! read back as zeros if the allocator touches them again, which is what fresh memory holds.
//! The one module of `value::dict` with `unsafe` code (the syscall).
#![allow(unsafe_code)]

/// Buffers below this size are freed as they are (the syscall would cost more than it saves).
const MIN_BYTES: usize = 256 << 10;

/// Discards the contents of the whole pages inside `buf`, which the caller frees next.
pub(super) fn release<T: Copy>(buf: &mut [T]) {
    let bytes = std::mem::size_of_val(buf);
    if bytes < MIN_BYTES || !cfg!(unix) {
        return;
    }
    const PAGE: usize = 4096;
    let start = buf.as_mut_ptr() as usize;
    let lo = start.next_multiple_of(PAGE);
    let hi = (start + bytes) & !(PAGE - 1);
    if hi > lo {
        // SAFETY: [lo, hi) is whole pages inside `buf`, which we borrow exclusively and whose
        // contents nobody reads again (`T: Copy`, so nothing is dropped from it; the caller
        // frees it next). MADV_DONTNEED on private anonymous memory only replaces those pages
        // by zero-filled ones on the next touch, so the allocator's later use of the memory
        // is unaffected; a failing call changes nothing.
        unsafe {
            libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_DONTNEED);
        }
    }
}
