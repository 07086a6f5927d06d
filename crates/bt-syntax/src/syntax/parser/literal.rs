//! Literal tokens to AST: integers (decimal, radix, arbitrary size), floats, characters,
//! symbols, and strings with `{expr}` interpolation.

use super::expr::mk;
use super::{PResult, Parser};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::*;
use crate::syntax::lexer::{self, char_value};
use crate::syntax::token::Tok;
use num_bigint::BigInt;

/// Integer value of a decimal or radix literal (`-16rFF`).
pub(crate) fn int_value(text: &str, radix_form: bool) -> ExprKind {
    // The usual literal: up to 18 decimal digits always fits an i64.
    if !radix_form && text.len() <= 18 {
        let (neg, digits) = match text.as_bytes() {
            [b'-', rest @ ..] => (true, rest),
            all => (false, all),
        };
        if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) {
            let v = digits
                .iter()
                .fold(0i64, |v, &d| v * 10 + i64::from(d - b'0'));
            return ExprKind::Int(if neg { -v } else { v });
        }
    }
    let (neg, t) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (radix, digits) = if radix_form {
        match t.split_once('r') {
            Some((r, d)) => (r.parse::<u32>().unwrap_or(10), d),
            None => (10, t),
        }
    } else {
        (10, t)
    };
    if let Ok(v) = i64::from_str_radix(digits, radix) {
        return ExprKind::Int(if neg { -v } else { v });
    }
    if neg {
        // i64::MIN has no positive counterpart.
        if let Ok(v) = i64::from_str_radix(&format!("-{digits}"), radix) {
            return ExprKind::Int(v);
        }
    }
    match BigInt::parse_bytes(digits.as_bytes(), radix) {
        Some(b) => ExprKind::BigInt(Box::new(if neg { -b } else { b })),
        None => ExprKind::Error,
    }
}

/// The most digits a literal in a radix that is not a power of two may have:
/// converting decimal digits to binary costs time quadratic in their number (4M digits took
/// 24 s), so a longer literal is a compile error rather than a front end that stalls. Like
/// Python's 4300-digit limit on `int(str)`, but in the source only; power-of-two radixes
/// (`16r…`, `2r…`) convert in linear time and have no limit.
pub(crate) const MAX_LITERAL_DIGITS: usize = 10_000;

/// E0101 when an Integer literal has more digits than [`MAX_LITERAL_DIGITS`] in a radix
/// that is not a power of two.
fn literal_too_long(text: &str, radix_form: bool, span: Span) -> Option<Diagnostic> {
    if !radix_form && text.len() <= MAX_LITERAL_DIGITS {
        return None;
    }
    let t = text.trim_start_matches('-');
    let (radix, digits) = match t.split_once('r') {
        Some((r, d)) if radix_form => (r.parse::<u32>().unwrap_or(10), d),
        _ => (10, t),
    };
    if radix.is_power_of_two() || digits.len() <= MAX_LITERAL_DIGITS {
        return None;
    }
    Some(
        Diagnostic::error(
            "E0101",
            format!(
                "Integer literal too long: {} digits (at most {MAX_LITERAL_DIGITS} in radix {radix})",
                digits.len()
            ),
            span,
        )
        .with_label("too many digits")
        .with_hint("write it in radix 16 (`16r…`), or compute it at run time"),
    )
}

impl<'s> Parser<'s> {
    /// The current literal token as an expression.
    pub(crate) fn literal(&mut self) -> PResult<Expr> {
        let t = self.bump();
        let text = &self.src[t.span().range()];
        let span = t.span();
        let kind = match t.kind {
            Tok::Int | Tok::RadixInt => {
                let radix_form = t.kind == Tok::RadixInt;
                match literal_too_long(text, radix_form, span) {
                    Some(d) => {
                        self.report(d);
                        ExprKind::Error
                    }
                    None => int_value(text, radix_form),
                }
            }
            Tok::Float => match text.parse::<f64>() {
                Ok(f) if f.is_finite() => ExprKind::Float(f),
                _ => {
                    self.report(
                        Diagnostic::error("E0308", "float literal is not finite", span)
                            .with_label("this does not fit in a double")
                            .with_hint("bt has no infinity; use a smaller exponent"),
                    );
                    ExprKind::Error
                }
            },
            Tok::Char => ExprKind::Char(char_value(text)),
            Tok::Symbol => ExprKind::Symbol(Name::new(&text[1..])),
            Tok::QuotedSymbol => {
                let inner = &text[2..text.len() - 1];
                ExprKind::Symbol(Name::from(inner.replace("''", "'")))
            }
            Tok::Str => return Ok(self.string(span)),
            _ => ExprKind::Error,
        };
        Ok(mk(kind, span))
    }

