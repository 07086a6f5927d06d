//! Link options of the `bt` binary.
//!
//! On Linux with glibc the binary is linked with packed relative relocations (DT_RELR,
//! `-z pack-relative-relocs`): a position-independent `bt` has ~26,000 relative relocations
//! (vtables, static tables), 600 KB of `.rela.dyn` that the dynamic loader read and applied
//! at every start; packed they are a few KB (docs/performance.md, "Start-up"). Used only
//! when a probe program links with the option and runs (binutils ≥ 2.38 or lld, glibc ≥
//! 2.36), so older toolchains build as before.
//!
//! The binary stays position-independent (ASLR places its image at a random address): a
//! fixed-address link (`-no-pie`) was measured to save ~140 page faults and ~0.5 ms at
//! start-up, by not relocating 465 KB of vtables and static tables, and was not adopted —
//! a runtime that runs untrusted scripts under `--sandbox` keeps that hardening
//! (docs/decisions.md).

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
}
