//! Interned symbols and selectors ([`Sym`]): one global, append-only, thread-safe table.
//!
//! Interning takes the table's lock (with a per-thread front); reading a symbol's text
//! ([`Sym::as_str`]) takes none: names are kept in segments that never move (segment `k`
//! holds `FIRST << k` names), each name slot written once, so a read is two acquire loads.

use std::fmt;
use std::sync::OnceLock;

use parking_lot::RwLock;

/// An interned symbol or selector: its index in the interner plus one, as a full word so that
/// it is a one-word Value payload (see `crate::value::F64`) and `Option<Sym>` stays one word.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(std::num::NonZeroU64);

/// A name table: name indices found by the name's [`hash`], computed once per [`Sym::new`]
/// for the thread's front and the shared table. An entry is the index alone (4 bytes; the
/// name is read from its slot): the tables are sized for the library's names at start-up,
/// and with (name, symbol) entries of 24 bytes they were ~200 KB of pages touched for the
/// shared table and ~100 KB for each thread's front.
type Table = hashbrown::HashTable<u32>;

/// The hash of a name in every [`Table`]: foldhash, seeded per process (SipHash made interning
/// a tenth of engine start-up).
#[inline]
fn hash(s: &str) -> u64 {
    use std::hash::BuildHasher;
    static SEED: OnceLock<foldhash::fast::RandomState> = OnceLock::new();
    SEED.get_or_init(Default::default).hash_one(s)
}

/// The name of an entry (its slot was written before the entry was made, and the thread that
/// reads a table saw that write: under the interner's lock, or it made the entry itself).
#[inline]
fn name(i: u32) -> &'static str {
    Sym::read_slot(i as usize).unwrap_or("")
}

/// The hash of an entry, for a table that grows.
fn rehash(&i: &u32) -> u64 {
    hash(name(i))
}

/// The next index as a table entry.
fn entry(len: usize) -> u32 {
    u32::try_from(len).expect("symbol table full")
}

struct Interner {
    map: Table,
    /// How many names are interned (the next index).
    len: usize,
}

/// Size of the first name segment; segment `k` holds `FIRST << k` names.
const FIRST: usize = 1024;
/// Number of segments: room for `FIRST * (2^SEGMENTS - 1)` names, far past what memory holds.
const SEGMENTS: usize = 40;

/// One name slot, written once under the interner's write lock, read without a lock.
type Slot = OnceLock<&'static str>;

/// The name segments, allocated on demand and never freed or moved (like the names).
static NAMES: [OnceLock<&'static [Slot]>; SEGMENTS] = [const { OnceLock::new() }; SEGMENTS];

/// Segment and offset of name index `i`, None past the last segment.
#[inline]
fn slot_of(i: usize) -> Option<(usize, usize)> {
    let j = i.checked_add(FIRST)?;
    let k = (usize::BITS - 1 - j.leading_zeros()) as usize - FIRST.trailing_zeros() as usize;
    (k < SEGMENTS).then(|| (k, j - (FIRST << k)))
}

/// The slot of name index `i`, allocating its segment (called under the write lock).
fn slot_for_write(i: usize) -> Option<&'static Slot> {
    let (k, off) = slot_of(i)?;
    let seg = NAMES[k].get_or_init(|| {
        let v: Vec<Slot> = (0..FIRST << k).map(|_| OnceLock::new()).collect();
        Box::leak(v.into_boxed_slice())
    });
    seg.get(off)
}

thread_local! {
    /// Symbols this thread interned or looked up through [`Sym::new`] (entries are never
    /// removed: the shared table is append-only too).
    static LOCAL: std::cell::RefCell<Table> = const { std::cell::RefCell::new(Table::new()) };
}

fn interner() -> &'static RwLock<Interner> {
    static I: OnceLock<RwLock<Interner>> = OnceLock::new();
    I.get_or_init(|| {
        RwLock::new(Interner {
            // Sized for the library's names (~1,800 at `bt run` start-up): no rehashing.
            map: Table::with_capacity(4096),
            len: 0,
        })
    })
}

impl Sym {
    /// Interns `s` (append-only, thread-safe; names live for the process).
    pub fn new(s: &str) -> Sym {
        Sym::intern(s, None)
    }

    /// [`Sym::new`] for a name that lives for the process (a primitive's selector): a new
    /// name keeps `s` itself instead of a copy.
    pub fn new_static(s: &'static str) -> Sym {
        Sym::intern(s, Some(s))
    }

    /// [`Sym::new_static`] of each name in order, under one write lock and without this
    /// thread's front (the primitive registry interns ~1,400 selectors at start-up).
    pub fn new_static_all(names: impl Iterator<Item = &'static str>) -> Vec<Sym> {
        let mut w = interner().write();
        names
            .map(|s| {
                let h = hash(s);
                if let Some(&i) = w.map.find(h, |&e| name(e) == s) {
                    return Sym::from_index(i as usize);
                }
                let e = entry(w.len);
                let fresh = slot_for_write(w.len).is_some_and(|slot| slot.set(s).is_ok());
                assert!(fresh, "symbol table full");
                w.len += 1;
                w.map.insert_unique(h, e, rehash);
                Sym::from_index(e as usize)
            })
            .collect()
    }

