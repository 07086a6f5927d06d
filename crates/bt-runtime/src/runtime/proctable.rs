//! The process table: live processes by (service?, number), iterated in spawn order.
//!
//! Pids are numbered from two counters that only grow (user processes, services), so each
//! kind is a vector sorted by number that a spawn appends to (a rare out-of-order insert,
//! from two threads spawning at once, is placed by binary search). An exit leaves a
//! tombstone, and the vector is compacted when tombstones outnumber the live entries, so
//! spawning and exiting are amortised O(1) and memory stays within twice the live count.
//! (It replaced a `BTreeMap`, whose insert cost ~600 instructions per spawn.)

/// One kind of process (user or service), sorted by number.
struct Seq<P> {
    slots: Vec<(u64, Option<P>)>,
    live: usize,
}

impl<P> Default for Seq<P> {
    fn default() -> Self {
        Seq {
            slots: Vec::new(),
            live: 0,
        }
    }
}

impl<P> Seq<P> {
    fn find(&self, n: u64) -> Result<usize, usize> {
        self.slots.binary_search_by_key(&n, |s| s.0)
    }

    fn insert(&mut self, n: u64, p: P) -> Option<P> {
        if self.slots.last().is_none_or(|s| s.0 < n) {
            self.slots.push((n, Some(p)));
            self.live += 1;
            return None;
        }
        match self.find(n) {
            Ok(i) => {
                let old = self.slots[i].1.replace(p);
                if old.is_none() {
                    self.live += 1;
                }
                old
            }
            Err(i) => {
                self.slots.insert(i, (n, Some(p)));
                self.live += 1;
                None
            }
        }
    }

    fn remove(&mut self, n: u64) -> Option<P> {
        let i = self.find(n).ok()?;
        let old = self.slots[i].1.take()?;
        self.live -= 1;
        if self.slots.len() > 2 * self.live + 16 {
            self.slots.retain(|s| s.1.is_some());
        }
        Some(old)
    }

    fn get(&self, n: u64) -> Option<&P> {
        self.slots[self.find(n).ok()?].1.as_ref()
    }

    fn iter(&self) -> impl Iterator<Item = (u64, &P)> {
        self.slots
            .iter()
            .filter_map(|(n, p)| p.as_ref().map(|p| (*n, p)))
    }
}

/// Live processes keyed by `(service, number)` (see the module docs). `P` is the process
/// handle (`ProcRef`); the table only stores it.
pub(crate) struct ProcTable<P> {
    users: Seq<P>,
    services: Seq<P>,
    /// While set, a user process spawned with any other label is killed as it is made
    /// (`RtHandle::stop_user_processes`); kept here so a spawn and a sweep see each other
    /// under the table's lock.
    pub(crate) fence: Option<&'static str>,
}

impl<P> Default for ProcTable<P> {
    fn default() -> Self {
        ProcTable {
            users: Seq::default(),
            services: Seq::default(),
            fence: None,
        }
    }
}

impl<P> ProcTable<P> {
    fn seq(&mut self, service: bool) -> &mut Seq<P> {
        if service {
            &mut self.services
        } else {
            &mut self.users
        }
    }

    pub(crate) fn insert(&mut self, key: (bool, u64), p: P) -> Option<P> {
        self.seq(key.0).insert(key.1, p)
    }

    pub(crate) fn remove(&mut self, key: &(bool, u64)) -> Option<P> {
        self.seq(key.0).remove(key.1)
    }

    pub(crate) fn get(&self, key: &(bool, u64)) -> Option<&P> {
        if key.0 {
            self.services.get(key.1)
        } else {
            self.users.get(key.1)
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.users.live + self.services.live
    }

    /// Every live process: user processes in spawn order, then services.
    pub(crate) fn iter(&self) -> impl Iterator<Item = ((bool, u64), &P)> {
        self.users
            .iter()
            .map(|(n, p)| ((false, n), p))
            .chain(self.services.iter().map(|(n, p)| ((true, n), p)))
    }

    pub(crate) fn values(&self) -> impl Iterator<Item = &P> {
        self.iter().map(|(_, p)| p)
    }

    /// Live user processes (not services) in spawn order, with their numbers.
    pub(crate) fn users(&self) -> impl Iterator<Item = (u64, &P)> {
        self.users.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::process::ProcRef;
    use crate::runtime::{Config, Runtime};

    #[test]
    fn ordered_insert_remove_and_compaction() {
        let rt = Runtime::new(Config {
            workers: 1,
            ..Config::default()
        })
        .unwrap();
        let procs: Vec<ProcRef> = (0..5)
            .map(|_| rt.spawn(crate::runtime::handler(|_, _| Ok(crate::value::Value::Nil))))
            .collect();
        let mut t = ProcTable::default();
        // Out of order, as two spawning threads may insert.
        for (i, n) in [2u64, 1, 4, 3, 5].iter().enumerate() {
            assert!(t.insert((false, *n), procs[i].clone()).is_none());
        }
        t.insert((true, 1), procs[0].clone());
        let order: Vec<(bool, u64)> = t.iter().map(|(k, _)| k).collect();
        assert_eq!(
            order,
            vec![
                (false, 1),
                (false, 2),
                (false, 3),
                (false, 4),
                (false, 5),
                (true, 1)
            ]
        );
        assert_eq!(t.len(), 6);
        assert!(t.get(&(false, 4)) == Some(&procs[2]));
        assert!(t.remove(&(false, 4)).is_some());
        assert!(t.remove(&(false, 4)).is_none());
        assert!(t.get(&(false, 4)).is_none());
        assert!(t.get(&(false, 9)).is_none());
        assert_eq!(
            t.users().map(|(n, _)| n).collect::<Vec<_>>(),
            vec![1, 2, 3, 5]
        );
        // Many spawns and exits: the tombstones are compacted away.
        for n in 10..1000u64 {
            t.insert((false, n), procs[0].clone());
            t.remove(&(false, n));
        }
        assert_eq!(t.len(), 5);
        assert!(t.users.slots.len() <= 2 * t.users.live + 17);
        assert_eq!(
            t.users().map(|(n, _)| n).collect::<Vec<_>>(),
            vec![1, 2, 3, 5]
        );
    }
}
