//! Per-key statistics of one scope in one window: how busy each key (a message, a request)
//! kept the loop. Every key is in the histogram; names are kept for at most `max_keys` keys a
//! window (the busiest), so memory stays bounded whatever the key rate; the time of unnamed
//! keys is kept in buckets whose memory follows what they hold.

use std::collections::HashMap;

use serde::ser::{Serialize, SerializeMap, Serializer};
use smol_str::SmolStr;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KeyStats {
    /// Keys charged in the window, named or not.
    pub count: u64,
    /// Keys past the `max_keys` cap: counted and in the percentiles, but unnamed.
    pub dropped: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// The key statistics of a window's keyed scopes in three blocks, whatever their number: the
/// statistics, the worst keys, and the worst keys' names back to back. A box and a list per
/// keyed scope, and a string kept per worst key, were tens of thousands of small blocks a
/// window and malloc's slack around them (bench/memory.md, ninth pass).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KeyTable {
    /// A scope's statistics and the end of its worst keys in `worst` (they start where the
    /// previous scope's end).
    stats: Vec<(KeyStats, usize)>,
    /// (end of the key's name in `names`, busy ms), busiest first within a scope.
    worst: Vec<(usize, f64)>,
    names: String,
}

/// One scope's entry in a [`KeyTable`].
#[derive(Clone, Copy, Debug)]
pub struct Keys<'a> {
    pub stats: &'a KeyStats,
    table: &'a KeyTable,
    worst: (usize, usize),
}

impl<'a> Keys<'a> {
    /// The busiest named keys, busiest first.
    pub fn worst(&self) -> impl Iterator<Item = (&'a str, f64)> + 'a {
        let t = self.table;
        (self.worst.0..self.worst.1).map(move |i| {
            let start = if i == 0 { 0 } else { t.worst[i - 1].0 };
            let (end, busy) = t.worst[i];
            (&t.names[start..end], busy)
        })
    }
}

impl KeyTable {
    /// Adds a scope's statistics and its worst keys, busiest first; returns their index.
    pub fn push<'k>(&mut self, stats: KeyStats, worst: impl IntoIterator<Item = (&'k str, f64)>) -> u32 {
        for (key, busy) in worst {
            self.names.push_str(key);
            self.worst.push((self.names.len(), busy));
        }
        self.stats.push((stats, self.worst.len()));
        (self.stats.len() - 1) as u32
    }

    pub fn get(&self, i: u32) -> Keys<'_> {
        let i = i as usize;
        let start = if i == 0 { 0 } else { self.stats[i - 1].1 };
        let (stats, end) = &self.stats[i];
        Keys { stats, table: self, worst: (start, *end) }
    }

    /// Gives back what growing by doubling left over: a table is kept, not grown, once built.
    pub fn shrink(&mut self) {
        self.stats.shrink_to_fit();
        self.worst.shrink_to_fit();
        self.names.shrink_to_fit();
    }

    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.stats.capacity() * size_of::<(KeyStats, usize)>() + self.worst.capacity() * size_of::<(usize, f64)>() + self.names.capacity()
    }
}

/// Busy times of keys in constant-ratio buckets, kept sparsely: memory follows the buckets in
/// use (a few per scope and window, 1 100 at most over 1 µs – 1 h), where a dense histogram
/// of that range at this precision takes 13 KB per scope whether it holds one key or many.
#[derive(Clone, Debug, Default)]
pub struct Unnamed {
    /// (bucket, keys), by bucket.
    buckets: Vec<(u16, u32)>,
    count: u64,
    max_ms: f64,
}

/// ln of the bucket ratio, 1.02: a bucket's middle is within 1 % of every value in it.
const LN_RATIO: f64 = 0.019_802_627_296_179_712;

fn bucket(ms: f64) -> u16 {
    let us = (ms * 1e3).clamp(1.0, 3.6e9); // 1 µs to an hour
    (us.ln() / LN_RATIO) as u16
}

