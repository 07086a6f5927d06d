//! Method bodies of the built-in library parsed on first read (`ast::Body`).
//!
//! In library mode (`syntax::parse_library`) the parser reads every declaration as usual but,
//! after a method's `=>`, only steps over the tokens of the body's fenced region (the file is
//! lexed whole, so the lexer's diagnostics and the `///` bookkeeping are the file's). The
//! [`LazyBody`] it records is enough to rebuild, later, exactly the parser state the
//! whole-file parse had at that `=>`: the region is re-lexed from its first token (the
//! member's, so statement messages that look back along the line see the header) to the end
//! of the token that ends the region (so "found the end of the line" reads the same), the
//! fence is the member column again, the position is the first body token and the previous
//! token end is the `=>`. The statements and diagnostics are then the eager parse's, which
//! `check::lazy_body_tests` checks on the whole library and on bodies with syntax errors.

use super::{Fence, Options, Parser};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::{DeferredBody, Span, Stmt};
use crate::syntax::lexer;

/// Where a lazily parsed method body lies in its `'static` source (see the module doc).
#[derive(Clone, Debug)]
pub(crate) struct LazyBody {
    pub(crate) src: &'static str,
    pub(crate) allow_primitives: bool,
    /// Byte offset of the region's first token.
    pub(crate) from: u32,
    /// Start of that token's line (columns count from here).
    pub(crate) line_start: u32,
    /// Whether that token is the first on its line.
    pub(crate) first_on_line: bool,
    /// End of the token that ends the region (or of the file).
    pub(crate) lex_end: u32,
    /// Tokens of the region before the body (modifiers, header, `=>`).
    pub(crate) skip: u32,
    /// The member column (the region's fence).
    pub(crate) fence_col: u32,
    pub(crate) depth: u32,
    /// The method's `=>` (E0305 points there).
    pub(crate) arrow: Span,
    /// The body's syntax errors, once parsed.
    pub(crate) errors: std::sync::OnceLock<Vec<Diagnostic>>,
}

impl DeferredBody for LazyBody {
    fn errors(&self) -> &[Diagnostic] {
        self.errors.get().map_or(&[], |d| d.as_slice())
    }

    fn clone_box(&self) -> Box<dyn DeferredBody> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    /// Called once, by `ast::Body`.
    fn parse(&self) -> Vec<Stmt> {
        let mut lexed = lexer::lex_from(
            self.src,
            self.from as usize,
            self.lex_end as usize,
            self.line_start as usize,
            self.first_on_line,
        );
        // Reported with the file, which the library parse lexed whole.
        lexed.diags.clear();
        let opts = Options {
            allow_primitives: self.allow_primitives,
        };
        let mut p = Parser::new(self.src, lexed, opts, self.depth);
        p.fence = Fence::Col(self.fence_col);
        p.fence_exempt = 0;
        p.pos = (self.skip as usize).min(p.toks.len() - 1);
        p.prev_end = self.arrow.end;
        let stmts = p.statements();
        if stmts.is_empty() {
            p.report(
                Diagnostic::error("E0305", "empty method body", self.arrow)
                    .with_label("nothing follows `=>`")
                    .with_hint(super::method::EMPTY_BODY_HINT),
            );
        }
        // What the member's region still holds is reported as the whole-file parse's
        // `finish_region` would (after a clean member).
        p.finish_region(true);
        lexer::give_back(std::mem::take(&mut p.toks));
        let mut diags = p.diags;
        diags.sort_by_key(|d| (d.span.start, d.span.end));
        let _ = self.errors.set(diags);
        stmts
    }
}
