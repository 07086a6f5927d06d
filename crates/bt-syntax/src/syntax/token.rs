//! Token kinds (the logos automaton) and the [`Token`] record the parser reads.
//!
//! Tokens carry no payload: the parser reads the text through the byte span. Line structure
//! is kept in each token as `line`, `col` and the `FIRST` flag
//! (first token on its line).
//!
//! The `Logos` derive (test builds only: logos is a dev-dependency) is the reference
//! automaton: the lexer and `fmt` run the hand-written `scan::Scanner`, which `scan_tests`
//! checks against the automaton token for token.

#[cfg(test)]
use logos::Logos;

/// Why the lexer produced an error token. `Default` is an unexpected character.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LexError {
    #[default]
    Unexpected,
    UnterminatedString,
    UnterminatedComment,
    UnterminatedSymbol,
    SingleQuote,
    BadChar,
}

/// Token kinds. Variants without a pattern are produced by the wrapper in `lexer.rs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(test, derive(Logos))]
#[cfg_attr(test, logos(error = LexError))]
#[cfg_attr(test, logos(skip r"[ \t\r\n\x0C]+"))]
pub enum Tok {
    #[cfg_attr(test, regex(r"[A-Za-z_][A-Za-z0-9_]*"))]
    Ident,
    /// `at:` — an identifier immediately followed by `:` (not `:=` / `::`). Made by the wrapper.
    Keyword,
    /// `@expect`, `@primitive`, `@intrinsic`.
    #[cfg_attr(test, regex(r"@[A-Za-z_][A-Za-z0-9_]*"))]
    Directive,

    #[cfg_attr(test, regex(r"-?[0-9]+"))]
    Int,
    #[cfg_attr(test, regex(r"-?[0-9]+r[0-9A-Za-z]+"))]
    RadixInt,
    #[cfg_attr(test, regex(r"-?[0-9]+\.[0-9]+([eE][+\-]?[0-9]+)?"))]
    #[cfg_attr(test, regex(r"-?[0-9]+[eE][+\-]?[0-9]+"))]
    Float,
    #[cfg_attr(test, token("\"", callbacks::lex_string))]
    Str,
    #[cfg_attr(test, token("$", callbacks::lex_char))]
    Char,
    /// `#foo`, `#at:put:`, `#+`.
    #[cfg_attr(test, regex(r"#[A-Za-z_][A-Za-z0-9_]*"))]
    #[cfg_attr(test, regex(r"#([A-Za-z_][A-Za-z0-9_]*:)+"))]
    #[cfg_attr(test, regex(r"#[+\-*/<>=~%&?\\]+"))]
    #[cfg_attr(test, token("#,"))]
    #[cfg_attr(test, token("#=:="))]
    Symbol,
    /// `#'any text'`.
    #[cfg_attr(test, token("#'", callbacks::lex_quoted_symbol))]
    QuotedSymbol,
    #[cfg_attr(test, token("#("))]
    HashParen,
    #[cfg_attr(test, token("#["))]
    HashBracket,
    #[cfg_attr(test, token("#{"))]
    HashBrace,
    /// A lone `#` (a lexical error, reported by the wrapper).
    #[cfg_attr(test, token("#"))]
    Hash,

