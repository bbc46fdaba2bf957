//! A window in its public JSON shape (`index.d.ts`: `Window`), serialized straight into a JSON
//! string.

use std::sync::Arc;

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::runtime::cpu::Ran;
use crate::stalls::gc::GcKind;
use crate::stalls::lag::LagStats;
use super::{ScopeWindow, Window};

impl Window {
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
        m.serialize_entry("thread", &ThreadBusy { elu: elu(w.busy_ms, duration), busy_ms: w.busy_ms, rloop_ms: w.rloop_ms, ran: w.ran, gc: w.gc.as_deref() })?;
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

/// A window's `thread`: the app's busy time in it and rloop's own, what CPU the thread got and its collections.
struct ThreadBusy<'a> {
    elu: f64,
    busy_ms: f64,
    rloop_ms: f64,
    ran: Option<Ran>,
    gc: Option<&'a [GcKind]>,
}

impl Serialize for ThreadBusy<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(None)?;
        m.serialize_entry("elu", &self.elu)?;
        m.serialize_entry("busyMs", &self.busy_ms)?;
        if self.rloop_ms > 0.0 {
            m.serialize_entry("rloopMs", &self.rloop_ms)?;
        }
        if let Some(r) = self.ran {
            m.serialize_entry("cpuMs", &r.cpu_ms)?;
            if let Some(t) = r.throttled_ms {
                m.serialize_entry("throttledMs", &t)?;
            }
        }
        if let Some(gc) = self.gc {
            m.serialize_entry("gc", gc)?;
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
    use crate::attribution::keys::{KeyStats, KeyTable};
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
            rloop_ms: 12.5,
            unattributed: scope(0, "(unattributed)", 50.0, None),
            scopes: vec![scope(2, "route", 100.0, Some(route))],
            lag: Some(LagStats { stretches: 4, stalls: 1, p50_ms: 2.0, p99_ms: 60.0, max_ms: 61.0 }),
            ran: Some(Ran { cpu_ms: 120.0, throttled_ms: Some(25.0) }),
            gc: Some(vec![GcKind { kind: "major", ms: 30.0, count: 1 }, GcKind { kind: "minor", ms: 2.5, count: 3 }]),
            merged: 2,
            keys,
        };
        let written: Value = serde_json::from_str(&serde_json::to_string(&JsonWindows(&[Arc::new(w.clone())], 1000.0)).unwrap()).unwrap();
        let expected = json!([{
            "seq": 7, "start": 1100.0, "end": 1300.0, "durationMs": 200.0, "merged": 2,
            "thread": { "elu": 0.75, "busyMs": 150.0, "rloopMs": 12.5, "cpuMs": 120.0, "throttledMs": 25.0,
                "gc": [{ "kind": "major", "ms": 30.0, "count": 1 }, { "kind": "minor", "ms": 2.5, "count": 3 }] },
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
