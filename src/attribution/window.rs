//! Windows: busy time per scope over a span, in the form they are kept (shared names, key
//! statistics in one table a window) and in their public JSON shape; and how a closed window
//! is built from what the aggregator read, outside the monitor's lock.

use std::collections::HashMap;
use std::sync::Arc;

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::runtime::cpu::Ran;
use crate::stalls::lag::LagStats;
use super::aggregator::{add, UNATTRIBUTED};
use super::keys::{self, KeyTable, Keys, Unnamed};
use super::ledger::Reading;
use super::names::Names;

#[derive(Clone, Debug, PartialEq)]
pub struct ScopeWindow {
    /// Scope index (= its slot); not part of the public output.
    pub index: usize,
    /// Shared with the aggregator's name table: windows kept by the thousand cost no copies.
    pub name: Arc<str>,
    pub busy_ms: f64,
    pub calls: f64,
    /// Its entry in the window's key table, if any of its work was keyed.
    pub keys: Option<u32>,
    /// Of its busy time, what the thread ran: closed windows whose thread CPU time is known
    /// (src/attribution/scope_cpu.rs).
    pub cpu_ms: Option<f64>,
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
    /// What CPU the thread got over a closed window (`None`: unknown, or a live window).
    pub ran: Option<Ran>,
    /// Closed windows this one stands for: 1, more in a downsampled recording.
    pub merged: u64,
    /// The key statistics of its keyed scopes, `ScopeWindow::keys` their entries.
    pub keys: KeyTable,
}

/// A window's raw material, taken under the monitor's lock: `finish` builds the window from it
/// (sorting keys and scopes, the long part of a close) without the lock.
pub struct Pending {
    pub seq: u64,
    pub start: f64,
    pub end: f64,
    /// (scope index, what it was charged) of each slot charged and of the keys rebound; a
    /// scope comes once per slot of its own and of its keys.
    pub charges: Vec<(usize, Reading)>,
    pub names: Names,
    pub named: Vec<(usize, Arc<str>, f64)>,
    pub unnamed: HashMap<usize, Unnamed>,
    pub max_keys: usize,
    pub worst_keys: usize,
    /// Bytes of the slots and readings the scan read into (freed by the close that took them).
    pub read_bytes: usize,
}

impl Pending {
    /// Heap bytes a close of this window allocates and frees again: the scan's buffers, the
    /// charges and the keys named (what `finish` sorts and sums them into is of their order).
    pub fn scratch_bytes(&self) -> usize {
        use std::mem::size_of;
        self.read_bytes + self.charges.capacity() * size_of::<(usize, Reading)>() + self.named.capacity() * size_of::<(usize, Arc<str>, f64)>()
    }

    pub fn finish(self, lag: Option<LagStats>) -> Window {
        let mut key_stats = keys::summarize(self.named, &self.unnamed, self.max_keys, self.worst_keys);
        let mut keys = KeyTable::default();
        let mut per_scope: HashMap<usize, Reading> = HashMap::new();
        for (scope, r) in self.charges {
            add(per_scope.entry(scope).or_default(), r);
        }
        let unattributed = per_scope.remove(&UNATTRIBUTED).unwrap_or_default();
        let charged = std::iter::once((UNATTRIBUTED, unattributed)).chain(per_scope).collect();
        let mut all = self.names.name_all(charged, |&(index, _)| index, |(index, r), name| ScopeWindow {
            index,
            name,
            busy_ms: r.busy_ms,
            calls: r.calls,
            keys: key_stats.remove(&index).map(|(stats, worst)| keys.push(stats, worst.iter().map(|(k, b)| (&**k, *b)))),
            cpu_ms: None,
        });
        keys.shrink();
        let mut scopes = all.split_off(1);
        let unattributed = all.pop().expect("unattributed comes first");
        scopes.sort_by(|a, b| b.busy_ms.total_cmp(&a.busy_ms).then(a.index.cmp(&b.index)));
        let busy_ms = unattributed.busy_ms + scopes.iter().map(|s| s.busy_ms).sum::<f64>();
        Window { seq: self.seq, start: self.start, end: self.end, busy_ms, unattributed, scopes, lag, ran: None, merged: 1, keys }
    }
}

