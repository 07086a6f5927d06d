//! The entry vector of a flat [`Dict`](super::Dict): a `Vec` split into chunks of [`CHUNK`]
//! elements, so growing a large table never copies it (a plain `Vec` doubling holds the old
//! and the new buffer at once: a dictionary of a million entries peaked at 1.5× its size).
//! The first chunk grows like a `Vec` (small dictionaries stay small); later chunks are
//! allocated whole.

/// Elements per chunk (a power of two).
const SHIFT: usize = 12;
const CHUNK: usize = 1 << SHIFT;
const MASK: usize = CHUNK - 1;

#[derive(Clone)]
pub(super) struct Chunks<T> {
    /// Every chunk but the last holds exactly `CHUNK` elements (the last may be empty only
    /// right after `with_capacity`).
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Chunks<T> {
    fn default() -> Self {
        Chunks {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Chunks<T> {
    /// Room for `n` elements in the first chunk (at most one chunk).
    pub(super) fn with_capacity(n: usize) -> Chunks<T> {
        if n == 0 {
            return Chunks::default();
        }
        Chunks {
            chunks: vec![Vec::with_capacity(n.min(CHUNK))],
            len: 0,
        }
    }

    #[inline]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(super) fn push(&mut self, v: T) {
        match self.chunks.last_mut() {
            Some(c) if c.len() < CHUNK => c.push(v),
            _ => {
                let mut c = Vec::with_capacity(if self.chunks.is_empty() { 4 } else { CHUNK });
                c.push(v);
                self.chunks.push(c);
            }
        }
        self.len += 1;
    }

    pub(super) fn pop(&mut self) -> Option<T> {
        let c = self.chunks.last_mut()?;
        let v = c.pop();
        if c.is_empty() {
            self.chunks.pop();
        }
        if v.is_some() {
            self.len -= 1;
        }
        v
    }

    #[inline]
    pub(super) fn last(&self) -> Option<&T> {
        self.chunks.last().and_then(|c| c.last())
    }

    #[inline]
    pub(super) fn get(&self, i: usize) -> Option<&T> {
        self.chunks.get(i >> SHIFT).and_then(|c| c.get(i & MASK))
    }

    #[inline]
    pub(super) fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.chunks
            .get_mut(i >> SHIFT)
            .and_then(|c| c.get_mut(i & MASK))
    }

    pub(super) fn iter(&self) -> Iter<'_, T> {
        self.chunks.iter().flatten()
    }

    /// Keeps the elements for which `keep` answers true, in order.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        let old = std::mem::take(self);
        for v in old {
            if keep(&v) {
                self.push(v);
            }
        }
    }
}

pub(super) type Iter<'a, T> = std::iter::Flatten<std::slice::Iter<'a, Vec<T>>>;

impl<T> IntoIterator for Chunks<T> {
    type Item = T;
    type IntoIter = std::iter::Flatten<std::vec::IntoIter<Vec<T>>>;

    fn into_iter(self) -> Self::IntoIter {
        self.chunks.into_iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_behave_like_a_vec() {
        let mut c = Chunks::with_capacity(3);
        let n = 3 * CHUNK + 5;
        for i in 0..n {
            c.push(i);
        }
        assert_eq!(c.len(), n);
        assert_eq!(c.get(CHUNK), Some(&CHUNK));
        assert_eq!(c.last(), Some(&(n - 1)));
        assert!(c.iter().copied().eq(0..n));
        *c.get_mut(7).unwrap() = 71;
        assert_eq!(c.get(7), Some(&71));
        c.retain(|&x| x % 2 == 0);
        assert_eq!(c.len(), n.div_ceil(2));
        assert_eq!(c.get(1), Some(&2));
        while c.pop().is_some() {}
        assert_eq!(c.len(), 0);
        assert!(c.last().is_none());
        c.push(1);
        assert_eq!(c.into_iter().collect::<Vec<_>>(), vec![1]);
    }
}
