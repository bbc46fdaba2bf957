//! Windows: busy time per scope over a span, in the form they are kept (shared names, boxed
//! key statistics) and in their public JSON shape; and how a closed window is built from what
//! the aggregator read, outside the monitor's lock.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::keys::{self, KeyStats, Unnamed};
use crate::lag::LagStats;
use crate::ledger::Reading;

#[derive(Clone, Debug, PartialEq)]
pub struct ScopeWindow {
    /// Scope index (= its slot); not part of the public output.
    pub index: usize,
    /// Shared with the aggregator's name table: windows kept by the thousand cost no copies.
    pub name: Arc<str>,
    pub busy_ms: f64,
    pub calls: f64,
    /// Boxed: most scopes have no keys, and windows are kept by the thousand.
    pub keys: Option<Box<KeyStats>>,
}

/// One window: busy time per scope between `start` and `end` (monitored thread's clock, ms).
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    pub seq: u64,
    pub start: f64,
    pub end: f64,
    pub busy_ms: f64,
    pub unattributed: ScopeWindow,
    /// Scopes that were charged, busiest first.
    pub scopes: Vec<ScopeWindow>,
    /// Loop stretches and stalls, for a closed window of a monitor that tracks lag.
    pub lag: Option<LagStats>,
    /// Closed windows this one stands for: 1, more in a downsampled recording.
    pub merged: u64,
}

/// A window's raw material, taken under the monitor's lock: `finish` builds the window from it
/// (sorting keys and scopes, the long part of a close) without the lock.
pub struct Pending {
    pub seq: u64,
    pub start: f64,
    pub end: f64,
    /// (scope index, name, what it was charged) of each scope charged, unattributed first.
    pub scopes: Vec<(usize, Arc<str>, Reading)>,
    pub named: Vec<(usize, Arc<str>, f64)>,
    pub unnamed: HashMap<usize, Unnamed>,
    pub max_keys: usize,
    pub worst_keys: usize,
}

impl Pending {
    pub fn finish(self, lag: Option<LagStats>) -> Window {
        let mut key_stats = keys::summarize(self.named, &self.unnamed, self.max_keys, self.worst_keys);
        let mut all = self.scopes.into_iter().map(|(index, name, r)| ScopeWindow {
            index,
            name,
            busy_ms: r.busy_ms,
            calls: r.calls,
            keys: key_stats.remove(&index).map(Box::new),
        });
        let unattributed = all.next().expect("unattributed comes first");
        let mut scopes: Vec<ScopeWindow> = all.collect();
        scopes.sort_by(|a, b| b.busy_ms.total_cmp(&a.busy_ms).then(a.index.cmp(&b.index)));
        let busy_ms = unattributed.busy_ms + scopes.iter().map(|s| s.busy_ms).sum::<f64>();
        Window { seq: self.seq, start: self.start, end: self.end, busy_ms, unattributed, scopes, lag, merged: 1 }
    }
}

impl Window {
    /// The public shape (`index.d.ts`: `Window`), times as epoch milliseconds.
    pub fn to_json(&self, time_origin: f64) -> Value {
        let duration = self.end - self.start;
        let elu = |busy: f64| if duration > 0.0 { (busy / duration).clamp(0.0, 1.0) } else { 0.0 };
        let scope = |s: &ScopeWindow| {
            let mut v = json!({ "name": &*s.name, "elu": elu(s.busy_ms), "busyMs": s.busy_ms, "calls": s.calls });
            if let Some(k) = &s.keys {
                v["keys"] = json!({
                    "count": k.count, "dropped": k.dropped,
                    "p50Ms": k.p50_ms, "p99Ms": k.p99_ms, "maxMs": k.max_ms,
                    "worst": k.worst.iter().map(|(key, b)| json!({ "key": key, "busyMs": b })).collect::<Vec<_>>(),
                });
            }
            v
        };
        let mut v = json!({
            "seq": self.seq,
            "start": time_origin + self.start,
            "end": time_origin + self.end,
            "durationMs": duration,
            "thread": { "elu": elu(self.busy_ms), "busyMs": self.busy_ms },
            "unattributed": scope(&self.unattributed),
            "scopes": self.scopes.iter().map(scope).collect::<Vec<_>>(),
        });
        if self.merged > 1 {
            v["merged"] = json!(self.merged);
        }
        if let Some(l) = &self.lag {
            v["lag"] = json!({ "stretches": l.stretches, "stalls": l.stalls, "p50Ms": l.p50_ms, "p99Ms": l.p99_ms, "maxMs": l.max_ms });
        }
        v
    }
}
