//! Busy time per scope since start, the current window included: what `Monitor.totals()`, a
//! capture's report draft and a metrics scrape read.

use std::sync::Arc;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::json;

use super::{add, delta, Aggregator, Ledger, Reading, RLOOP, UNATTRIBUTED};

impl Aggregator {
    /// Busy time and calls per scope index since start, the current window included.
    pub fn totals(&self, ledger: &Ledger, now: f64) -> Vec<(Arc<str>, Reading)> {
        self.names.all().into_iter().zip(self.raw_totals(ledger, now).sum()).collect()
    }

    /// What `totals` needs, copied: a metrics scrape takes it under the monitor's lock and adds
    /// it up outside, so the lock is held for copies, not for the sums (bench/metrics.md).
    pub fn raw_totals(&self, ledger: &Ledger, now: f64) -> RawTotals {
        let key_base = self.cfg.key_base();
        let (_, readings) = ledger.snapshot(now, |running| self.active.to_read(self.scopes(), self.key_owner.len(), running));
        let current = readings
            .into_iter()
            .filter_map(|(slot, reading)| {
                let scope = if slot < key_base { slot } else { self.key_owner.get(slot - key_base)?.as_ref()?.scope };
                Some((scope, delta(reading, self.base.get(slot))))
            })
            .collect();
        RawTotals { closed: self.totals.clone(), retired: self.retired.per_scope.clone(), current }
    }
}

/// Per-scope totals of the closed windows and the current window's charges, to be summed.
pub struct RawTotals {
    closed: Vec<Reading>,
    retired: Vec<Reading>,
    current: Vec<(usize, Reading)>,
}

impl RawTotals {
    /// Busy time and calls per scope index since start.
    pub fn sum(self) -> Vec<Reading> {
        let mut sums = self.closed;
        for (scope, r) in self.retired.into_iter().enumerate().chain(self.current) {
            add(&mut sums[scope], r);
        }
        sums
    }
}

/// Busy time per scope since start, the current window included: `Monitor.totals()`. Read under
/// the monitor's lock (`Totals::read`), sorted and written out after it.
pub struct Totals {
    all: Vec<(Arc<str>, Reading)>,
    scopes_overflowed: u64,
}

impl Totals {
    pub fn read(agg: &Aggregator, ledger: &Ledger, now: f64) -> Self {
        Totals { all: agg.totals(ledger, now), scopes_overflowed: agg.scopes_overflowed() }
    }
}

impl Serialize for Totals {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        struct Scope<'a>(&'a str, Reading);
        impl Serialize for Scope<'_> {
            fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
                let mut m = ser.serialize_map(Some(3))?;
                m.serialize_entry("name", self.0)?;
                m.serialize_entry("busyMs", &self.1.busy_ms)?;
                m.serialize_entry("calls", &self.1.calls)?;
                m.end()
            }
        }
        let unattributed = &self.all[UNATTRIBUTED];
        let rloop_ms = self.all[RLOOP].1.busy_ms;
        // rloop's own work is no scope and not the app's busy time: said apart, as windows do.
        let rest: Vec<&(Arc<str>, Reading)> = self.all.iter().enumerate().filter(|&(i, _)| i != UNATTRIBUTED && i != RLOOP).map(|(_, s)| s).collect();
        let busy_ms = unattributed.1.busy_ms + rest.iter().map(|s| s.1.busy_ms).sum::<f64>();
        let mut scopes: Vec<&(Arc<str>, Reading)> = rest.into_iter().filter(|(_, r)| r.busy_ms > 0.0 || r.calls > 0.0).collect();
        scopes.sort_by(|a, b| b.1.busy_ms.total_cmp(&a.1.busy_ms));
        let mut m = ser.serialize_map(Some(4))?;
        m.serialize_entry("thread", &json!({ "busyMs": busy_ms, "rloopMs": rloop_ms }))?;
        m.serialize_entry("unattributed", &Scope(&unattributed.0, unattributed.1))?;
        m.serialize_entry("scopes", &scopes.iter().map(|(name, r)| Scope(name, *r)).collect::<Vec<_>>())?;
        m.serialize_entry("scopesOverflowed", &self.scopes_overflowed)?;
        m.end()
    }
}
