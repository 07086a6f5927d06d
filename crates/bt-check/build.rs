//! Makes, from `stdlib/*.bt` at build time, the built-in library's index
//! (`check::library::index`), so a program does not read the library's text to learn which
//! file declares what, and each file's syntax tree as an image (`bt_syntax::syntax::image`)
//! that `check::library::module` reads instead of lexing and parsing the file.

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
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let mut out = String::from(
        "/// (file name, classes with superclasses, extended classes, protocols, aliases).\n\
         pub(crate) static SCANNED: &[Scanned] = &[\n",
    );
    for n in &names {
        let path = dir.join(n);
        println!("cargo:rerun-if-changed={}", path.display());
        let src = std::fs::read_to_string(&path).expect("a library file");
        let src: &'static str = Box::leak(src.into_boxed_str());
        let s = decl_scan::scan(src);
        let opts = bt_syntax::syntax::Options {
            allow_primitives: true,
        };
        let (module, _) = bt_syntax::syntax::parse_library(src, opts);
        let image = bt_syntax::syntax::image::encode(&module, src);
        std::fs::write(out_dir.join(format!("{n}.image")), image).expect("write an image");
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
    out.push_str(
        "/// Each file's syntax tree as an image (`syntax::image`), in `SCANNED`'s order.\n\
         pub(crate) static IMAGES: &[&[u8]] = &[\n",
    );
    for n in &names {
        let _ = writeln!(
            out,
            "    include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{n}.image\")),"
        );
    }
    out.push_str("];\n");
    std::fs::write(out_dir.join("stdlib_index.rs"), out).expect("write the index");
}
