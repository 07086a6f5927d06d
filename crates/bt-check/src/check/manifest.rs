//! The package manifest `bt.toml`, parsed as TOML into a typed [`Manifest`]: `[package]`,
//! `[diagnostics]` (checker levels, for `bt check`, `bt run` and `bt test`) and `[cluster]`
//! (distribution settings `bt run` uses when no flag or environment variable gives them).
//! Errors name the position: `bt.toml:3:8: …`.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
pub use toml::Spanned;

use super::options::CheckOptions;

/// A parsed `bt.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Manifest {
    /// `[package]`: the package's description (`name`, `version`, … — keys are free).
    pub package: toml::Table,
    /// `[diagnostics]`: checker category → level (`"error"`, `"warning"`, `"hint"`, `"off"`).
    pub diagnostics: BTreeMap<Spanned<String>, Spanned<String>>,
    /// `[cluster]`: distribution settings for `bt run`.
    pub cluster: Cluster,
    /// Where line and column numbers come from (the text's line starts).
    #[serde(skip)]
    lines: Vec<usize>,
}

/// The `[cluster]` table: what `--name`/`--sname`, `--cookie-file` and `--connect` (or
/// `BT_CONNECT`) say when they are not given.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Cluster {
    /// This node's name, `NAME@HOST` (as `--name`).
    pub name: Option<Spanned<String>>,
    /// This node's short name, `NAME` (as `--sname`).
    pub sname: Option<Spanned<String>>,
    /// The cookie file (as `--cookie-file`), relative to the manifest's directory.
    pub cookie_file: Option<Spanned<String>>,
    /// Seed nodes kept connected (as `--connect`).
    pub connect: Vec<Spanned<String>>,
}

/// A manifest error at a position (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestError {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl std::fmt::Display for ManifestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl Manifest {
    /// Parses a manifest's text: TOML syntax, then the types of the known tables.
    pub fn parse(text: &str) -> Result<Manifest, ManifestError> {
        let lines = line_starts(text);
        let mut m: Manifest = toml::from_str(text).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            let (line, col) = position(&lines, text, span.start);
            ManifestError {
                line,
                col,
                message: e.message().trim_end().to_string(),
            }
        })?;
        m.lines = lines;
        m.check_values(text)?;
        Ok(m)
    }

    /// `Some(manifest)` of the `bt.toml` in `dir`, `None` when there is none; errors are
    /// `PATH:LINE:COL: message`.
    pub fn read_dir(dir: &Path) -> Result<Option<Manifest>, String> {
        let path = dir.join("bt.toml");
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Ok(None);
        };
        Manifest::parse(&text)
            .map(Some)
            .map_err(|e| format!("{}:{e}", path.display()))
    }

    /// The manifest nearest to `file` (at or above its directory) and its directory.
    pub fn nearest(file: &Path) -> Result<Option<(PathBuf, Manifest)>, String> {
        let Some(dir) = manifest_dir(file) else {
            return Ok(None);
        };
        let dir = PathBuf::from(dir);
        Ok(Manifest::read_dir(&dir)?.map(|m| (dir, m)))
    }

    /// `LINE:COL` of a byte offset of the text this manifest was parsed from.
    pub fn at(&self, offset: usize) -> (usize, usize) {
        let i = self.lines.partition_point(|&s| s <= offset).max(1) - 1;
        (i + 1, offset - self.lines[i] + 1)
    }

    /// An error at `span` of the text.
    pub(crate) fn error_at(&self, span: Range<usize>, message: impl Into<String>) -> ManifestError {
        let (line, col) = self.at(span.start);
        ManifestError {
            line,
            col,
            message: message.into(),
        }
    }

    /// Applies `[diagnostics]` to checker options (before command-line levels, which
    /// override it).
    pub(crate) fn apply_diagnostics(&self, o: &mut CheckOptions) -> Result<(), ManifestError> {
        for (k, v) in &self.diagnostics {
            o.set_level_arg(&format!("{}={}", k.get_ref(), v.get_ref()))
                .map_err(|m| {
                    let span = if m.starts_with("unknown level") {
                        v.span()
                    } else {
                        k.span()
                    };
                    self.error_at(span, m)
                })?;
        }
        Ok(())
    }

    /// Checks what TOML types cannot say (before anyone uses the values).
    fn check_values(&self, _text: &str) -> Result<(), ManifestError> {
        let mut probe = CheckOptions::default();
        self.apply_diagnostics(&mut probe)?;
        if let (Some(_), Some(s)) = (&self.cluster.name, &self.cluster.sname) {
            return Err(self.error_at(s.span(), "give name or sname, not both"));
        }
        Ok(())
    }
}

