//! `// =>` expectations: parsing, unescaping, `_` wildcards and `ERROR:`
//! matching, plus the inverse escaping used when blessing.

/// What a `// =>` line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expectation {
    /// `// => TEXT`: the top-level display must match TEXT (raw, still escaped).
    Value(String),
    /// `// => ERROR: X`: the evaluation must raise an error matching X (unescaped).
    Error(String),
}

impl Expectation {
    /// Parses the text after `// =>`; None when it is not an expectation line at all.
    pub(crate) fn parse_line(line: &str) -> Option<Expectation> {
        let rest = line.trim().strip_prefix("// =>")?;
        let text = rest.trim();
        if let Some(x) = text.strip_prefix("ERROR:") {
            return Some(Expectation::Error(unescape(x.trim())));
        }
        Some(Expectation::Value(text.to_string()))
    }

    /// The text as shown in reports (`ERROR: X` or the raw pattern).
    pub(crate) fn describe(&self) -> String {
        match self {
            Expectation::Value(t) => t.clone(),
            Expectation::Error(x) if x.is_empty() => "ERROR:".to_string(),
            Expectation::Error(x) => format!("ERROR: {x}"),
        }
    }
}

/// Replaces `\n`, `\t`, `\\` and `\"` by a line end, a tab, a backslash and a quote; any other
/// backslash stays as it is.
pub(crate) fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.peek() {
                Some('n') => {
                    out.push('\n');
                    it.next();
                }
                Some('t') => {
                    out.push('\t');
                    it.next();
                }
                Some('\\') => {
                    out.push('\\');
                    it.next();
                }
                Some('"') => {
                    out.push('"');
                    it.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The inverse of [`unescape`] for writing an actual display back as an expectation.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

/// One unit of a pattern: a literal character or a wildcard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Lit(char),
    Any,
}

/// Splits a raw expectation into literal segments separated by wildcards. Escapes are decoded
/// first; a `_` is literal when it has a letter or digit on both sides.
fn segments(pattern: &str) -> Vec<String> {
    // Decode escapes while remembering which characters came from a bare `_`.
    let mut units: Vec<(char, bool)> = Vec::new(); // (char, is bare underscore)
    let mut it = pattern.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\\' {
            let decoded = match it.peek() {
                Some('n') => Some('\n'),
                Some('t') => Some('\t'),
                Some('\\') => Some('\\'),
                Some('"') => Some('"'),
                _ => None,
            };
            match decoded {
                Some(d) => {
                    it.next();
                    units.push((d, false));
                }
                None => units.push(('\\', false)),
            }
        } else {
            units.push((c, c == '_'));
        }
    }
    let alnum = |i: Option<usize>| {
        i.and_then(|i| units.get(i))
            .is_some_and(|u| u.0.is_alphanumeric())
    };
    let mut parts: Vec<Unit> = Vec::with_capacity(units.len());
    for (i, &(c, bare)) in units.iter().enumerate() {
        if bare && !(alnum(i.checked_sub(1)) && alnum(Some(i + 1))) {
            parts.push(Unit::Any);
        } else {
            parts.push(Unit::Lit(c));
        }
    }
    let mut segs = vec![String::new()];
    for p in parts {
        match p {
            Unit::Any => segs.push(String::new()),
            Unit::Lit(c) => segs.last_mut().expect("never empty").push(c),
        }
    }
    segs
}

/// True when `actual` matches the raw expectation `pattern` (the wildcard rules of `// =>` lines).
pub(crate) fn matches(pattern: &str, actual: &str) -> bool {
    let segs = segments(pattern);
    if segs.len() == 1 {
        return actual == segs[0];
    }
    let first = &segs[0];
    let last = &segs[segs.len() - 1];
    if !actual.starts_with(first.as_str()) {
        return false;
    }
    let mut pos = first.len();
    for mid in &segs[1..segs.len() - 1] {
        match actual[pos..].find(mid.as_str()) {
            Some(off) => pos += off + mid.len(),
            None => return false,
        }
    }
    actual.len() >= pos + last.len() && actual.ends_with(last.as_str())
}

/// The parts of an error that `ERROR: X` and `should:raise:` look at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ErrorFacts {
    pub(crate) class_name: String,
    pub(crate) kind: String,
    pub(crate) message: String,
    pub(crate) hint: Option<String>,
    /// An arithmetic fault (raw reason `badarith`).
    pub(crate) badarith: bool,
    /// A compile error; `messages` holds every diagnostic message.
    pub(crate) compile: bool,
    pub(crate) messages: Vec<String>,
    /// The bt stack (`BtError::traceback`), shown for a case that failed with an error.
    pub(crate) traceback: String,
    /// The operation of an arithmetic fault (`BtError::detail`), shown under the first line.
    pub(crate) detail: Option<String>,
    /// The source line with a caret under the failing send (`BtError::excerpt`), shown
    /// under the detail.
    pub(crate) excerpt: Option<String>,
}

