//! `bt parse` (stub: the owning module fills this in).

/// Runs `bt parse ARGS`; answers the process exit status.
pub fn main(_args: &[String]) -> i32 {
    eprintln!("bt parse: not implemented yet");
    2
}