    /// A string literal: plain, or interpolated with `{expr}` parts.
    fn string(&mut self, span: Span) -> Expr {
        let src = self.src;
        let b = src.as_bytes();
        let (start, end) = (span.start as usize + 1, span.end as usize - 1);
        let mut parts: Vec<InterpPart> = Vec::new();
        // Inline up to 24 bytes: a short literal without escapes costs no allocation.
        let mut buf = Name::const_new("");
        let mut run = start;
        let mut i = start;
        let mut bad = false;
        while i < end {
            match b[i] {
                b'"' => {
                    buf.push_str(&src[run..i + 1]);
                    i += 2;
                    run = i;
                }
                b'\\' => {
                    let next = b.get(i + 1).copied();
                    if matches!(next, Some(b'{') | Some(b'}')) {
                        buf.push_str(&src[run..i]);
                        run = i + 1;
                        i += 2;
                    } else {
                        // Keep both characters (`\"` does not end the string).
                        i += 2;
                    }
                }
                b'{' => {
                    buf.push_str(&src[run..i]);
                    if b.get(i + 1) == Some(&b'{') {
                        self.report(
                            Diagnostic::error(
                                "E0101",
                                "`{{` is not allowed in a string",
                                Span::new(i, i + 2),
                            )
                            .with_hint("write `\\{` for a literal brace"),
                        );
                        bad = true;
                    }
                    match lexer::scan_interp(&b[..end], i + 1) {
                        Some(j) if j == i + 1 => {
                            self.report(
                                Diagnostic::error("E0101", "empty interpolation `{}`", Span::new(i, j + 1))
                                    .with_hint("put an expression inside the braces, or write `\\{}` for literal braces"),
                            );
                            bad = true;
                            i = j + 1;
                        }
                        Some(j) => {
                            if !buf.is_empty() {
                                parts.push(InterpPart::Lit(std::mem::take(&mut buf).into()));
                            }
                            if !bad {
                                parts.push(InterpPart::Expr(self.interpolated(i + 1, j)));
                            }
                            i = j + 1;
                        }
                        None => {
                            self.report(
                                Diagnostic::error(
                                    "E0101",
                                    "unterminated interpolation in string",
                                    Span::new(i, i + 1),
                                )
                                .with_label("this `{` is never closed")
                                .with_hint("close it with `}`, or write `\\{` for a literal brace"),
                            );
                            bad = true;
                            i = end;
                        }
                    }
                    run = i;
                }
                _ => i += 1,
            }
        }
        if run < end {
            buf.push_str(&src[run..end]);
        }
        if bad {
            return mk(ExprKind::Error, span);
        }
        if parts.is_empty() {
            return mk(ExprKind::Str(buf), span);
        }
        if !buf.is_empty() {
            parts.push(InterpPart::Lit(buf.into()));
        }
        mk(ExprKind::Interp(parts), span)
    }

    /// Parses the text of one interpolation `src[a..b]` as an expression.
    fn interpolated(&mut self, a: usize, b: usize) -> Expr {
        let lexed = lexer::lex_range(self.src, a, b, false);
        let mut sub = Parser::new(self.src, lexed, self.opts, self.depth + 4);
        let e = match sub.expr() {
            Ok(e) => {
                if sub.peek() != Tok::Eof {
                    let t = sub.tok();
                    if t.kind == Tok::Str {
                        // `"{""a"": 1}"`: braces meant literally (JSON in a string).
                        sub.report(
                            Diagnostic::error(
                                "E0101",
                                "a string inside `{…}`: braces in a string interpolate an expression",
                                t.span(),
                            )
                            .with_hint(
                                "`{expr}` in a string inserts the value of expr; write `\\{` for a literal brace",
                            ),
                        );
                    } else if t.kind != Tok::Error {
                        let msg = format!("unexpected {} in interpolation", sub.found());
                        sub.report(
                            Diagnostic::error("E0101", msg, t.span())
                                .with_hint("an interpolation holds one expression"),
                        );
                    }
                    mk(ExprKind::Error, Span::new(a, b))
                } else {
                    e
                }
            }
            Err(_) => mk(ExprKind::Error, Span::new(a, b)),
        };
        self.diags.append(&mut sub.diags);
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_decimal_literals_take_the_fast_path_with_the_same_value() {
        for t in [
            "0",
            "007",
            "-0",
            "42",
            "-42",
            "999999999999999999",
            "-999999999999999999",
            "9223372036854775807",
            "-9223372036854775808",
        ] {
            let want: i64 = t.parse().unwrap();
            assert!(
                matches!(int_value(t, false), ExprKind::Int(v) if v == want),
                "{t}"
            );
        }
        assert!(matches!(
            int_value("9223372036854775808", false),
            ExprKind::BigInt(_)
        ));
        assert!(matches!(int_value("16rFF", true), ExprKind::Int(255)));
    }
}
