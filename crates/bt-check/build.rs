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
    let mut images: Vec<Vec<u8>> = Vec::new();
    let mut scans = Vec::new();
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
        images.push(bt_syntax::syntax::image::encode(&module, src));
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
        scans.push(s);
    }
    out.push_str("];\n");
    // The images in one run, those of the files nearly every program reads first (the
    // closure of the classes `interp::interpreter` takes in beside start-up) so that they
    // share as few pages as they can.
    let common = closure(&scans, &["String", "Integer", "TranscriptStream"]);
    let mut order: Vec<usize> = common.clone();
    order.extend((0..names.len()).filter(|i| !common.contains(i)));
    let mut blob = Vec::new();
    let mut place = vec![(0, 0); names.len()];
    for i in order {
        place[i] = (blob.len(), blob.len() + images[i].len());
        blob.extend_from_slice(&images[i]);
    }
    std::fs::write(out_dir.join("stdlib.images"), blob).expect("write the images");
    out.push_str(
        "/// Every file's syntax tree as an image (`syntax::image`), one after another.\n\
         pub(crate) static IMAGE_BLOB: &[u8] = \
         include_bytes!(concat!(env!(\"OUT_DIR\"), \"/stdlib.images\"));\n\
         /// Where each file's image lies in `IMAGE_BLOB`, in `SCANNED`'s order.\n\
         pub(crate) static IMAGES: &[(usize, usize)] = &[\n",
    );
    for (a, b) in place {
        let _ = writeln!(out, "    ({a}, {b}),");
    }
    out.push_str("];\n");
    std::fs::write(out_dir.join("stdlib_index.rs"), out).expect("write the index");
}

/// The files (indexes of `scans`) that declare or extend `classes`, their superclasses, and
/// the same for every class those files declare or extend (`check::library::Index::closure`).
fn closure(scans: &[decl_scan::Scanned<'_>], classes: &[&str]) -> Vec<usize> {
    let mut files = vec![false; scans.len()];
    let mut todo: Vec<String> = classes.iter().map(|c| c.to_string()).collect();
    let mut seen = std::collections::HashSet::new();
    while let Some(c) = todo.pop() {
        if !seen.insert(c.clone()) {
            continue;
        }
        for (f, s) in scans.iter().enumerate() {
            for (d, sup) in &s.classes {
                if *d == c {
                    todo.push(sup.to_string());
                }
            }
            let here = s.classes.iter().any(|(d, _)| *d == c) || s.extends.iter().any(|d| *d == c);
            if here && !files[f] {
                files[f] = true;
                todo.extend(s.classes.iter().map(|(d, _)| d.to_string()));
                todo.extend(s.extends.iter().map(|d| d.to_string()));
            }
        }
    }
    (0..scans.len()).filter(|&f| files[f]).collect()
}
