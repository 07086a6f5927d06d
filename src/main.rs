//! The `bt` binary: the allocator ([`allocator`]) and a call into the library's command line.

mod allocator;

fn main() {
    allocator::restore_environment();
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(bt_cli::cli_main(&args));
}
