//! The REPL's tab completion and `:help` (pure functions over the session's text, so they
//! are tested without a terminal). Completion offers the selectors of the receiver before the
//! cursor (its class inferred as `bt lsp` does, from literals, class names and the session's
//! assignments), class names, and `:` commands; `:help` shows the class reference
//! ([`crate::cli::doc`]) for `Class`, `Class>>selector`, `Class class>>selector` or a bare
//! selector (every class defining it), user classes of the session included.

use crate::cli::doc;
use crate::lsp::analysis;

/// The REPL commands (for completion and `:help`).
const COMMANDS: &[&str] = &[":help", ":load", ":quit"];

/// `(start, candidates)` for the word ending at `pos` in `line`, given what the session has
/// entered so far.
pub(crate) fn complete(session: &str, line: &str, pos: usize) -> (usize, Vec<String>) {
    let pos = pos.min(line.len());
    let b = line.as_bytes();
    let mut start = pos;
    while start > 0
        && (b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_' || b[start - 1] == b':')
    {
        start -= 1;
    }
    let prefix = &line[start..pos];
    if line.trim_start().starts_with(':') && !line[..start].contains(' ') {
        let s = line.len() - line.trim_start().len();
        let typed = &line[s..pos];
        return (
            s,
            COMMANDS
                .iter()
                .filter(|c| c.starts_with(typed))
                .map(|c| c.to_string())
                .collect(),
        );
    }
    let text = format!("{session}\n{}", &line[..start]);
    let classes = analysis::classes_with(session);
    let mut out: Vec<String> = match analysis::receiver_type(&text, text.len()) {
        Some((class, side)) if classes.contains_key(&class) && start > 0 => {
            analysis::selectors_of(&classes, &class, side)
                .into_iter()
                .map(|(s, _, _)| s)
                .filter(|s| s.starts_with(prefix))
                .collect()
        }
        _ => classes
            .keys()
            .filter(|k| k.starts_with(prefix) && !prefix.is_empty())
            .cloned()
            .collect(),
    };
    out.sort();
    out.dedup();
    (start, out)
}

/// The text `:help TOPIC` prints.
pub(crate) fn help(session: &str, topic: &str) -> String {
    let topic = topic.trim();
    let classes = analysis::classes_with(session);
    if let Some((cls, sel)) = topic.split_once(">>") {
        let (cls, side) = match cls.trim().strip_suffix(" class") {
            Some(c) => (c.trim(), true),
            None => (cls.trim(), false),
        };
        let sel = sel.trim();
        let Some(d) = classes.get(cls) else {
            return format!("no class {cls}");
        };
        // The method, or the nearest inherited definition.
        let mut cur = Some(d);
        while let Some(c) = cur {
            if let Some(m) = c.method(sel, side) {
                let owner = if c.name == cls {
                    String::new()
                } else {
                    format!("  (inherited from {})", c.name)
                };
                let side = if side { " class" } else { "" };
                return format!(
                    "{cls}{side} >> {}{owner}\n\n{}",
                    m.header,
                    doc::clean_doc(&m.doc)
                )
                .trim_end()
                .to_string();
            }
            let prims = if side {
                &c.class_primitives
            } else {
                &c.primitives
            };
            if prims.iter().any(|p| p == sel) {
                return format!(
                    "{}{} >> {sel}  (built in, no documentation)",
                    c.name,
                    if side { " class" } else { "" }
                );
            }
            cur = c.superclass.as_ref().and_then(|s| classes.get(s));
        }
        return format!("{cls} does not understand {sel}");
    }
    if let Some(d) = classes.get(topic) {
        return doc::to_markdown(d);
    }
    // A selector: every class defining it.
    let mut hits = Vec::new();
    for d in classes.values() {
        for m in d.methods.iter().filter(|m| m.selector == topic) {
            let side = if m.class_side { " class" } else { "" };
            hits.push(format!(
                "{}{side} >> {}    {}",
                d.name,
                m.header,
                doc::summary(&m.doc)
            ));
        }
        if d.primitives.iter().any(|p| p == topic) {
            hits.push(format!("{} >> {topic}    (built in)", d.name));
        }
    }
    if hits.is_empty() {
        format!("nothing named {topic} (try :help Class or :help Class>>selector)")
    } else {
        hits.join("\n")
    }
}

/// Markdown (a class page, a method's documentation) as plain text for a terminal: headings
/// underlined (`#`: `=`, `##`: `-`; deeper ones as they are), code blocks indented four
/// spaces without their fences, `[text](link)` as its text, backticks of inline code dropped.
pub(crate) fn terminal_text(md: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            out.push_str("    ");
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let text = inline(line[hashes..].trim());
            out.push_str(&text);
            out.push('\n');
            if hashes <= 2 {
                let mark = if hashes == 1 { "=" } else { "-" };
                out.push_str(&mark.repeat(text.chars().count()));
                out.push('\n');
            }
            continue;
        }
        out.push_str(&inline(line));
        out.push('\n');
    }
    out.trim_end().to_string()
}

