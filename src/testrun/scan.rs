//! A small lexical scanner that answers the two questions the expression-file splitter asks
//! (LANGUAGE.md 11.1 with 2.1): is this text syntactically incomplete, and does the next line
//! continue it?
//!
//! It tracks brackets, strings (with `""`, backslash pairs and `{…}` interpolation), character
//! literals, quoted symbols and comments, and remembers the class of the last significant
//! token. It never fails: anything it does not recognise is an ordinary operand.

/// What the last significant token was, as far as continuation is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Last {
    /// Nothing yet, or a statement separator (`.`).
    Nothing,
    /// A complete operand or closing bracket.
    Operand,
    /// Something that cannot end a statement: an opening bracket, a binary operator, a
    /// keyword, `:=`, `::`, `=>`, `,`, `;` or `^`.
    Dangling,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frame {
    Bracket(char),
    Str,
    Interp,
}

const OP_CHARS: &str = "+-*/<>=~%&?,\\";

fn is_op(c: char) -> bool {
    OP_CHARS.contains(c)
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// True when `src` cannot end here: an open bracket, an unterminated string, block comment or
/// quoted symbol, or a trailing operator, keyword, `:=`, `=>`, `,`, `;` or `^`.
pub fn needs_more(src: &str) -> bool {
    let chars: Vec<char> = src.chars().collect();
    let mut stack: Vec<Frame> = Vec::new();
    let mut last = Last::Nothing;
    let mut i = 0;
    let n = chars.len();
    while i < n {
        let c = chars[i];
        if stack.last() == Some(&Frame::Str) {
            match c {
                '"' if i + 1 < n && chars[i + 1] == '"' => i += 2,
                '"' => {
                    stack.pop();
                    i += 1;
                }
                '\\' => i += 2,
                '{' => {
                    stack.push(Frame::Interp);
                    i += 1;
                }
                _ => i += 1,
            }
            continue;
        }
        let next = chars.get(i + 1).copied();
        match c {
            c if c.is_whitespace() => i += 1,
            '/' if next == Some('/') => {
                while i < n && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if next == Some('*') => {
                i += 2;
                loop {
                    if i + 1 >= n {
                        return true; // unterminated block comment
                    }
                    if chars[i] == '*' && chars[i + 1] == '/' {
                        i += 2;
                        break;
                    }
                    i += 1;
                }
            }
            '"' => {
                stack.push(Frame::Str);
                last = Last::Operand;
                i += 1;
            }
            '$' => {
                i += if next == Some('\\') { 3 } else { 2 };
                last = Last::Operand;
            }
            '#' => match next {
                Some(b @ ('(' | '[' | '{')) => {
                    stack.push(Frame::Bracket(closer(b)));
                    last = Last::Dangling;
                    i += 2;
                }
                Some('\'') => {
                    i += 2;
                    loop {
                        if i >= n {
                            return true; // unterminated quoted symbol
                        }
                        if chars[i] == '\'' {
                            if chars.get(i + 1) == Some(&'\'') {
                                i += 2;
                                continue;
                            }
                            i += 1;
                            break;
                        }
                        i += 1;
                    }
                    last = Last::Operand;
                }
                _ => {
                    i += 1;
                    if i < n && is_op(chars[i]) {
                        while i < n && is_op(chars[i]) {
                            i += 1;
                        }
                    } else {
                        while i < n && (is_ident(chars[i]) || chars[i] == ':') {
                            i += 1;
                        }
                    }
                    last = Last::Operand;
                }
            },
            '(' | '[' | '{' => {
                stack.push(Frame::Bracket(closer(c)));
                last = Last::Dangling;
                i += 1;
            }
            ')' | ']' | '}' => {
                match stack.last() {
                    Some(Frame::Interp) if c == '}' => {
                        stack.pop(); // back inside the string
                    }
                    Some(Frame::Bracket(b)) if *b == c => {
                        stack.pop();
                    }
                    _ => {} // stray closer: a parse error for the parser to report
                }
                last = Last::Operand;
                i += 1;
            }
            ':' => {
                // `:=` and `::` dangle; a lone `:` marks a block parameter (`[:x`).
                if matches!(next, Some('=') | Some(':')) {
                    last = Last::Dangling;
                    i += 2;
                } else {
                    last = Last::Operand;
                    i += 1;
                }
            }
            '=' if next == Some('>') => {
                last = Last::Dangling;
                i += 2;
            }
            '=' if next == Some(':') && chars.get(i + 2) == Some(&'=') => {
                last = Last::Dangling;
                i += 3;
            }
            ';' | '^' => {
                last = Last::Dangling;
                i += 1;
            }
            '.' => {
                last = Last::Nothing;
                while i < n && chars[i] == '.' {
                    i += 1;
                }
            }
            '-' if next.is_some_and(|d| d.is_ascii_digit()) => {
                i = skip_number(&chars, i + 1);
                last = Last::Operand;
            }
            c if is_op(c) => {
                while i < n && is_op(chars[i]) {
                    if chars[i] == '/' && chars.get(i + 1) == Some(&'/') {
                        break;
                    }
                    i += 1;
                }
                last = Last::Dangling;
            }
            c if c.is_ascii_digit() => {
                i = skip_number(&chars, i);
                last = Last::Operand;
            }
            c if is_ident_start(c) => {
                while i < n && is_ident(chars[i]) {
                    i += 1;
                }
                if i < n && chars[i] == '@' && chars.get(i + 1).is_some_and(|&x| is_ident_start(x))
                {
                    i += 1;
                    while i < n && is_ident(chars[i]) {
                        i += 1;
                    }
                }
                let keyword =
                    i < n && chars[i] == ':' && !matches!(chars.get(i + 1), Some('=') | Some(':'));
                if keyword {
                    i += 1;
                    last = Last::Dangling;
                } else {
                    last = Last::Operand;
                }
            }
            '@' => {
                // A directive (`@expect cat`) stands alone on its line.
                i += 1;
                while i < n && is_ident(chars[i]) {
                    i += 1;
                }
                last = Last::Nothing;
            }
            _ => {
                last = Last::Operand;
                i += 1;
            }
        }
    }
    !stack.is_empty() || last == Last::Dangling
}

fn closer(open: char) -> char {
    match open {
        '(' => ')',
        '[' => ']',
        _ => '}',
    }
}

/// Skips a number literal starting at `i` (digits, radix, fraction, exponent).
fn skip_number(chars: &[char], mut i: usize) -> usize {
    let n = chars.len();
    while i < n && chars[i].is_ascii_digit() {
        i += 1;
    }
    if i < n && chars[i] == 'r' {
        i += 1;
        while i < n && chars[i].is_ascii_alphanumeric() {
            i += 1;
        }
        return i;
    }
    if i + 1 < n && chars[i] == '.' && chars[i + 1].is_ascii_digit() {
        i += 1;
        while i < n && chars[i].is_ascii_digit() {
            i += 1;
        }
    }
    if i < n && (chars[i] == 'e' || chars[i] == 'E') {
        let mut j = i + 1;
        if j < n && (chars[j] == '+' || chars[j] == '-') {
            j += 1;
        }
        if j < n && chars[j].is_ascii_digit() {
            i = j;
            while i < n && chars[i].is_ascii_digit() {
                i += 1;
            }
        }
    }
    i
}

/// True when a line starting with `next` continues the statement before it (2.1): it starts
/// with a closing bracket, a binary operator, a keyword, or `;`.
pub fn line_continues(next: &str) -> bool {
    let t = next.trim_start();
    let mut it = t.chars();
    let Some(c) = it.next() else { return false };
    let second = it.next();
    match c {
        ')' | ']' | '}' | ';' => true,
        '/' if matches!(second, Some('/') | Some('*')) => false,
        '-' if second.is_some_and(|d| d.is_ascii_digit()) => false,
        '=' if second == Some('>') => false,
        '=' if second == Some(':') => true,
        c if is_op(c) => true,
        c if is_ident_start(c) => {
            let rest: String = t.chars().skip_while(|&x| is_ident(x)).take(2).collect();
            rest.starts_with(':') && !rest.starts_with(":=") && !rest.starts_with("::")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complete_expressions() {
        for s in [
            "3 + 4",
            "x := 3",
            "#(1, 2) collect: [:x | x * 10]",
            "\"a string\"",
            "$( printString",
            "#foo:bar:",
            "#+",
            "#'quoted ) sym'",
            "3 - -2",
            "x foo!",
            "a := 1. b := 2.",
            "\"interp {x + 1} done\"",
            "\"nested {\"inner {y}\"} s\"",
            "\"a\"\"b\"",
            "\"a\\\"b\"",
            "x // trailing comment +",
            "/* block ( */ 3",
            "3.",
            "2.5e-3",
            "16rFF",
        ] {
            assert!(!needs_more(s), "should be complete: {s}");
        }
    }

    #[test]
    fn incomplete_expressions() {
        for s in [
            "#(1, 2",
            "[:x | x",
            "(3 +",
            "3 +",
            "x :=",
            "d at: 1 put:",
            "foo at:",
            "\"unterminated",
            "\"open {interp",
            "Transcript show: \"a\";",
            "#(1,",
            "^",
            "/* open comment",
            "#'open sym",
            "x :: ",
            "#{#a =>",
            "a =:=",
        ] {
            assert!(needs_more(s), "should be incomplete: {s}");
        }
    }

    #[test]
    fn continuation_lines() {
        for s in [
            "  ++ \"b\"",
            ") foo",
            "] value",
            "; cr",
            "withId: #x",
            "  to: 10",
            "=:= 3",
        ] {
            assert!(line_continues(s), "should continue: {s}");
        }
        for s in [
            "x foo",
            "-1",
            "// comment",
            "// => 3",
            "(3 + 4)",
            "[1] value",
            "x := 3",
            "#(1)",
            "\"s\"",
            "$a",
            "^ 3",
            "@expect dnu",
            "",
            "x::Integer := 3",
        ] {
            assert!(!line_continues(s), "should not continue: {s}");
        }
    }
}