fn middle_ms(b: u16) -> f64 {
    ((b as f64 + 0.5) * LN_RATIO).exp() / 1e3
}

impl Unnamed {
    pub fn record(&mut self, busy_ms: f64) {
        self.add(bucket(busy_ms), 1);
        self.count += 1;
        self.max_ms = self.max_ms.max(busy_ms);
    }

    fn add(&mut self, b: u16, n: u32) {
        match self.buckets.binary_search_by_key(&b, |x| x.0) {
            Ok(i) => self.buckets[i].1 += n,
            Err(i) => self.buckets.insert(i, (b, n)),
        }
    }

    fn merge(&mut self, other: &Unnamed) {
        for &(b, n) in &other.buckets {
            self.add(b, n);
        }
        self.count += other.count;
        self.max_ms = self.max_ms.max(other.max_ms);
    }

    /// The `q` quantile within 1 %, never above the largest value recorded.
    fn quantile(&self, q: f64) -> f64 {
        let rank = ((q * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for &(b, n) in &self.buckets {
            seen += n as u64;
            if seen >= rank {
                return middle_ms(b).min(self.max_ms);
            }
        }
        self.max_ms
    }
}

/// Per-scope statistics and worst keys (busiest first) from `named` (scope, key, busy ms)
/// entries, a key possibly repeated, plus what was already `unnamed`. Names are kept for the
/// `max_keys` busiest keys overall.
pub fn summarize(mut named: Vec<(usize, SmolStr, f64)>, unnamed: &HashMap<usize, Unnamed>, max_keys: usize, worst: usize) -> HashMap<usize, (KeyStats, Vec<(SmolStr, f64)>)> {
    named.sort_unstable_by(|a, b| (a.0, &*a.1).cmp(&(b.0, &*b.1)));
    named.dedup_by(|later, kept| {
        let same = later.0 == kept.0 && later.1 == kept.1;
        if same {
            kept.2 += later.2;
        }
        same
    });
    named.sort_unstable_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.1.cmp(&b.1)));

    let mut per_scope: HashMap<usize, (Unnamed, u64, Vec<(SmolStr, f64)>)> = HashMap::new();
    for (rank, (scope, key, busy)) in named.into_iter().enumerate() {
        let (keys, dropped, names) = per_scope.entry(scope).or_insert_with(|| (Unnamed::default(), 0, Vec::new()));
        keys.record(busy);
        if rank >= max_keys {
            *dropped += 1;
        } else if names.len() < worst {
            names.push((key, busy));
        }
    }
    for (&scope, u) in unnamed {
        let (keys, dropped, _) = per_scope.entry(scope).or_insert_with(|| (Unnamed::default(), 0, Vec::new()));
        *dropped += u.count;
        keys.merge(u);
    }
    per_scope
        .into_iter()
        .map(|(scope, (keys, dropped, names))| {
            let stats = KeyStats { count: keys.count, dropped, p50_ms: keys.quantile(0.5), p99_ms: keys.quantile(0.99), max_ms: keys.max_ms };
            (scope, (stats, names))
        })
        .collect()
}

/// A scope's `keys` in a window's public JSON (`index.d.ts`: `KeyStats`).
impl Serialize for Keys<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let k = self.stats;
        let mut m = ser.serialize_map(Some(6))?;
        m.serialize_entry("count", &k.count)?;
        m.serialize_entry("dropped", &k.dropped)?;
        m.serialize_entry("p50Ms", &k.p50_ms)?;
        m.serialize_entry("p99Ms", &k.p99_ms)?;
        m.serialize_entry("maxMs", &k.max_ms)?;
        m.serialize_entry("worst", &Worst(*self))?;
        m.end()
    }
}

struct Worst<'a>(Keys<'a>);

