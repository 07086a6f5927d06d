//! How findings are graded: the categories `@expect` and `--diagnostics` name, the level
//! configured for each ([`CheckOptions`], from the command line or a `bt.toml`), and the
//! `@expect` sites the walker collects. The checker itself (`check.rs`) applies them to the
//! diagnostics of a walk; this module only holds the settings.

use std::collections::HashMap;

use super::manifest;
use crate::syntax::ast::Span;

/// The categories `@expect` and `--diagnostics` accept.
pub(crate) const CATEGORIES: &[&str] = &[
    "dnu",
    "type",
    "unused",
    "type_annotation",
    "inheritance",
    "sendability",
    "all",
];

/// An `@expect category` directive and the span of what it applies to.
#[derive(Clone, Debug)]
pub struct ExpectSite {
    pub category: String,
    pub span: Span,
    pub target: Span,
}

/// A configured level for a category.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    Hint,
    Off,
}

impl Level {
    pub fn parse(s: &str) -> Option<Level> {
        match s {
            "error" => Some(Level::Error),
            "warning" => Some(Level::Warning),
            "hint" => Some(Level::Hint),
            "off" => Some(Level::Off),
            _ => None,
        }
    }
}

/// How findings are graded: per-category levels and `--warnings-as-errors`.
#[derive(Clone, Debug, Default)]
pub struct CheckOptions {
    pub warnings_as_errors: bool,
    pub levels: HashMap<String, Level>,
}

impl CheckOptions {
    /// `CATEGORY=LEVEL` from `--diagnostics`.
    pub fn set_level_arg(&mut self, arg: &str) -> Result<(), String> {
        let (cat, level) = arg
            .split_once('=')
            .ok_or_else(|| format!("expected CATEGORY=LEVEL, got '{arg}'"))?;
        let cat = cat.trim();
        if !CATEGORIES.contains(&cat) || cat == "all" {
            return Err(format!(
                "unknown diagnostic category '{cat}' (expected one of dnu, type, unused, type_annotation, inheritance, sendability)"
            ));
        }
        let level = Level::parse(level.trim()).ok_or_else(|| {
            format!("unknown level '{level}' (expected error, warning, hint or off)")
        })?;
        self.levels.insert(cat.to_string(), level);
        Ok(())
    }

    /// The levels as `CATEGORY=LEVEL` arguments (sorted), so they can be handed to a worker
    /// process and applied there with [`CheckOptions::set_level_arg`].
    pub fn level_args(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .levels
            .iter()
            .map(|(c, l)| {
                let l = match l {
                    Level::Error => "error",
                    Level::Warning => "warning",
                    Level::Hint => "hint",
                    Level::Off => "off",
                };
                format!("{c}={l}")
            })
            .collect();
        v.sort();
        v
    }

    /// The `[diagnostics]` table of a `bt.toml` manifest (the whole text, parsed as TOML;
    /// errors begin with `LINE:COL:`). Apply it before command-line levels (which override
    /// it).
    pub fn apply_manifest(&mut self, toml: &str) -> Result<(), String> {
        manifest::Manifest::parse(toml)
            .and_then(|m| m.apply_diagnostics(self))
            .map_err(|e| e.to_string())
    }
}
