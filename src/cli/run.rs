//! `bt run` (stub: the owning module fills this in).

/// Runs `bt run ARGS`; answers the process exit status.
pub fn main(_args: &[String]) -> i32 {
    eprintln!("bt run: not implemented yet");
    2
}
