//! A String value's storage: the UTF-8 text and what is known of its grapheme clusters.
//!
//! Strings are measured and indexed in extended grapheme clusters. Text that is ASCII and
//! holds no CR LF pair (the one ASCII cluster of two characters) has one cluster per byte, so
//! `size`, `at:` and `take:` are byte arithmetic — but finding that out reads the whole text.
//! Other text needs a scan from the start to find the n-th cluster. A String is immutable
//! once shared, so both are worked out once and kept: whether the text is one cluster a
//! byte, and for text that is not, its cluster count and the byte offset of every
//! [`STRIDE`]-th cluster ([`Crumbs`], built by the interpreter, which knows the segmentation
//! rules). A loop `1 to: s size do: [:i | s at: i]` is linear, not quadratic.
//!
//! `Text` derefs to `String`, so reading code uses it as one. Mutable access through
//! `DerefMut` (only for an unshared String, see `unique_mut`) forgets what is known;
//! [`Text::push_str`], the in-place append, keeps "one cluster a byte" when it can.

// unsafe: the cluster index is a tagged pointer owned by the Text (each block has a SAFETY comment).
#![allow(unsafe_code)]

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Deref, DerefMut};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

/// Every `STRIDE`-th cluster's byte offset is kept in [`Crumbs`]: finding cluster n walks
/// at most `STRIDE - 1` clusters from the one before it; the index is an eighth of the text
/// when clusters are one byte.
pub const STRIDE: usize = 32;

/// The cluster index of text that is not one cluster a byte.
pub struct Crumbs {
    /// The number of grapheme clusters.
    pub count: usize,
    /// `starts[k]`: the byte offset of cluster `k * STRIDE`. (Strings are under 4 GiB.)
    pub starts: Box<[u32]>,
}

/// The shape word: not worked out yet.
const UNKNOWN: *mut Crumbs = ptr::null_mut();

/// The shape word: one grapheme cluster per byte.
fn simple_tag() -> *mut Crumbs {
    ptr::without_provenance_mut(1)
}

/// The shape word: some cluster is longer than a byte, no index built.
fn complex_tag() -> *mut Crumbs {
    ptr::without_provenance_mut(2)
}

/// Is this shape word an index (a pointer from `Box::into_raw`)?
fn is_index(p: *mut Crumbs) -> bool {
    p.addr() > 2
}

/// The text of a String value (see the module documentation).
pub struct Text {
    text: String,
    /// [`UNKNOWN`], [`simple_tag`], [`complex_tag`], or a `Box<Crumbs>` this Text owns (the
    /// text is not one cluster a byte). Moves only forward while the Text is shared (unknown
    /// → a tag → an index), each step by compare-and-swap.
    shape: AtomicPtr<Crumbs>,
}

/// True when every byte of `s` is one grapheme cluster: ASCII with no CR LF pair. (A byte
/// search for `\r` first: the substring search for `\r\n` is far slower on long text.)
pub fn one_cluster_per_byte(s: &str) -> bool {
    s.is_ascii() && (!s.as_bytes().contains(&b'\r') || !s.contains("\r\n"))
}

impl Text {
    fn new(text: String, shape: *mut Crumbs) -> Text {
        Text {
            text,
            shape: AtomicPtr::new(shape),
        }
    }

    /// True when every byte is one grapheme cluster, worked out on the first call.
    #[inline]
    pub fn is_simple(&self) -> bool {
        let p = self.shape.load(Ordering::Acquire);
        if p == simple_tag() {
            return true;
        }
        if p != UNKNOWN {
            return false;
        }
        let simple = one_cluster_per_byte(&self.text);
        let tag = if simple { simple_tag() } else { complex_tag() };
        // Lost only to another thread storing the same answer (or an index).
        let _ = self
            .shape
            .compare_exchange(UNKNOWN, tag, Ordering::AcqRel, Ordering::Acquire);
        simple
    }

