//! `bt repl` (stub: the owning module fills this in).

/// Runs `bt repl ARGS`; answers the process exit status.
pub fn main(_args: &[String]) -> i32 {
    eprintln!("bt repl: not implemented yet");
    2
}
