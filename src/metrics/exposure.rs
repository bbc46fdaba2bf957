//! The cardinality guard, kept per reader (the endpoint, each adapter) and thread: the `top`
//! scopes by busy time since start get series of their own, the rest are summed as `(other)`.
//! Every counter goes up only, whatever the ranking does, and each busy ms is in exactly one
//! series when it is first exported, so `rate()` of each series and of their sum is right: a
//! read charges what a scope was charged since the last read to its own series if the scope
//! was shown then and is shown now, else to `(other)`. A scope that enters the top goes on
//! from what its own series had (0 the first time: its time so far is in `(other)`), unless
//! this is the first read to find it charged (nothing of it exported yet: it starts with all
//! its time); one that leaves the top stops where it was, and `(other)` counts its time from
//! then on.

use std::collections::{HashMap, HashSet};

use crate::attribution::aggregator::OTHER;
use crate::attribution::ledger::Reading;

#[derive(Default)]
pub struct Exposure {
    /// Each scope's total at the last read, by scope index.
    seen: Vec<Reading>,
    /// What each scope's own series has counted, for scopes shown at some read.
    own: HashMap<usize, Reading>,
    /// Shown at the last read.
    shown: HashSet<usize>,
    other: Reading,
    /// Scopes whose time has gone into `(other)`, by scope index (a bit each), and their number.
    folded: Vec<u64>,
    folded_count: u64,
    /// Stalls counted at the last read (to hand each ended stall's length on once).
    pub stalls_seen: u64,
    /// Garbage collections counted at the last read (the same, for each collection).
    pub gc_seen: u64,
}

/// One read's per-scope counters.
#[derive(Debug, PartialEq)]
pub struct Exposed {
    /// The shown scopes, busiest since start first: scope index and its own series' value.
    pub shown: Vec<(usize, Reading)>,
    /// `(other)`, once anything has been folded.
    pub other: Option<Reading>,
    /// Distinct scopes whose time has gone into `(other)` (names past maxScopes not included).
    pub folded: u64,
}

fn charged(r: &Reading) -> bool {
    r.busy_ms > 0.0 || r.calls > 0.0
}

fn add(to: &mut Reading, d: Reading) {
    to.busy_ms += d.busy_ms;
    to.calls += d.calls;
}

/// The `top` charged scopes of `totals` (by index) by busy time, busiest first, `OTHER` left out.
fn rank(totals: &[Reading], top: usize) -> Vec<usize> {
    let mut ranked: Vec<usize> = (0..totals.len()).filter(|&i| i != OTHER && charged(&totals[i])).collect();
    let by_busy = |a: &usize, b: &usize| totals[*b].busy_ms.total_cmp(&totals[*a].busy_ms).then(a.cmp(b));
    if ranked.len() > top {
        ranked.select_nth_unstable_by(top, by_busy);
        ranked.truncate(top);
    }
    ranked.sort_unstable_by(by_busy);
    ranked
}

impl Exposure {
    /// Charges what each scope of `totals` (since start, by index) was charged since the last
    /// read, and ranks them again.
    pub fn read(&mut self, totals: &[Reading], top: usize) -> Exposed {
        let ranked = rank(totals, top);
        let shown: HashSet<usize> = ranked.iter().copied().collect();
        self.seen.resize(totals.len(), Reading::default());
        if self.folded.len() * 64 < totals.len() {
            self.folded.resize(totals.len().div_ceil(64), 0);
        }
        for (i, (now, seen)) in totals.iter().zip(&mut self.seen).enumerate() {
            let d = Reading { busy_ms: (now.busy_ms - seen.busy_ms).max(0.0), calls: (now.calls - seen.calls).max(0.0) };
            let fresh = !charged(seen); // none of its time exported yet
            *seen = *now;
            if !charged(&d) {
                continue;
            }
            if shown.contains(&i) && (fresh || self.shown.contains(&i)) {
                add(self.own.entry(i).or_default(), d);
            } else {
                add(&mut self.other, d);
                let (word, bit) = (i / 64, 1u64 << (i % 64));
                if i != OTHER && self.folded[word] & bit == 0 {
                    self.folded[word] |= bit;
                    self.folded_count += 1;
                }
            }
        }
        self.shown = shown;
        Exposed {
            shown: ranked.iter().map(|&i| (i, self.own.get(&i).copied().unwrap_or_default())).collect(),
            other: charged(&self.other).then_some(self.other),
            folded: self.folded_count,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(busy_ms: f64) -> Reading {
        Reading { busy_ms, calls: 1.0 }
    }

    #[test]
    fn every_series_goes_up_only_when_the_ranking_changes() {
        let mut e = Exposure::default();
        // Index 0 unattributed, 1 the aggregator's own (other), then a, b, c.
        let first = e.read(&[Reading::default(), Reading::default(), r(30.0), r(20.0), r(10.0)], 2);
        assert_eq!(first.shown, [(2, r(30.0)), (3, r(20.0))], "first read: each shown scope has its total");
        assert_eq!(first.other, Some(r(10.0)));
        assert_eq!(first.folded, 1);
        // c overtakes b: b stops at 20, c goes on from 0 (its 10, then 40, and b's last 5 are in (other)).
        let second = e.read(&[Reading::default(), Reading::default(), r(35.0), r(25.0), r(50.0)], 2);
        assert_eq!(second.shown, [(4, Reading::default()), (2, r(35.0))]);
        assert_eq!(second.other, Some(r(55.0)), "(other) took c's 40 and b's 5, and gave nothing back");
        // b comes back: it goes on from its own 20, its time in between stays in (other).
        let third = e.read(&[Reading::default(), Reading::default(), r(36.0), r(80.0), r(51.0)], 2);
        assert_eq!(third.shown, [(3, r(20.0)), (4, Reading { busy_ms: 1.0, calls: 0.0 })]);
        assert_eq!(third.other, Some(r(111.0)));
        let sum = third.shown.iter().map(|s| s.1.busy_ms).sum::<f64>() + third.other.unwrap().busy_ms;
        assert_eq!(sum + 35.0, 36.0 + 80.0 + 51.0, "a's 35, where it stopped, and the rest: every ms once");
        assert_eq!(third.folded, 3, "c, b and a have each been folded once");
        // d, new since the last read: nothing of it exported yet, its series starts with it all.
        let fourth = e.read(&[Reading::default(), Reading::default(), r(36.0), r(80.0), r(51.0), r(500.0)], 2);
        assert_eq!(fourth.shown, [(5, r(500.0)), (3, r(20.0))]);
        assert_eq!(fourth.other, Some(r(111.0)));
    }

    #[test]
    fn names_past_max_scopes_are_always_folded() {
        let mut e = Exposure::default();
        let x = e.read(&[Reading::default(), r(99.0), r(1.0)], 5);
        assert_eq!(x.shown, [(2, r(1.0))]);
        assert_eq!(x.other, Some(r(99.0)));
        assert_eq!(x.folded, 0);
    }
}