    fn intern(s: &str, keep: Option<&'static str>) -> Sym {
        // A per-thread front of the table: loading code interns thousands of names, and the
        // shared table's lock was a visible part of starting an engine.
        let h = hash(s);
        if let Ok(Some(i)) = LOCAL.try_with(|m| m.borrow().find(h, |&e| name(e) == s).copied()) {
            return Sym::from_index(i as usize);
        }
        let i = Sym::new_shared(s, h, keep);
        let _ = LOCAL.try_with(|m| {
            let mut m = m.borrow_mut();
            if m.capacity() == 0 {
                // The thread that loads the library looks up thousands of names.
                m.reserve(2048, rehash);
            }
            m.insert_unique(h, i, rehash);
        });
        Sym::from_index(i as usize)
    }

    /// The index of `s` in the shared table, interning it there if new.
    fn new_shared(s: &str, h: u64, keep: Option<&'static str>) -> u32 {
        if let Some(&i) = interner().read().map.find(h, |&e| name(e) == s) {
            return i;
        }
        let mut w = interner().write();
        if let Some(&i) = w.map.find(h, |&e| name(e) == s) {
            return i;
        }
        let leaked: &'static str = keep.unwrap_or_else(|| Box::leak(s.to_owned().into_boxed_str()));
        let i = entry(w.len);
        // Published before the symbol can be handed out (the write lock orders it too).
        let fresh = slot_for_write(w.len).is_some_and(|slot| slot.set(leaked).is_ok());
        assert!(fresh, "symbol table full");
        w.len += 1;
        w.map.insert_unique(h, i, rehash);
        i
    }
    /// The symbol for `s` if it is already interned (never grows the table: distribution
    /// uses it for names and atoms a peer sends).
    pub fn lookup(s: &str) -> Option<Sym> {
        interner()
            .read()
            .map
            .find(hash(s), |&e| name(e) == s)
            .map(|&i| Sym::from_index(i as usize))
    }
    /// How many symbols are interned (tests bound what peers can add).
    pub fn interned() -> usize {
        interner().read().len
    }
    fn from_index(i: usize) -> Sym {
        Sym(std::num::NonZeroU64::MIN.saturating_add(i as u64))
    }
    /// A selector no method has (never returned by [`Sym::new`]).
    pub const NONE: Sym = Sym(std::num::NonZeroU64::MAX);
    /// The `k`-th reserved symbol (1..=255): never returned by [`Sym::new`], prints as `""`.
    /// The runtime tags its control requests with these.
    pub const fn reserved(k: u8) -> Sym {
        match std::num::NonZeroU64::new(u64::MAX - k as u64) {
            Some(n) => Sym(n),
            None => Sym::NONE,
        }
    }
    /// Position in the interner (dense from 0).
    pub fn index(self) -> usize {
        (self.0.get() - 1) as usize
    }
    /// The text; `""` for [`Sym::NONE`] and the reserved symbols. Takes no lock.
    #[inline]
    pub fn as_str(self) -> &'static str {
        match Sym::read_slot(self.index()) {
            Some(s) => s,
            None => Sym::as_str_locked(self.index()),
        }
    }

    #[inline]
    fn read_slot(i: usize) -> Option<&'static str> {
        let (k, off) = slot_of(i)?;
        NAMES[k].get()?.get(off)?.get().copied()
    }

    /// A symbol whose slot this thread does not see yet (it came over a path that did not
    /// order memory with the interning thread) or that is not interned (reserved, NONE): the
    /// lock orders the read after the write.
    #[cold]
    fn as_str_locked(i: usize) -> &'static str {
        let _r = interner().read();
        Sym::read_slot(i).unwrap_or("")
    }
}

impl fmt::Debug for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.as_str())
    }
}

impl fmt::Display for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_cover_segment_boundaries() {
        assert_eq!(slot_of(0), Some((0, 0)));
        assert_eq!(slot_of(FIRST - 1), Some((0, FIRST - 1)));
        assert_eq!(slot_of(FIRST), Some((1, 0)));
        assert_eq!(slot_of(3 * FIRST - 1), Some((1, 2 * FIRST - 1)));
        assert_eq!(slot_of(3 * FIRST), Some((2, 0)));
        assert_eq!(slot_of(Sym::NONE.index()), None);
        assert_eq!(slot_of(Sym::reserved(3).index()), None);
    }

    #[test]
    fn names_read_back_across_threads_and_segments() {
        // Enough names to fill the first segment whatever other tests interned.
        let names: Vec<String> = (0..FIRST + 10).map(|i| format!("sym-test-{i}")).collect();
        let syms: Vec<Sym> = std::thread::scope(|s| {
            let h = s.spawn(|| names.iter().map(|n| Sym::new(n)).collect::<Vec<_>>());
            h.join().unwrap()
        });
        for (n, s) in names.iter().zip(&syms) {
            assert_eq!(s.as_str(), n);
            assert_eq!(Sym::new(n), *s);
        }
        assert!(Sym::interned() >= FIRST + 10);
        assert_eq!(Sym::NONE.as_str(), "");
        assert_eq!(Sym::reserved(1).as_str(), "");
    }

    #[test]
    fn interning_many_agrees_with_one_at_a_time() {
        let known = Sym::new("sym-test-known");
        let syms = Sym::new_static_all(
            [
                "sym-test-many-a",
                "sym-test-known",
                "sym-test-many-a",
                "sym-test-many-b",
            ]
            .into_iter(),
        );
        assert_eq!(syms[1], known);
        assert_eq!(syms[0], syms[2]);
        assert_ne!(syms[0], syms[3]);
        assert_eq!(Sym::new("sym-test-many-a"), syms[0]);
        assert_eq!(syms[3].as_str(), "sym-test-many-b");
    }
}
