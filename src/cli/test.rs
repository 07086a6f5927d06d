//! `bt test` (stub: the owning module fills this in).

/// Runs `bt test ARGS`; answers the process exit status.
pub fn main(_args: &[String]) -> i32 {
    eprintln!("bt test: not implemented yet");
    2
}
