//! `bt test`: expression files and TestCase suites (LANGUAGE.md part 11).
