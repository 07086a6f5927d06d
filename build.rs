//! Link options of the `bt` binary.
//!
//! On Linux with glibc the binary is linked with packed relative relocations (DT_RELR,
//! `-z pack-relative-relocs`): a position-independent `bt` has ~26,000 relative relocations
//! (vtables, static tables), 600 KB of `.rela.dyn` that the dynamic loader read and applied
//! at every start; packed they are a few KB (docs/performance.md, "Start-up"). Used only
//! when a probe program links with the option and runs (binutils ≥ 2.38 or lld, glibc ≥
//! 2.36), so older toolchains build as before.
//!
//! The functions a start-up runs are laid out together at the start of the text
//! (`link/startup_functions.txt`, written by `bench/startup_functions`): the kernel maps
//! the 64 KB around each code page a process touches, so start-up code spread over the
//! binary's 13 MB of text made ~7 MB of it resident. The list is handed to the linker as a
//! symbol ordering file (lld's `--symbol-ordering-file`, a hash lookup per symbol), with
//! its warnings off: a name that is gone or renamed matches nothing and the binary links as
//! without it. Used only when a probe program links with the options through the build's
//! `rustc` and runs (lld, which rustc uses on x86-64 Linux), so a toolchain whose linker
//! has no such option builds as before.
//!
//! gcc's unwinder is linked in as a static archive (`libgcc_eh.a`) when a probe program
//! linked so catches a panic: the binary then needs no `libgcc_s.so.1`, whose loading and
//! constructor (CPU feature detection by `cpuid`, slow under a hypervisor) cost ~0.1 ms of
//! every start.
//!
//! The binary stays position-independent (ASLR places its image at a random address): a
//! fixed-address link (`-no-pie`) was measured to save ~140 page faults and ~0.5 ms at
//! start-up, by not relocating 465 KB of vtables and static tables, and was not adopted —
//! a runtime that runs untrusted scripts under `--sandbox` keeps that hardening
//! (docs/decisions.md).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The start-up functions, one symbol name a line (`#` comments).
const STARTUP_LIST: &str = "link/startup_functions.txt";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={STARTUP_LIST}");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    mimalloc_option_numbers(&var("DEP_MIMALLOC_INCLUDE_DIR"));
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "gnu" {
        return;
    }
    if var("HOST") != var("TARGET") {
        return; // the probes could not run
    }
    let out = PathBuf::from(var("OUT_DIR"));
    if relr_links(&out) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    if let Some(args) = startup_order(&out) {
        for a in args {
            println!("cargo:rustc-link-arg-bins={a}");
        }
    }
    if static_unwinder_works(&out) {
        println!("cargo:rustc-link-lib=static:-bundle=gcc_eh");
    }
}

/// Whether a Rust program linked with gcc's unwinder as a static archive (`libgcc_eh.a`,
/// the `_Unwind_*` functions panics unwind with) catches a panic. Linked so, ahead of the
/// standard library, the unwinder is in the binary and `libgcc_s.so.1` is not loaded at
/// all: the dynamic loader no longer opens, maps and relocates it, and its constructor
/// (`__cpu_indicator_init`, a run of `cpuid` instructions, each a trap to the hypervisor on
/// a virtual machine) no longer runs: ~0.1 ms of every start (docs/performance.md,
/// "Start-up"). A toolchain without the archive links as before.
fn static_unwinder_works(out: &Path) -> bool {
    let probe = "fn main() {\n    std::panic::set_hook(Box::new(|_| {}));\n    \
                 let r = std::panic::catch_unwind(|| -> u8 { panic!(\"probe\") });\n    \
                 println!(\"{}\", if r.is_err() { \"caught\" } else { \"not\" });\n}\n";
    rust_probe_prints(
        out,
        "unwind_probe",
        probe,
        &["-lstatic:-bundle=gcc_eh".to_string()],
        b"caught\n",
    )
}