/// One line of Markdown text: links as their text, inline-code backticks dropped.
fn inline(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(i) = rest.find(['[', '`']) {
        out.push_str(&rest[..i]);
        let r = &rest[i..];
        if let Some(code) = r.strip_prefix('`') {
            match code.find('`') {
                Some(j) => {
                    out.push_str(&code[..j]);
                    rest = &code[j + 1..];
                }
                None => {
                    out.push_str(r);
                    rest = "";
                }
            }
            continue;
        }
        // `[text](target)`
        let link = r[1..].find("](").and_then(|j| {
            let close = r[1 + j + 2..].find(')')?;
            Some((&r[1..1 + j], 1 + j + 2 + close + 1))
        });
        match link {
            Some((text, len)) if !text.contains('[') => {
                out.push_str(&inline(text));
                rest = &r[len..];
            }
            _ => {
                out.push('[');
                rest = &r[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_renders_markdown_for_a_terminal() {
        let md = "# Integer\n\n`Number subclass: Integer` — inherits from [Number](Number.md)\n\n```bt\n3 ** 2\n// => 9\n```\n\n## Instance side\n\n### `gcd: n`\n\nThe [greatest](x.md) common divisor.";
        assert_eq!(
            terminal_text(md),
            "Integer\n=======\n\nNumber subclass: Integer — inherits from Number\n\n    3 ** 2\n    // => 9\n\nInstance side\n-------------\n\ngcd: n\n\nThe greatest common divisor."
        );
    }

    #[test]
    fn completes_selectors_by_receiver() {
        let (s, c) = complete("", "\"abc\" rev", 9);
        assert_eq!(s, 6);
        assert!(c.contains(&"reversed".to_string()), "{c:?}");
        let session = "Value subclass: P\n  field: x = 0\n  norm => 1\np := P new\n";
        let (_, c) = complete(session, "p nor", 5);
        assert_eq!(c, vec!["norm".to_string()]);
        let (_, c) = complete(session, "P ne", 4);
        assert!(c.contains(&"new".to_string()), "{c:?}");
        let (_, c) = complete("", "Dictio", 6);
        assert_eq!(c, vec!["Dictionary".to_string()]);
        let (s, c) = complete("", ":lo", 3);
        assert_eq!((s, c), (0, vec![":load".to_string()]));
    }

    #[test]
    fn help_topics() {
        assert!(help("", "Integer").starts_with("# Integer"));
        let h = help("", "Integer>>factorial");
        assert!(h.starts_with("Integer >> factorial -> Integer"), "{h}");
        assert!(h.contains("negative receiver"), "{h}");
        let h = help("", "Integer>>isNil");
        assert!(
            h.contains("Object >> isNil") || h.contains("(inherited from Object)"),
            "{h}"
        );
        assert!(help("", "factorial").contains("Integer >> factorial"));
        assert!(help("", "Nope>>x").starts_with("no class Nope"));
        let session = "Object subclass: A\n  /// Says hi.\n  hi => 1\n";
        assert!(help(session, "A>>hi").contains("Says hi."));
    }
}
