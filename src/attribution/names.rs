//! Scope names by index: registered on the monitored thread, under the monitor's lock, and read
//! by the lookout thread outside it. Naming the scopes of a window is most of a window close at
//! 100 000 scopes (one cache miss per name's count), so it is done without the lock that the
//! loop's idle mark and keyed scopes wait on (bench/metrics.md).

use std::sync::Arc;

use parking_lot::RwLock;

/// Names read per hold when naming many scopes: a registration meanwhile waits for one chunk.
const CHUNK: usize = 4096;

/// Append-only; clones share the table.
#[derive(Clone)]
pub struct Names(Arc<RwLock<Vec<Arc<str>>>>);

impl Names {
    pub fn new(first: &[&str]) -> Self {
        Names(Arc::new(RwLock::new(first.iter().map(|&n| Arc::from(n)).collect())))
    }

    /// The name of scope `index`; panics if it was never registered.
    pub fn get(&self, index: usize) -> Arc<str> {
        self.0.read()[index].clone()
    }

    /// Registers `name`; returns its index.
    pub fn push(&self, name: &str) -> usize {
        let mut all = self.0.write();
        all.push(Arc::from(name));
        all.len() - 1
    }

    /// Every name, in index order.
    pub fn all(&self) -> Vec<Arc<str>> {
        self.0.read().clone()
    }

    /// The table held as a registration holds it, for tests of what must not wait on it.
    #[cfg(test)]
    pub fn hold(&self) -> parking_lot::RwLockWriteGuard<'_, Vec<Arc<str>>> {
        self.0.write()
    }

    /// Pairs each item with the name of the scope `index` gives it, a chunk per hold.
    pub fn name_all<T, U>(&self, items: Vec<T>, index: impl Fn(&T) -> usize, mut pair: impl FnMut(T, Arc<str>) -> U) -> Vec<U> {
        let mut out = Vec::with_capacity(items.len());
        let mut items = items.into_iter().peekable();
        while items.peek().is_some() {
            let all = self.0.read();
            out.extend(items.by_ref().take(CHUNK).map(|t| {
                let name = all[index(&t)].clone();
                pair(t, name)
            }));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_many_across_chunks_in_order() {
        let names = Names::new(&["a"]);
        for i in 1..CHUNK * 2 + 3 {
            assert_eq!(names.push(&format!("n{i}")), i);
        }
        let items: Vec<usize> = (0..names.all().len()).rev().collect();
        let named = names.name_all(items, |&i| i, |i, n| (i, n));
        assert_eq!(named.len(), CHUNK * 2 + 3);
        assert_eq!((named[0].0, &*named[0].1), (CHUNK * 2 + 2, "n8194"));
        assert_eq!(&*named.last().unwrap().1, "a");
    }
}
