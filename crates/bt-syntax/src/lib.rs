//! The front end of bt: tokens, the parser with recovery, the AST with byte spans, the AST
//! dump ([`syntax`]) and the formatter ([`fmt`]) (docs/architecture.md, "Crates").

pub mod fmt;
pub mod syntax;

pub(crate) use bt_base::{base, diagnostic};
