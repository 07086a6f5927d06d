//! Interned symbols and selectors ([`Sym`]): one global, append-only, thread-safe table.

use std::fmt;
use std::sync::OnceLock;

use parking_lot::RwLock;

/// An interned symbol or selector: its index in the interner plus one, as a full word so that
/// it is a one-word Value payload (see `crate::value::F64`) and `Option<Sym>` stays one word.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(std::num::NonZeroU64);

struct Interner {
    /// foldhash (seeded per process): SipHash made interning a tenth of engine start-up.
    map: std::collections::HashMap<&'static str, Sym, foldhash::fast::RandomState>,
    names: Vec<&'static str>,
}

thread_local! {
    /// Symbols this thread interned or looked up through [`Sym::new`] (entries are never
    /// removed: the shared table is append-only too).
    static LOCAL: std::cell::RefCell<std::collections::HashMap<&'static str, Sym, foldhash::fast::RandomState>> =
        std::cell::RefCell::new(std::collections::HashMap::default());
}

fn interner() -> &'static RwLock<Interner> {
    static I: OnceLock<RwLock<Interner>> = OnceLock::new();
    I.get_or_init(|| {
        RwLock::new(Interner {
            map: std::collections::HashMap::default(),
            names: Vec::new(),
        })
    })
}

impl Sym {
    /// Interns `s` (append-only, thread-safe; names live for the process).
    pub fn new(s: &str) -> Sym {
        // A per-thread front of the table: loading code interns thousands of names, and the
        // shared table's lock was a visible part of starting an engine.
        if let Ok(Some(i)) = LOCAL.try_with(|m| m.borrow().get(s).copied()) {
            return i;
        }
        let (i, name) = Sym::new_shared(s);
        let _ = LOCAL.try_with(|m| m.borrow_mut().insert(name, i));
        i
    }

    fn new_shared(s: &str) -> (Sym, &'static str) {
        if let Some((&name, &i)) = interner().read().map.get_key_value(s) {
            return (i, name);
        }
        let mut w = interner().write();
        if let Some((&name, &i)) = w.map.get_key_value(s) {
            return (i, name);
        }
        let leaked: &'static str = Box::leak(s.to_owned().into_boxed_str());
        let i = Sym::from_index(w.names.len());
        w.names.push(leaked);
        w.map.insert(leaked, i);
        (i, leaked)
    }
    /// The symbol for `s` if it is already interned (never grows the table: distribution
    /// uses it for names and atoms a peer sends).
    pub fn lookup(s: &str) -> Option<Sym> {
        interner().read().map.get(s).copied()
    }
    /// How many symbols are interned (tests bound what peers can add).
    pub fn interned() -> usize {
        interner().read().names.len()
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
    /// The text; `""` for [`Sym::NONE`].
    pub fn as_str(self) -> &'static str {
        interner()
            .read()
            .names
            .get(self.index())
            .copied()
            .unwrap_or("")
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