    /// True when `size` and positions need no scan of the text: it is known to be one
    /// cluster a byte, or its index is built. (Nothing is worked out.)
    #[inline]
    pub fn is_measured(&self) -> bool {
        let p = self.shape.load(Ordering::Acquire);
        p == simple_tag() || is_index(p)
    }

    /// The cluster index of text that is not one cluster a byte, built by `build` on the
    /// first call (None for text that is).
    pub fn crumbs(&self, build: impl FnOnce(&str) -> Crumbs) -> Option<&Crumbs> {
        if self.is_simple() {
            return None;
        }
        let p = self.shape.load(Ordering::Acquire);
        if is_index(p) {
            // SAFETY: an index pointer in `shape` came from `Box::into_raw` and is freed only
            // with `&mut self` (drop, `push_str`, `deref_mut`), which cannot happen while this
            // `&self` borrow — and the reference it answers — lives.
            return Some(unsafe { &*p });
        }
        let made = Box::into_raw(Box::new(build(&self.text)));
        match self
            .shape
            .compare_exchange(p, made, Ordering::AcqRel, Ordering::Acquire)
        {
            // SAFETY: `made` is now this Text's index; as above, it lives as long as `&self`.
            Ok(_) => Some(unsafe { &*made }),
            Err(theirs) => {
                // SAFETY: `made` came from `Box::into_raw` above and was never shared.
                drop(unsafe { Box::from_raw(made) });
                // Another thread installed its index first (the only step from a tag).
                debug_assert!(is_index(theirs));
                // SAFETY: as for the first read: owned by this Text, freed only with `&mut`.
                Some(unsafe { &*theirs })
            }
        }
    }

    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Replaces the shape word (with `&mut self`: nothing borrows the old index).
    fn set_shape(&mut self, shape: *mut Crumbs) {
        let old = std::mem::replace(self.shape.get_mut(), shape);
        if is_index(old) {
            // SAFETY: an index pointer came from `Box::into_raw` and is owned by this Text;
            // `&mut self` means no reference to it is alive, and it was just unlinked.
            drop(unsafe { Box::from_raw(old) });
        }
    }

    /// Appends `s`, keeping "one cluster a byte" known: simple text stays simple when `s` is
    /// simple and the join makes no CR LF pair.
    pub fn push_str(&mut self, s: &str) {
        let old = *self.shape.get_mut();
        let shape = if old == simple_tag() {
            let joins_crlf = self.text.ends_with('\r') && s.starts_with('\n');
            if one_cluster_per_byte(s) && !joins_crlf {
                simple_tag()
            } else {
                complex_tag()
            }
        } else if old == UNKNOWN {
            UNKNOWN
        } else {
            // Non-ASCII or a CR LF pair stays in the whole.
            complex_tag()
        };
        self.text.push_str(s);
        self.set_shape(shape);
    }
}

impl Drop for Text {
    fn drop(&mut self) {
        self.set_shape(UNKNOWN);
    }
}

impl Deref for Text {
    type Target = String;
    #[inline]
    fn deref(&self) -> &String {
        &self.text
    }
}

impl DerefMut for Text {
    /// Mutable access forgets what is known (the caller may change anything).
    #[inline]
    fn deref_mut(&mut self) -> &mut String {
        self.set_shape(UNKNOWN);
        &mut self.text
    }
}

impl Clone for Text {
    /// The copy knows the shape, not the index (built again if asked for).
    fn clone(&self) -> Text {
        let p = self.shape.load(Ordering::Acquire);
        Text::new(
            self.text.clone(),
            if is_index(p) { complex_tag() } else { p },
        )
    }
}

