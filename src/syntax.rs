//! The front end: tokens (logos), the parser (hand-written recursive descent with recovery),
//! the AST with byte spans, and a canonical AST dump for golden tests.

pub mod ast;
