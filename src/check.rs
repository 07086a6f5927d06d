//! The static checker (LANGUAGE.md part 4): findings as data, many per run.
