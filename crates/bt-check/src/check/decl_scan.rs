//! What a library file declares, read from its column-0 lines without parsing it (classes
//! with their superclasses, classes its standalone methods extend, protocols, type aliases).
//! The build script runs it over `stdlib/*.bt` to make the library's index
//! (`check::library::index`); `check::library::tests` holds it to the parser's view.
//! Self-contained: the build script includes this file as a module of its own.

/// The declarations of one file's text, in its order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Scanned<'a> {
    /// (class, superclass).
    pub(crate) classes: Vec<(&'a str, &'a str)>,
    /// Classes extended by standalone methods (`Foo >> bar`, `Foo class >> bar`), once each.
    pub(crate) extends: Vec<&'a str>,
    pub(crate) protocols: Vec<&'a str>,
    pub(crate) aliases: Vec<&'a str>,
}

/// The name at the start of `t` (letters, digits, `_`): `Foo(E)` → `Foo`.
fn name_of(t: &str) -> &str {
    let end = t
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(t.len());
    &t[..end]
}

/// See [`Scanned`].
pub(crate) fn scan(src: &str) -> Scanned<'_> {
    let mut out = Scanned::default();
    for line in src.lines() {
        let Some(first) = line.bytes().next() else {
            continue;
        };
        if first.is_ascii_whitespace() || first == b'/' {
            continue;
        }
        let toks: Vec<&str> = line.split_whitespace().collect();
        if let Some(k) = toks.iter().position(|t| *t == "subclass:") {
            if k >= 1 && k + 1 < toks.len() {
                out.classes
                    .push((name_of(toks[k + 1]), name_of(toks[k - 1])));
            }
        } else if toks.len() >= 3 && toks[0] == "Protocol" && toks[1] == "define:" {
            out.protocols.push(name_of(toks[2]));
        } else if toks.len() >= 2 && toks[0] == "type" {
            out.aliases.push(name_of(toks[1]));
        } else if toks.len() >= 2
            && (toks[1] == ">>" || (toks[1] == "class" && toks.get(2) == Some(&">>")))
        {
            let n = name_of(toks[0]);
            if !out.extends.contains(&n) {
                out.extends.push(n);
            }
        }
    }
    out
}
