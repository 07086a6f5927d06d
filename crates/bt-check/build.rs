//! Makes the built-in library's index (`check::library::index`) from `stdlib/*.bt` at build
//! time, so a program does not read the library's text to learn which file declares what.

#[path = "src/check/decl_scan.rs"]
mod decl_scan;

use std::fmt::Write;

fn main() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../stdlib");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("stdlib/")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".bt"))
        .collect();
    names.sort();
    let mut out = String::from(
        "/// (file name, classes with superclasses, extended classes, protocols, aliases).\n\
         pub(crate) static SCANNED: &[Scanned] = &[\n",
    );
    for n in &names {
        let path = dir.join(n);
        println!("cargo:rerun-if-changed={}", path.display());
        let src = std::fs::read_to_string(&path).expect("a library file");
        let s = decl_scan::scan(&src);
        let list = |v: &[&str]| -> String { v.iter().map(|x| format!("{x:?}, ")).collect() };
        let classes: String = s
            .classes
            .iter()
            .map(|(c, sup)| format!("({c:?}, {sup:?}), "))
            .collect();
        let _ = writeln!(
            out,
            "    ({n:?}, &[{classes}], &[{}], &[{}], &[{}]),",
            list(&s.extends),
            list(&s.protocols),
            list(&s.aliases)
        );
    }
    out.push_str("];\n");
    let dest =
        std::path::Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("stdlib_index.rs");
    std::fs::write(dest, out).expect("write the index");
}