impl Window {
    /// Heap bytes this window holds (scope names are shared, not counted): what a history or
    /// a recording keeps for it.
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Window>() + self.scopes.capacity() * std::mem::size_of::<ScopeWindow>() + self.keys.heap_bytes()
    }

    /// A scope's key statistics, if any of its work in this window was keyed.
    pub fn keys_of(&self, s: &ScopeWindow) -> Option<Keys<'_>> {
        s.keys.map(|i| self.keys.get(i))
    }

    /// The public shape (`index.d.ts`: `Window`), times as epoch milliseconds, to serialize
    /// straight into a JSON string: a read of wide windows builds no `Value` tree (≈ 500 bytes
    /// a scope entry, several times the JSON).
    pub fn json(&self, time_origin: f64) -> Json<'_> {
        Json { w: self, time_origin }
    }
}

/// Windows in the public shape, as a JSON array.
pub struct JsonWindows<'a>(pub &'a [Arc<Window>], pub f64);

impl Serialize for JsonWindows<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        ser.collect_seq(self.0.iter().map(|w| w.json(self.1)))
    }
}

pub struct Json<'a> {
    w: &'a Window,
    time_origin: f64,
}

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(None)?;
        self.entries(&mut m)?;
        m.end()
    }
}

impl Json<'_> {
    fn entries<M: SerializeMap>(&self, m: &mut M) -> Result<(), M::Error> {
        let (w, duration) = (self.w, self.w.end - self.w.start);
        m.serialize_entry("seq", &w.seq)?;
        m.serialize_entry("start", &(self.time_origin + w.start))?;
        m.serialize_entry("end", &(self.time_origin + w.end))?;
        m.serialize_entry("durationMs", &duration)?;
        m.serialize_entry("thread", &ThreadBusy { elu: elu(w.busy_ms, duration), busy_ms: w.busy_ms, ran: w.ran })?;
        m.serialize_entry("unattributed", &Scope { s: &w.unattributed, w, duration })?;
        m.serialize_entry("scopes", &Scopes { w, duration })?;
        if w.merged > 1 {
            m.serialize_entry("merged", &w.merged)?;
        }
        if let Some(l) = &w.lag {
            m.serialize_entry("lag", &Lag(l))?;
        }
        Ok(())
    }
}

/// `Monitor.liveWindow()`: the window being measured, what the monitor says of itself beside it,
/// and the last complete window.
pub struct LiveJson<'a> {
    pub current: Json<'a>,
    pub window_ms: f64,
    pub scopes_overflowed: u64,
    pub history_dropped: u64,
    pub last: Option<Json<'a>>,
}

impl Serialize for LiveJson<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(None)?;
        self.current.entries(&mut m)?;
        m.serialize_entry("windowMs", &self.window_ms)?;
        m.serialize_entry("scopesOverflowed", &self.scopes_overflowed)?;
        m.serialize_entry("historyDropped", &self.history_dropped)?;
        m.serialize_entry("last", &self.last)?;
        m.end()
    }
}

fn elu(busy: f64, duration: f64) -> f64 {
    if duration > 0.0 {
        (busy / duration).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// A window's `thread`: the thread's busy time in it.
struct ThreadBusy {
    elu: f64,
    busy_ms: f64,
    ran: Option<Ran>,
}

impl Serialize for ThreadBusy {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(None)?;
        m.serialize_entry("elu", &self.elu)?;
        m.serialize_entry("busyMs", &self.busy_ms)?;
        if let Some(r) = self.ran {
            m.serialize_entry("cpuMs", &r.cpu_ms)?;
            if let Some(t) = r.throttled_ms {
                m.serialize_entry("throttledMs", &t)?;
            }
        }
        m.end()
    }
}

struct Scope<'a> {
    s: &'a ScopeWindow,
    w: &'a Window,
    duration: f64,
}