    /// A run of operator characters: `+`, `==`, `<=`, `++`, `=:=` …
    #[cfg_attr(test, regex(r"[+\-*/<>=~%&?\\]+"))]
    #[cfg_attr(test, token("=:=", priority = 10))]
    BinOp,
    /// `->` (binary operator of power 3; also return types and match arms).
    #[cfg_attr(test, token("->", priority = 10))]
    Arrow,
    /// `>>` (binary operator of power 5; also standalone method definitions).
    #[cfg_attr(test, token(">>", priority = 10))]
    ShiftRight,
    /// `<<` (opens a binary pattern).
    #[cfg_attr(test, token("<<", priority = 10))]
    ShiftLeft,
    /// `=>` (method arrow, dictionary entries).
    #[cfg_attr(test, token("=>", priority = 10))]
    FatArrow,
    #[cfg_attr(test, token(":="))]
    Assign,
    #[cfg_attr(test, token("::"))]
    ColonColon,
    #[cfg_attr(test, token(":"))]
    Colon,
    #[cfg_attr(test, token("^"))]
    Caret,
    #[cfg_attr(test, token(";"))]
    Semi,
    #[cfg_attr(test, token("."))]
    Dot,
    #[cfg_attr(test, token("..."))]
    Ellipsis,
    #[cfg_attr(test, token("!"))]
    Bang,
    #[cfg_attr(test, token("|"))]
    Pipe,
    #[cfg_attr(test, token(","))]
    Comma,
    #[cfg_attr(test, token("("))]
    LParen,
    #[cfg_attr(test, token(")"))]
    RParen,
    #[cfg_attr(test, token("["))]
    LBracket,
    #[cfg_attr(test, token("]"))]
    RBracket,
    #[cfg_attr(test, token("{"))]
    LBrace,
    #[cfg_attr(test, token("}"))]
    RBrace,

    /// `// …` (and `/// …`, sorted out by the wrapper).
    #[cfg_attr(test, regex(r"//[^\n]*", priority = 20))]
    LineComment,
    #[cfg_attr(test, token("/*", callbacks::lex_block_comment, priority = 20))]
    BlockComment,
    /// `'…'`: always an error (single-quoted strings are not supported).
    #[cfg_attr(test, token("'", callbacks::lex_single_quote))]
    SingleQuoted,

    /// A documentation comment `/// …` (kept out of the main token vector).
    DocComment,
    /// Bad input; the lexer has already reported it.
    Error,
    /// End of input (or of the region the parser may currently see).
    Eof,
}

impl Tok {
    /// Opening brackets (including the `#` collection openers and `<<`).
    pub fn is_open(self) -> bool {
        matches!(
            self,
            Tok::LParen
                | Tok::LBracket
                | Tok::LBrace
                | Tok::HashParen
                | Tok::HashBracket
                | Tok::HashBrace
        )
    }
    pub fn is_close(self) -> bool {
        matches!(self, Tok::RParen | Tok::RBracket | Tok::RBrace)
    }
    /// Tokens that act as binary selectors in expressions.
    pub fn is_binop(self) -> bool {
        matches!(self, Tok::BinOp | Tok::Arrow | Tok::ShiftRight)
    }
    /// A short human name for messages ("expected …").
    pub fn describe(self) -> &'static str {
        match self {
            Tok::Ident => "identifier",
            Tok::Keyword => "keyword",
            Tok::Directive => "directive",
            Tok::Int | Tok::RadixInt => "integer",
            Tok::Float => "float",
            Tok::Str => "string",
            Tok::Char => "character",
            Tok::Symbol | Tok::QuotedSymbol => "symbol",
            Tok::HashParen => "`#(`",
            Tok::HashBracket => "`#[`",
            Tok::HashBrace => "`#{`",
            Tok::Hash => "`#`",
            Tok::BinOp => "operator",
            Tok::Arrow => "`->`",
            Tok::ShiftRight => "`>>`",
            Tok::ShiftLeft => "`<<`",
            Tok::FatArrow => "`=>`",
            Tok::Assign => "`:=`",
            Tok::ColonColon => "`::`",
            Tok::Colon => "`:`",
            Tok::Caret => "`^`",
            Tok::Semi => "`;`",
            Tok::Dot => "`.`",
            Tok::Ellipsis => "`...`",
            Tok::Bang => "`!`",
            Tok::Pipe => "`|`",
            Tok::Comma => "`,`",
            Tok::LParen => "`(`",
            Tok::RParen => "`)`",
            Tok::LBracket => "`[`",
            Tok::RBracket => "`]`",
            Tok::LBrace => "`{`",
            Tok::RBrace => "`}`",
            Tok::LineComment | Tok::BlockComment | Tok::DocComment => "comment",
            Tok::SingleQuoted => "single-quoted string",
            Tok::Error => "invalid token",
            Tok::Eof => "end of input",
        }
    }
}