/// Whether a C program links with packed relative relocations and runs.
fn relr_links(out: &Path) -> bool {
    let src = out.join("relr_probe.c");
    let exe = out.join("relr_probe");
    if std::fs::write(&src, "int main(void) { return 0; }\n").is_err() {
        return false;
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let linked = Command::new(cc)
        .args([
            "-fPIE",
            "-pie",
            "-Wl,-z,pack-relative-relocs",
            "-Wl,--fatal-warnings",
            "-o",
        ])
        .arg(&exe)
        .arg(&src)
        .output()
        .is_ok_and(|o| o.status.success());
    linked && Command::new(&exe).status().is_ok_and(|s| s.success())
}

/// The link arguments that put the start-up functions first, when the list is there and a
/// Rust program links with them and runs.
fn startup_order(out: &Path) -> Option<[String; 2]> {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").ok()?);
    let list = std::fs::read_to_string(dir.join(STARTUP_LIST)).ok()?;
    // One symbol a line; comments and anything that is not a plain symbol name are left out.
    let names: String = list
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter(|l| {
            l.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'.'))
        })
        .flat_map(|l| [l, "\n"])
        .collect();
    if names.is_empty() {
        return None;
    }
    let path = out.join("startup.order");
    std::fs::write(&path, names).ok()?;
    let args = [
        format!("-Wl,--symbol-ordering-file={}", path.display()),
        "-Wl,--no-warn-symbol-ordering".to_string(),
    ];
    rust_links_with(out, &args).then_some(args)
}

/// Whether `rustc` (with the build's flags) links a program with `args` and it runs.
fn rust_links_with(out: &Path, args: &[String]) -> bool {
    let args: Vec<String> = args.iter().map(|a| format!("-Clink-arg={a}")).collect();
    rust_probe_prints(
        out,
        "script_probe",
        "fn main() { println!(\"probe\"); }\n",
        &args,
        b"probe\n",
    )
}

/// Whether `rustc` (with the build's flags and `rustc_args`) builds the program `source`
/// as `name` in `out`, and it runs and prints exactly `expect`.
fn rust_probe_prints(
    out: &Path,
    name: &str,
    source: &str,
    rustc_args: &[String],
    expect: &[u8],
) -> bool {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let src = out.join(format!("{name}.rs"));
    let exe = out.join(name);
    if std::fs::write(&src, source).is_err() {
        return false;
    }
    let mut cmd = Command::new(rustc);
    if let Ok(flags) = std::env::var("CARGO_ENCODED_RUSTFLAGS") {
        cmd.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    }
    let linked = cmd
        .arg("--edition=2021")
        .args(rustc_args)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .is_ok_and(|o| o.status.success());
    linked
        && Command::new(&exe)
            .output()
            .is_ok_and(|o| o.status.success() && o.stdout == expect)
}

/// The number of mimalloc's `mi_option_destroy_on_exit` in the `mi_option_t` of the
/// mimalloc the build links (its header, from libmimalloc-sys), for src/allocator.rs as
/// `BT_MI_OPTION_DESTROY_ON_EXIT`: the enum's order changes between mimalloc versions, so it
/// is read, not written down. Not found (no mimalloc, another header), the variable is not
/// set and the allocator leaves the option alone.
fn mimalloc_option_numbers(include: &str) {
    if include.is_empty() {
        return;
    }
    let header = Path::new(include).join("mimalloc.h");
    println!("cargo:rerun-if-changed={}", header.display());
    let Ok(text) = std::fs::read_to_string(&header) else {
        return;
    };
    let Some(start) = text.find("typedef enum mi_option_e {") else {
        return;
    };
    let body = &text[start..];
    let body = &body[body.find('{').map_or(0, |i| i + 1)..];
    let names = body
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .flat_map(|l| l.split(','))
        .map(str::trim)
        .filter(|n| !n.is_empty());
    for (i, name) in names.enumerate() {
        if name.contains('=') || name.starts_with('}') || name == "_mi_option_last" {
            return; // past the numbered options (or an explicit value: stop counting)
        }
        if name == "mi_option_destroy_on_exit" {
            println!("cargo:rustc-env=BT_MI_OPTION_DESTROY_ON_EXIT={i}");
            return;
        }
    }
}
