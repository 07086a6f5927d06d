//! The `bt` binary: the allocator ([`allocator`]) and its entry point ([`entry`]), which
//! calls the library's command line.
#![no_main]

mod allocator;
mod entry;