/// Token flag: first token on its line.
pub const FIRST: u8 = 1;
/// Token flag: whitespace (or a comment) directly before the token.
pub(crate) const SPACE_BEFORE: u8 = 2;
/// Token flag: a column-0 line that starts a declaration (class header, `Foo >> …`,
/// `Protocol define:`, `type`), used by top-level recovery.
pub(crate) const DECL_START: u8 = 4;

/// One token: kind, byte span, 0-based line and column (in bytes), flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: Tok,
    pub flags: u8,
    pub start: u32,
    pub end: u32,
    pub line: u32,
    pub col: u32,
}

impl Token {
    pub fn first(&self) -> bool {
        self.flags & FIRST != 0
    }
    pub(crate) fn space_before(&self) -> bool {
        self.flags & SPACE_BEFORE != 0
    }
    pub fn span(&self) -> crate::syntax::ast::Span {
        crate::syntax::ast::Span {
            start: self.start,
            end: self.end,
        }
    }
}

/// The logos automaton's callbacks (strings, characters, quoted symbols, comments).
#[cfg(test)]
mod callbacks {
    use super::{LexError, Tok};
    use crate::syntax::lexer::scan_string;

    type Lx<'a> = logos::Lexer<'a, Tok>;

    pub(super) fn lex_string(lex: &mut Lx) -> Result<(), LexError> {
        let rest = lex.remainder().as_bytes();
        match scan_string(rest, 0, true) {
            Ok(n) => {
                lex.bump(n);
                Ok(())
            }
            Err(_) => match scan_string(rest, 0, false) {
                Ok(n) => {
                    lex.bump(n);
                    Ok(())
                }
                Err(n) => {
                    lex.bump(n);
                    Err(LexError::UnterminatedString)
                }
            },
        }
    }

    pub(super) fn lex_char(lex: &mut Lx) -> Result<(), LexError> {
        let mut it = lex.remainder().chars();
        match it.next() {
            None => Err(LexError::BadChar),
            Some('\\') => match it.next() {
                Some(c) => {
                    lex.bump(1 + c.len_utf8());
                    Ok(())
                }
                None => {
                    lex.bump(1);
                    Err(LexError::BadChar)
                }
            },
            Some(c) => {
                lex.bump(c.len_utf8());
                Ok(())
            }
        }
    }

    pub(super) fn lex_quoted_symbol(lex: &mut Lx) -> Result<(), LexError> {
        let b = lex.remainder().as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'\'' {
                if b.get(i + 1) == Some(&b'\'') {
                    i += 2;
                    continue;
                }
                lex.bump(i + 1);
                return Ok(());
            }
            i += 1;
        }
        lex.bump(b.len());
        Err(LexError::UnterminatedSymbol)
    }

    pub(super) fn lex_block_comment(lex: &mut Lx) -> Result<(), LexError> {
        let b = lex.remainder().as_bytes();
        let mut i = 0;
        while i + 1 < b.len() {
            if b[i] == b'*' && b[i + 1] == b'/' {
                lex.bump(i + 2);
                return Ok(());
            }
            i += 1;
        }
        lex.bump(b.len());
        Err(LexError::UnterminatedComment)
    }

    pub(super) fn lex_single_quote(lex: &mut Lx) -> Result<(), LexError> {
        let rest = lex.remainder();
        let line_end = rest.find('\n').unwrap_or(rest.len());
        let n = match rest[..line_end].find('\'') {
            Some(j) => j + 1,
            None => line_end,
        };
        lex.bump(n);
        Err(LexError::SingleQuote)
    }
}
