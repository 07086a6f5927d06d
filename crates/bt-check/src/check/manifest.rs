//! Checker options from a package manifest: the `[diagnostics]` table of the nearest `bt.toml`
//! above a file, then command-line levels (`bt run`, `bt test`, `bt check`).

use std::path::Path;

use crate::check;

/// The checker options for running `file` (`bt run`, `bt test`): the `[diagnostics]` table of
/// the nearest `bt.toml` at or above it, then the `--diagnostics CATEGORY=LEVEL` arguments
/// (which override it), and `--warnings-as-errors`.
pub fn options_for(
    file: &Path,
    warnings_as_errors: bool,
    levels: &[String],
) -> Result<check::CheckOptions, String> {
    let mut o = check::CheckOptions {
        warnings_as_errors,
        ..Default::default()
    };
    if let Some(dir) = manifest_dir(file) {
        let toml = Path::new(&dir).join("bt.toml");
        if let Ok(text) = std::fs::read_to_string(&toml) {
            o.apply_manifest(&text)
                .map_err(|e| format!("{}: {e}", toml.display()))?;
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
