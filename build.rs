//! Link options of the `bt` binary.
//!
//! On Linux with glibc the binary is linked with packed relative relocations (DT_RELR,
//! `-z pack-relative-relocs`): a position-independent `bt` has ~26,000 relative relocations
//! (vtables, static tables), 600 KB of `.rela.dyn` that the dynamic loader read and applied
//! at every start; packed they are a few KB (docs/performance.md, "Start-up"). Used only
//! when a probe program links with the option and runs (binutils ≥ 2.38 or lld, glibc ≥
//! 2.36), so older toolchains build as before.
//!
//! The binary is linked as a fixed-address executable (`-no-pie`; the code is still compiled
//! position-independent). A position-independent `bt` has 465 KB of `.data.rel.ro` (vtables,
//! static tables) holding addresses the dynamic loader writes at every start: each of its
//! ~115 pages faulted, copied and dirtied before `main`. At a fixed address the linker
//! writes them and the pages stay clean, read from the file only when touched: `bt run`
//! of hello world −140 page faults, −0.4 ms wall, −0.6 MB peak RSS. The cost is that the
//! binary's own image is not placed at a random address (its libraries, heap, stacks and
//! mappings still are).

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "gnu" {
        return;
    }
    if var("HOST") != var("TARGET") {
        return; // the probe could not run
    }
    let out = std::path::PathBuf::from(var("OUT_DIR"));
    let src = out.join("relr_probe.c");
    let exe = out.join("relr_probe");
    if std::fs::write(&src, "int main(void) { return 0; }\n").is_err() {
        return;
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
    let runs = linked && Command::new(&exe).status().is_ok_and(|s| s.success());
    if runs {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    // Fixed-address executable: no load-time relocation of `.data.rel.ro` (above).
    println!("cargo:rustc-link-arg-bins=-no-pie");
}