/// Byte offsets at which lines start.
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// 1-based line and column (in characters) of byte `offset`.
fn position(lines: &[usize], text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let i = lines.partition_point(|&s| s <= offset).max(1) - 1;
    let col = text
        .get(lines[i]..offset)
        .map_or(offset - lines[i], |s| s.chars().count());
    (i + 1, col + 1)
}

/// The checker options for running `file` (`bt run`, `bt test`): the `[diagnostics]` table of
/// the nearest `bt.toml` at or above it, then the `--diagnostics CATEGORY=LEVEL` arguments
/// (which override it), and `--warnings-as-errors`.
pub fn options_for(
    file: &Path,
    warnings_as_errors: bool,
    levels: &[String],
) -> Result<CheckOptions, String> {
    let mut o = CheckOptions {
        warnings_as_errors,
        ..Default::default()
    };
    if let Some(dir) = manifest_dir(file) {
        let toml = Path::new(&dir).join("bt.toml");
        if let Ok(text) = std::fs::read_to_string(&toml) {
            o.apply_manifest(&text)
                .map_err(|e| format!("{}:{e}", toml.display()))?;
        }
    }
    for l in levels {
        o.set_level_arg(l)
            .map_err(|e| format!("--diagnostics {l}: {e}"))?;
    }
    Ok(o)
}

/// The directory of the nearest `bt.toml` at or above the file's directory.
pub fn manifest_dir(file: &Path) -> Option<String> {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d.join("bt.toml").is_file() {
            return Some(d.to_string_lossy().into_owned());
        }
        dir = d.parent();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Level;

    #[test]
    fn a_hash_inside_a_string_is_text_not_a_comment() {
        let m = Manifest::parse(
            "[package]\nname = \"shop #1\" # a comment\n[diagnostics]\ntype = \"error\" # loud\n\
             [cluster]\nconnect = [\"a@h\", \"b#c@h\"]\n",
        )
        .unwrap();
        assert_eq!(m.package["name"].as_str(), Some("shop #1"));
        let seeds: Vec<&str> = m
            .cluster
            .connect
            .iter()
            .map(|s| s.get_ref().as_str())
            .collect();
        assert_eq!(seeds, ["a@h", "b#c@h"]);
        let mut o = CheckOptions::default();
        m.apply_diagnostics(&mut o).unwrap();
        assert_eq!(o.levels.get("type"), Some(&Level::Error));
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = Manifest::parse("[cluster]\nconnect = \"a@h\"\n").unwrap_err();
        assert_eq!((e.line, e.col), (2, 11), "{e}");
        assert!(e.message.contains("expected a sequence"), "{e}");
        let e = Manifest::parse("[diagnostics]\ntype = 3\n").unwrap_err();
        assert_eq!((e.line, e.col), (2, 8), "{e}");
        let e = Manifest::parse("[diagnostics]\n  type = \"loud\"\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "2:10: unknown level 'loud' (expected error, warning, hint or off)"
        );
        let e = Manifest::parse("[diagnostics]\nbogus = \"off\"\n").unwrap_err();
        assert_eq!((e.line, e.col), (2, 1), "{e}");
        let e = Manifest::parse("[clusters]\n").unwrap_err();
        assert_eq!((e.line, e.col), (1, 2), "{e}");
        let e = Manifest::parse("[cluster]\nseeds = []\n").unwrap_err();
        assert_eq!((e.line, e.col), (2, 1), "{e}");
        let e = Manifest::parse("name = \"é\" x\n").unwrap_err();
        assert_eq!((e.line, e.col), (1, 12), "{e}");
        let e = Manifest::parse("[cluster]\nname = \"a@h\"\nsname = \"b\"\n").unwrap_err();
        assert_eq!((e.line, e.col), (3, 9), "{e}");
    }
}
