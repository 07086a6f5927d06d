//! A process's mailbox: a FIFO of envelopes tuned for the common case of at most one queued
//! message.
//!
//! The oldest envelope sits inline in the process record (`first`); only a second queued
//! envelope allocates the overflow queue (boxed: an empty mailbox is the inline slot and one
//! word), and that queue is given back when the mailbox drains ([`Mailbox::release`], called
//! when the process goes idle). So a sync round trip allocates nothing for the mailbox, and an
//! idle actor keeps no mailbox buffer.
//!
//! Invariant: when `first` is `None`, `rest` is empty — `first` is always the oldest envelope.

use std::collections::VecDeque;

/// A FIFO of `T` with the oldest element stored inline (see the module docs).
pub(crate) struct Mailbox<T> {
    first: Option<T>,
    #[allow(clippy::box_collection)]
    rest: Option<Box<VecDeque<T>>>,
}

impl<T> Default for Mailbox<T> {
    fn default() -> Self {
        Mailbox {
            first: None,
            rest: None,
        }
    }
}

impl<T> Mailbox<T> {
    /// The queued envelopes, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.first
            .iter()
            .chain(self.rest.iter().flat_map(|r| r.iter()))
    }

    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Appends at the back.
    #[inline]
    pub(crate) fn push_back(&mut self, v: T) {
        if self.first.is_none() {
            self.first = Some(v);
        } else {
            self.rest.get_or_insert_with(Default::default).push_back(v);
        }
    }

    /// Puts `v` back as the oldest element.
    pub(crate) fn push_front(&mut self, v: T) {
        if let Some(old) = self.first.replace(v) {
            self.rest
                .get_or_insert_with(Default::default)
                .push_front(old);
        }
    }

    /// Removes the oldest element.
    #[inline]
    pub(crate) fn pop_front(&mut self) -> Option<T> {
        let v = self.first.take()?;
        self.first = match &mut self.rest {
            Some(r) => r.pop_front(),
            None => None,
        };
        Some(v)
    }

    /// The oldest element.
    pub(crate) fn front(&self) -> Option<&T> {
        self.first.as_ref()
    }

    pub(crate) fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.rest.as_ref().map_or(0, |r| r.len())
    }

    /// Gives back the overflow buffer if the mailbox is empty (an idle process keeps none).
    #[inline(always)]
    pub(crate) fn release(&mut self) {
        if self.first.is_none() && self.rest.is_some() {
            self.rest = None;
        }
    }
}

impl<T> IntoIterator for Mailbox<T> {
    type Item = T;
    type IntoIter = std::iter::Chain<
        std::option::IntoIter<T>,
        std::iter::Flatten<std::option::IntoIter<VecDeque<T>>>,
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.first
            .into_iter()
            .chain(self.rest.map(|r| *r).into_iter().flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_across_inline_and_overflow() {
        let mut m = Mailbox::new();
        assert_eq!(m.front(), None);
        m.push_back(1);
        m.push_back(2);
        m.push_back(3);
        assert_eq!(m.len(), 3);
        assert_eq!(m.pop_front(), Some(1));
        m.push_back(4);
        assert_eq!(m.front(), Some(&2));
        assert_eq!(m.pop_front(), Some(2));
        assert_eq!(m.pop_front(), Some(3));
        m.push_back(5);
        assert_eq!(m.pop_front(), Some(4));
        assert_eq!(m.pop_front(), Some(5));
        assert_eq!(m.pop_front(), None);
        assert_eq!(m.len(), 0);
    }

    #[test]
    fn drain_and_release() {
        let mut m = Mailbox::new();
        for i in 0..5 {
            m.push_back(i);
        }
        assert_eq!(
            std::mem::take(&mut m).into_iter().collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 4]
        );
        assert_eq!(m.len(), 0);
        m.push_back(7);
        m.push_back(8);
        assert_eq!(m.pop_front(), Some(7));
        m.release(); // not empty: keeps the buffer
        assert_eq!(m.pop_front(), Some(8));
        m.release();
        assert!(m.rest.is_none());
        m.push_back(9);
        assert_eq!(m.into_iter().collect::<Vec<_>>(), vec![9]);
    }
}