impl Serialize for Worst<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        struct One<'a>(&'a str, f64);
        impl Serialize for One<'_> {
            fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
                let mut m = ser.serialize_map(Some(2))?;
                m.serialize_entry("key", self.0)?;
                m.serialize_entry("busyMs", &self.1)?;
                m.end()
            }
        }
        ser.collect_seq(self.0.worst().map(|(k, b)| One(k, b)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_worst_and_merging() {
        let names: Vec<String> = (1..=100).map(|i| format!("k{i}")).collect();
        let mut named: Vec<(usize, SmolStr, f64)> = names.iter().enumerate().map(|(i, k)| (3, SmolStr::new(k), (i + 1) as f64 * 0.5)).collect();
        named.push((3, SmolStr::new("slow"), 4000.0));
        named.push((3, SmolStr::new("slow"), 1000.0)); // the same key seen twice (retired, then rebound)
        named.push((4, SmolStr::new("other-scope"), 1.0));
        let s = summarize(named, &HashMap::new(), 1000, 2);
        let (k, worst) = &s[&3];
        assert_eq!(k.count, 101);
        assert_eq!(k.dropped, 0);
        assert!((k.p50_ms - 25.5).abs() < 0.3, "{k:?}");
        assert!((k.p99_ms - 50.0).abs() < 0.5, "{k:?}");
        assert_eq!(k.max_ms, 5000.0);
        assert_eq!(*worst, vec![("slow".into(), 5000.0), ("k100".into(), 50.0)]);
        assert_eq!(s[&4].0.count, 1);
    }

    #[test]
    fn buckets_are_within_one_percent_and_sparse() {
        let mut u = Unnamed::default();
        for i in 1..=1000 {
            u.record(i as f64 * 0.01); // 10 µs .. 10 ms
        }
        u.record(3_600_000.0 * 2.0); // past an hour: the last bucket, max exact
        assert!((u.quantile(0.5) - 5.0).abs() < 0.05, "{}", u.quantile(0.5));
        assert!((u.quantile(0.99) - 9.9).abs() < 0.1, "{}", u.quantile(0.99));
        assert_eq!(u.quantile(1.0), 7_200_000.0_f64.min(middle_ms(bucket(7_200_000.0))));
        assert!(u.buckets.len() < 400, "{} buckets for 1 001 values", u.buckets.len());
        let mut one = Unnamed::default();
        one.record(2.5);
        assert_eq!(one.buckets.len(), 1);
        assert_eq!(one.quantile(0.99), 2.5, "never above the max");
    }

    #[test]
    fn past_the_cap_keys_lose_their_names_not_their_time() {
        let named = vec![(2, SmolStr::new("a"), 1.0), (2, SmolStr::new("b"), 30.0), (2, SmolStr::new("c"), 5.0)];
        let mut unnamed = HashMap::new();
        unnamed.entry(2).or_insert_with(Unnamed::default).record(100.0);
        let (k, worst) = &summarize(named, &unnamed, 2, 5)[&2];
        assert_eq!(k.count, 4);
        assert_eq!(k.dropped, 2, "one past the cap, one unnamed already");
        assert_eq!(k.max_ms, 100.0);
        assert_eq!(*worst, vec![("b".into(), 30.0), ("c".into(), 5.0)], "the busiest keep their names");
    }

    #[test]
    fn a_table_gives_each_scope_its_own_worst_keys() {
        let stats = |count| KeyStats { count, dropped: 0, p50_ms: 1.0, p99_ms: 2.0, max_ms: 3.0 };
        let mut t = KeyTable::default();
        let a = t.push(stats(2), [("a-1", 3.0), ("é-2", 1.0)]);
        let none = t.push(stats(1), []);
        let b = t.push(stats(1), [("b-1", 2.0)]);
        t.shrink();
        assert_eq!(t.get(a).worst().collect::<Vec<_>>(), vec![("a-1", 3.0), ("é-2", 1.0)]);
        assert_eq!(t.get(none).worst().count(), 0);
        assert_eq!((t.get(b).stats.count, t.get(b).worst().collect::<Vec<_>>()), (1, vec![("b-1", 2.0)]));
        assert_eq!(t.heap_bytes(), 3 * std::mem::size_of::<(KeyStats, usize)>() + 3 * 16 + "a-1é-2b-1".len());
    }
}