impl ErrorFacts {
    /// `ERROR: X` matches when X is the kind (an arithmetic fault also answers to `badarith`
    /// and `type_error`), the class name, or a substring of the message.
    pub(crate) fn matches(&self, x: &str) -> bool {
        if x.is_empty() {
            return false;
        }
        let x = x.strip_prefix('#').filter(|r| !r.is_empty()).unwrap_or(x);
        if self.kind == x || self.class_name == x {
            return true;
        }
        if self.badarith && (x == "badarith" || x == "type_error") {
            return true;
        }
        if self.message.contains(x) || self.messages.iter().any(|m| m.contains(x)) {
            return true;
        }
        // X with a `_` wildcard (the rule: not between letters or digits, so kinds such as
        // `does_not_understand` stay literal) matches anywhere in the message: `ERROR: _`
        // accepts any error, `ERROR: Cannot _ sealed` a message holding both parts in order.
        if segments(x).len() > 1 {
            let anywhere = format!("_{x}_");
            return matches(&anywhere, &self.message)
                || self.messages.iter().any(|m| matches(&anywhere, m));
        }
        false
    }

    /// `ClassName (kind): message` with a `Hint:` line, as in the report of 3.5.
    pub(crate) fn describe(&self) -> String {
        let mut s = if self.compile {
            format!("compile error: {}", self.message)
        } else {
            format!("{} ({}): {}", self.class_name, self.kind, self.message)
        };
        for x in [&self.detail, &self.excerpt].into_iter().flatten() {
            s.push('\n');
            s.push_str(x);
        }
        if let Some(h) = &self.hint {
            s.push_str("\nHint: ");
            s.push_str(h);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_lines() {
        assert_eq!(
            Expectation::parse_line("// => 3"),
            Some(Expectation::Value("3".into()))
        );
        assert_eq!(
            Expectation::parse_line("  // =>   a b  "),
            Some(Expectation::Value("a b".into()))
        );
        assert_eq!(
            Expectation::parse_line("// =>"),
            Some(Expectation::Value(String::new()))
        );
        assert_eq!(
            Expectation::parse_line("// => ERROR: does_not_understand"),
            Some(Expectation::Error("does_not_understand".into()))
        );
        assert_eq!(
            Expectation::parse_line("// => ERROR:"),
            Some(Expectation::Error(String::new()))
        );
        assert_eq!(Expectation::parse_line("// comment"), None);
        assert_eq!(Expectation::parse_line("x // => 3"), None);
    }

    #[test]
    fn unescaping() {
        assert_eq!(unescape(r#"a\nb\tc\\d\"e"#), "a\nb\tc\\d\"e");
        assert_eq!(unescape(r"\x\"), "\\x\\");
        assert_eq!(unescape(&escape("a\\n\nb\t\"")), "a\\n\nb\t\"");
    }

    #[test]
    fn exact_and_wildcards() {
        assert!(matches("3", "3"));
        assert!(!matches("3", "4"));
        assert!(matches("", ""));
        assert!(!matches("", "x"));
        assert!(matches("_", "anything at all"));
        assert!(matches("_", ""));
        assert!(matches("Actor(Counter, _)", "Actor(Counter, 0.7.0)"));
        assert!(!matches("Actor(Counter, _)", "Actor(Timer, 0.7.0)"));
        assert!(matches("<0._.0>", "<0.12.0>"));
        assert!(matches("a_", "abc"));
        assert!(matches("_c", "abc"));
        assert!(matches("a _ c _ e", "a b c d e"));
        assert!(!matches("a _ c _ e", "a b d c e x"));
        // A literal underscore between letters or digits.
        assert!(matches("does_not_understand", "does_not_understand"));
        assert!(!matches("does_not_understand", "does not understand"));
        assert!(matches("x_1", "x_1"));
        assert!(!matches("x_1", "xy1"));
        // Segments must not overlap: "ab _ba" needs at least "ab " + "ba".
        assert!(!matches("ab _ba", "ab a"));
        assert!(matches("ab _ba", "ab ba"));
        // Escapes decode before matching; an escaped neighbour still counts.
        assert!(matches(r"a\n_", "a\nrest"));
        assert!(matches(r"line1\nline2", "line1\nline2"));
    }

    #[test]
    fn error_matching() {
        let e = ErrorFacts {
            class_name: "TypeError".into(),
            kind: "type_error".into(),
            message: "bad arithmetic operation".into(),
            badarith: true,
            ..Default::default()
        };
        assert!(e.matches("badarith"));
        assert!(e.matches("type_error"));
        assert!(e.matches("#type_error"));
        assert!(e.matches("TypeError"));
        assert!(e.matches("arithmetic"));
        assert!(!e.matches("does_not_understand"));
        assert!(!e.matches(""));
        let dnu = ErrorFacts {
            class_name: "RuntimeError".into(),
            kind: "does_not_understand".into(),
            message: "String does not understand '+'".into(),
            ..Default::default()
        };
        assert!(!dnu.matches("badarith"));
        assert!(dnu.matches("does_not_understand"));
        let ce = ErrorFacts {
            class_name: "CompileError".into(),
            kind: "compile_error".into(),
            message: "Undefined variable: y".into(),
            compile: true,
            messages: vec!["Undefined variable: y".into(), "second".into()],
            ..Default::default()
        };
        assert!(ce.matches("Undefined variable"));
        assert!(ce.matches("second"));
        // `_` wildcards in X: anywhere in the message, in order.
        assert!(e.matches("_"));
        assert!(ce.matches("_"));
        assert!(e.matches("bad _ operation"));
        assert!(e.matches("arith_ op"));
        assert!(!e.matches("operation _ bad"));
        assert!(!dnu.matches("does_not_understand_x"));
        assert!(dnu.matches("String _ '+'"));
        assert!(ce.matches("Undefined _: y"));
    }
}