impl From<String> for Text {
    #[inline]
    fn from(text: String) -> Text {
        Text::new(text, UNKNOWN)
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Text {
        Text::from(text.to_string())
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.text == other.text
    }
}

impl Eq for Text {}

impl PartialOrd for Text {
    fn partial_cmp(&self, other: &Text) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Text {
    fn cmp(&self, other: &Text) -> std::cmp::Ordering {
        self.text.cmp(&other.text)
    }
}

impl Hash for Text {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.text.hash(state)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.text, f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.text, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shape_is_worked_out_once_and_kept_through_clones() {
        let t = Text::from("hello");
        assert!(t.is_simple());
        assert!(t.is_measured());
        assert!(t.clone().is_simple());
        assert!(!Text::from("a\r\nb").is_simple());
        assert!(Text::from("a\rb\n").is_simple());
        assert!(!Text::from("né").is_simple());
        assert!(Text::from("").is_simple());
    }

    #[test]
    fn appending_keeps_the_shape_true() {
        let cases: &[(&str, &str)] = &[
            ("ab", "cd"),
            ("ab\r", "\ncd"),
            ("ab\r", "cd"),
            ("ab", "\r\n"),
            ("ab", "é"),
            ("e", "\u{301}"),
            ("a\r\n", "b"),
            ("", ""),
            ("x", ""),
        ];
        for (a, b) in cases {
            for known in [false, true] {
                let mut t = Text::from(*a);
                if known {
                    t.is_simple();
                }
                t.push_str(b);
                let whole = format!("{a}{b}");
                assert_eq!(t.as_str(), whole);
                assert_eq!(
                    t.is_simple(),
                    one_cluster_per_byte(&whole),
                    "{a:?} ++ {b:?}"
                );
            }
        }
    }

    #[test]
    fn mutable_access_forgets_the_shape() {
        let mut t = Text::from("ab");
        assert!(t.is_simple());
        t.deref_mut().push('é');
        assert!(!t.is_simple());
    }
}

#[cfg(test)]
mod index_tests {
    use super::*;

    /// A stand-in segmentation for these tests: one cluster per char.
    fn by_chars(s: &str) -> Crumbs {
        let offsets: Vec<usize> = s.char_indices().map(|(i, _)| i).collect();
        Crumbs {
            count: offsets.len(),
            starts: offsets.iter().step_by(STRIDE).map(|&i| i as u32).collect(),
        }
    }

    #[test]
    fn the_index_is_built_once_shared_and_dropped_with_the_text() {
        let t = Text::from("é".repeat(100));
        assert!(!t.is_measured());
        let mut builds = 0;
        let c = t.crumbs(|s| {
            builds += 1;
            by_chars(s)
        });
        assert_eq!(c.map(|c| c.count), Some(100));
        assert!(t.is_measured());
        t.crumbs(|s| {
            builds += 1;
            by_chars(s)
        });
        assert_eq!(builds, 1);
        assert_eq!(t.crumbs(by_chars).unwrap().starts[1], 2 * STRIDE as u32);
        // A clone knows the shape but builds its own index.
        let u = t.clone();
        assert!(!u.is_simple() && !u.is_measured());
        drop(t);
        assert_eq!(u.crumbs(by_chars).map(|c| c.count), Some(100));
    }

    #[test]
    fn simple_text_has_no_index() {
        let t = Text::from("plain");
        assert!(t.crumbs(by_chars).is_none());
        assert!(t.is_measured());
    }

    #[test]
    fn changing_the_text_drops_its_index() {
        let mut t = Text::from("éa");
        assert_eq!(t.crumbs(by_chars).unwrap().count, 2);
        t.push_str("bc");
        assert!(!t.is_measured() && !t.is_simple());
        assert_eq!(t.crumbs(by_chars).unwrap().count, 4);
        t.deref_mut().clear();
        t.push_str("x");
        assert!(t.is_simple());
    }

    #[test]
    fn threads_racing_to_build_share_one_index() {
        let t = std::sync::Arc::new(Text::from("ü".repeat(1000)));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let t = t.clone();
                std::thread::spawn(move || t.crumbs(by_chars).unwrap().count)
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), 1000);
        }
        let p = t.crumbs(by_chars).unwrap() as *const Crumbs;
        assert_eq!(p, t.crumbs(by_chars).unwrap() as *const Crumbs);
    }
}