impl Serialize for Scope<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let s = self.s;
        let mut m = ser.serialize_map(None)?;
        m.serialize_entry("name", &*s.name)?;
        m.serialize_entry("elu", &elu(s.busy_ms, self.duration))?;
        m.serialize_entry("busyMs", &s.busy_ms)?;
        if let Some(c) = s.cpu_ms {
            m.serialize_entry("cpuMs", &c)?;
        }
        m.serialize_entry("calls", &s.calls)?;
        if let Some(k) = self.w.keys_of(s) {
            m.serialize_entry("keys", &k)?;
        }
        m.end()
    }
}

struct Scopes<'a> {
    w: &'a Window,
    duration: f64,
}

impl Serialize for Scopes<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        ser.collect_seq(self.w.scopes.iter().map(|s| Scope { s, w: self.w, duration: self.duration }))
    }
}

struct Lag<'a>(&'a LagStats);

impl Serialize for Lag<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let l = self.0;
        let mut m = ser.serialize_map(Some(5))?;
        m.serialize_entry("stretches", &l.stretches)?;
        m.serialize_entry("stalls", &l.stalls)?;
        m.serialize_entry("p50Ms", &l.p50_ms)?;
        m.serialize_entry("p99Ms", &l.p99_ms)?;
        m.serialize_entry("maxMs", &l.max_ms)?;
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::keys::KeyStats;
    use serde_json::{json, Value};

    #[test]
    fn written_straight_out_a_window_has_its_public_shape() {
        let scope = |index, name: &str, busy_ms, keys| ScopeWindow { index, name: Arc::from(name), busy_ms, calls: 2.0, keys, cpu_ms: Some(busy_ms / 2.0) };
        let mut keys = KeyTable::default();
        let route = keys.push(KeyStats { count: 3, dropped: 1, p50_ms: 1.5, p99_ms: 4.0, max_ms: 4.0 }, [("k\"1", 4.0)]);
        let w = Window {
            seq: 7,
            start: 100.0,
            end: 300.0,
            busy_ms: 150.0,
            unattributed: scope(0, "(unattributed)", 50.0, None),
            scopes: vec![scope(2, "route", 100.0, Some(route))],
            lag: Some(LagStats { stretches: 4, stalls: 1, p50_ms: 2.0, p99_ms: 60.0, max_ms: 61.0 }),
            ran: Some(Ran { cpu_ms: 120.0, throttled_ms: Some(25.0) }),
            merged: 2,
            keys,
        };
        let written: Value = serde_json::from_str(&serde_json::to_string(&JsonWindows(&[Arc::new(w.clone())], 1000.0)).unwrap()).unwrap();
        let expected = json!([{
            "seq": 7, "start": 1100.0, "end": 1300.0, "durationMs": 200.0, "merged": 2,
            "thread": { "elu": 0.75, "busyMs": 150.0, "cpuMs": 120.0, "throttledMs": 25.0 },
            "unattributed": { "name": "(unattributed)", "elu": 0.25, "busyMs": 50.0, "cpuMs": 25.0, "calls": 2.0 },
            "scopes": [{ "name": "route", "elu": 0.5, "busyMs": 100.0, "cpuMs": 50.0, "calls": 2.0,
                "keys": { "count": 3, "dropped": 1, "p50Ms": 1.5, "p99Ms": 4.0, "maxMs": 4.0, "worst": [{ "key": "k\"1", "busyMs": 4.0 }] } }],
            "lag": { "stretches": 4, "stalls": 1, "p50Ms": 2.0, "p99Ms": 60.0, "maxMs": 61.0 },
        }]);
        assert_eq!(written, expected);
        assert_eq!(serde_json::to_value(w.json(1000.0)).unwrap(), expected[0]);
        assert!(w.heap_bytes() > std::mem::size_of::<Window>() + std::mem::size_of::<ScopeWindow>() + std::mem::size_of::<KeyStats>() + 3);
    }
}
