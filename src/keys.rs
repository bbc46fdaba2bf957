//! Per-key statistics of one scope in one window: how busy each key (a message, a request)
//! kept the loop. Every key is in the histogram; names are kept for at most `max_keys` keys a
//! window (the busiest), so memory stays bounded whatever the key rate.

use std::collections::HashMap;

use hdrhistogram::Histogram;

#[derive(Clone, Debug, PartialEq)]
pub struct KeyStats {
    /// Keys charged in the window, named or not.
    pub count: u64,
    /// Keys past the `max_keys` cap: counted and in the percentiles, but unnamed.
    pub dropped: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// The busiest named keys, busiest first.
    pub worst: Vec<(String, f64)>,
}

/// Keys whose names were not kept: their busy times, in constant memory.
#[derive(Clone)]
pub struct Unnamed {
    hist: Histogram<u32>,
    max_ms: f64,
}

impl Default for Unnamed {
    fn default() -> Self {
        Unnamed { hist: histogram(), max_ms: 0.0 }
    }
}

impl Unnamed {
    pub fn record(&mut self, busy_ms: f64) {
        self.hist.saturating_record(micros(busy_ms));
        self.max_ms = self.max_ms.max(busy_ms);
    }
}

// Microseconds from 1 µs to an hour, two significant digits (1 %): enough to rank keys, and
// ~13 KB per histogram. Fixed bounds: saturating_record does not grow an auto-resizing one.
fn histogram() -> Histogram<u32> {
    Histogram::new_with_bounds(1, 3_600_000_000, 2).expect("valid histogram bounds")
}

fn micros(ms: f64) -> u64 {
    ((ms * 1e3).round() as u64).max(1)
}

/// Per-scope statistics from `named` (scope, key, busy ms) entries, a key possibly repeated,
/// plus what was already `unnamed`. Names are kept for the `max_keys` busiest keys overall.
pub fn summarize(mut named: Vec<(usize, &str, f64)>, unnamed: &HashMap<usize, Unnamed>, max_keys: usize, worst: usize) -> HashMap<usize, KeyStats> {
    named.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    named.dedup_by(|later, kept| {
        let same = (later.0, later.1) == (kept.0, kept.1);
        if same {
            kept.2 += later.2;
        }
        same
    });
    named.sort_unstable_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.1.cmp(b.1)));

    let mut per_scope: HashMap<usize, (Unnamed, u64, Vec<(String, f64)>)> = HashMap::new();
    for (rank, (scope, key, busy)) in named.into_iter().enumerate() {
        let (keys, dropped, names) = per_scope.entry(scope).or_insert_with(|| (Unnamed::default(), 0, Vec::new()));
        keys.record(busy);
        if rank >= max_keys {
            *dropped += 1;
        } else if names.len() < worst {
            names.push((key.to_owned(), busy));
        }
    }
    for (&scope, u) in unnamed {
        let (keys, dropped, _) = per_scope.entry(scope).or_insert_with(|| (Unnamed::default(), 0, Vec::new()));
        *dropped += u.hist.len();
        keys.hist.add(&u.hist).expect("histograms of one shape add");
        keys.max_ms = keys.max_ms.max(u.max_ms);
    }
    per_scope
        .into_iter()
        .map(|(scope, (keys, dropped, names))| {
            let at = |q: f64| keys.hist.value_at_quantile(q) as f64 / 1e3;
            let stats = KeyStats { count: keys.hist.len(), dropped, p50_ms: at(0.5), p99_ms: at(0.99), max_ms: keys.max_ms, worst: names };
            (scope, stats)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_worst_and_merging() {
        let names: Vec<String> = (1..=100).map(|i| format!("k{i}")).collect();
        let mut named: Vec<(usize, &str, f64)> = names.iter().enumerate().map(|(i, k)| (3, k.as_str(), (i + 1) as f64 * 0.5)).collect();
        named.push((3, "slow", 4000.0));
        named.push((3, "slow", 1000.0)); // the same key seen twice (retired, then rebound)
        named.push((4, "other-scope", 1.0));
        let s = summarize(named, &HashMap::new(), 1000, 2);
        let k = &s[&3];
        assert_eq!(k.count, 101);
        assert_eq!(k.dropped, 0);
        assert!((k.p50_ms - 25.5).abs() < 0.3, "{k:?}");
        assert!((k.p99_ms - 50.0).abs() < 0.5, "{k:?}");
        assert_eq!(k.max_ms, 5000.0);
        assert_eq!(k.worst, vec![("slow".to_string(), 5000.0), ("k100".to_string(), 50.0)]);
        assert_eq!(s[&4].count, 1);
    }

    #[test]
    fn past_the_cap_keys_lose_their_names_not_their_time() {
        let named = vec![(2, "a", 1.0), (2, "b", 30.0), (2, "c", 5.0)];
        let mut unnamed = HashMap::new();
        unnamed.entry(2).or_insert_with(Unnamed::default).record(100.0);
        let k = &summarize(named, &unnamed, 2, 5)[&2];
        assert_eq!(k.count, 4);
        assert_eq!(k.dropped, 2, "one past the cap, one unnamed already");
        assert_eq!(k.max_ms, 100.0);
        assert_eq!(k.worst, vec![("b".to_string(), 30.0), ("c".to_string(), 5.0)], "the busiest keep their names");
    }
}
