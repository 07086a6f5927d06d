//! `bt check` (stub: the owning module fills this in).

/// Runs `bt check ARGS`; answers the process exit status.
pub fn main(_args: &[String]) -> i32 {
    eprintln!("bt check: not implemented yet");
    2
}
