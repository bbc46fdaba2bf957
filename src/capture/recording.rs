//! Recordings: what one capture keeps of a monitor — every window closed while it runs and
//! every stall — in bounded memory, however long the capture lasts.
//!
//! A recording holds at most `MAX_WINDOWS` windows (and at most `MAX_ENTRIES` scope entries
//! over all of them). When full, neighbouring windows are merged in pairs and each later
//! window then covers twice as many closed windows, so a recording of any length is an even
//! timeline of its whole span. A merged window sums busy time and calls per scope and lag
//! stretches and stalls; what cannot be merged from summaries is bounded instead: key and
//! stretch percentiles become the largest of the merged windows' (an upper bound of the true
//! percentile over the span), worst keys the busiest of the merged lists, and `merged` says
//! how many windows it stands for.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Value};

use crate::attribution::aggregator::{ScopeWindow, Window};
use crate::attribution::keys::{KeyStats, KeyTable, Keys};
use crate::attribution::window::json::JsonWindows;
use crate::stalls::gc;
use crate::stalls::lag::LagStats;

/// Windows a recording keeps at most: 1 000 bars of timeline.
pub const MAX_WINDOWS: usize = 1000;
/// Scope entries over all its windows at most (≈ 100 bytes each).
pub const MAX_ENTRIES: usize = 200_000;
/// Stalls a recording keeps, and slow I/O events (as js/capture/capture.js does); later ones are
/// counted in `dropped`.
pub const MAX_EVENTS: usize = 1000;

#[derive(Default)]
pub struct Recording {
    windows: Vec<Arc<Window>>,
    /// Closed windows each kept window stands for (the last may stand for fewer).
    span: u64,
    entries: usize,
    events: Vec<Value>,
    dropped: u64,
    /// Slow I/O events, redacted, as JS gave them: only for a recording with a draft.
    io: Vec<Value>,
    io_dropped: u64,
    /// The capture's report as far as it is known up front, for the addon to finish if the
    /// thread's JS cannot (src/capture/report.rs).
    pub draft: Option<Value>,
}

impl Recording {
    pub fn new(draft: Option<Value>) -> Self {
        Recording { span: 1, draft, ..Default::default() }
    }

    /// Appends a closed window, merging into the last one while it stands for fewer than `span`.
    pub fn push_window(&mut self, w: Arc<Window>) {
        if let Some(last) = self.windows.last_mut().filter(|l| l.merged < self.span) {
            self.entries -= last.scopes.len();
            *last = Arc::new(merge(last, &w));
            self.entries += last.scopes.len();
        } else {
            self.entries += w.scopes.len();
            self.windows.push(w);
        }
        while self.windows.len() >= 2 && (self.windows.len() > MAX_WINDOWS || self.entries > MAX_ENTRIES) {
            self.halve();
        }
    }

    fn halve(&mut self) {
        let old = std::mem::take(&mut self.windows);
        self.windows = old.chunks(2).map(|p| if p.len() == 2 { Arc::new(merge(&p[0], &p[1])) } else { p[0].clone() }).collect();
        self.entries = self.windows.iter().map(|w| w.scopes.len()).sum();
        self.span *= 2;
    }

    /// Appends a stall (a lag event as `Shared::idle_mark` builds it).
    pub fn push_stall(&mut self, event: &Value) {
        if self.events.len() < MAX_EVENTS {
            self.events.push(event.clone());
        } else {
            self.dropped += 1;
        }
    }

    /// Appends a slow I/O event (`Capture.slowIO`'s, redacted already).
    pub fn push_io(&mut self, event: Value) {
        if self.io.len() < MAX_EVENTS {
            self.io.push(event);
        } else {
            self.io_dropped += 1;
        }
    }

    /// `{ events, dropped }` of the slow I/O events pushed.
    pub fn io_json(&self) -> Value {
        json!({ "events": self.io, "dropped": self.io_dropped })
    }

    /// `{ windows, lag: { events, dropped } }`, the windows in the public shape, as JSON
    /// written straight from the windows.
    pub fn to_json_string(&self, time_origin: f64) -> String {
        struct Whole<'a>(&'a Recording, f64);
        impl Serialize for Whole<'_> {
            fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
                let mut m = ser.serialize_map(Some(2))?;
                m.serialize_entry("windows", &JsonWindows(&self.0.windows, self.1))?;
                m.serialize_entry("lag", &json!({ "events": self.0.events, "dropped": self.0.dropped }))?;
                m.end()
            }
        }
        serde_json::to_string(&Whole(self, time_origin)).expect("a recording serializes")
    }
}

/// Window `a` followed by window `b` as one window.
fn merge(a: &Window, b: &Window) -> Window {
    let mut keys = KeyTable::default();
    let in_a: HashSet<usize> = a.scopes.iter().map(|s| s.index).collect();
    let in_b: HashMap<usize, &ScopeWindow> = b.scopes.iter().map(|s| (s.index, s)).collect();
    let mut scopes: Vec<ScopeWindow> = a.scopes.iter().map(|x| merge_scope((a, Some(x)), (b, in_b.get(&x.index).copied()), &mut keys)).collect();
    scopes.extend(b.scopes.iter().filter(|y| !in_a.contains(&y.index)).map(|y| merge_scope((a, None), (b, Some(y)), &mut keys)));
    scopes.sort_by(|x, y| y.busy_ms.total_cmp(&x.busy_ms));
    let unattributed = merge_scope((a, Some(&a.unattributed)), (b, Some(&b.unattributed)), &mut keys);
    keys.shrink();
    Window {
        seq: a.seq,
        start: a.start,
        end: b.end,
        busy_ms: a.busy_ms + b.busy_ms,
        rloop_ms: a.rloop_ms + b.rloop_ms,
        unattributed,
        scopes,
        lag: match (&a.lag, &b.lag) {
            (Some(x), Some(y)) => Some(LagStats {
                stretches: x.stretches + y.stretches,
                stalls: x.stalls + y.stalls,
                p50_ms: x.p50_ms.max(y.p50_ms),
                p99_ms: x.p99_ms.max(y.p99_ms),
                max_ms: x.max_ms.max(y.max_ms),
            }),
            (x, y) => x.clone().or_else(|| y.clone()),
        },
        ran: a.ran.zip(b.ran).map(|(x, y)| x.plus(y)),
        gc: a.gc.as_deref().zip(b.gc.as_deref()).map(|(x, y)| gc::plus(x, y)),
        merged: a.merged + b.merged,
        keys,
    }
}

/// One scope of `a` followed by the same scope of `b` (either may be absent), its keys added
/// to the merged window's table.
fn merge_scope(a: (&Window, Option<&ScopeWindow>), b: (&Window, Option<&ScopeWindow>), keys: &mut KeyTable) -> ScopeWindow {
    let (x, y) = (a.1, b.1);
    let first = x.or(y).expect("a scope of either window");
    let keyed = (x.and_then(|s| a.0.keys_of(s)), y.and_then(|s| b.0.keys_of(s)));
    ScopeWindow {
        index: first.index,
        name: first.name.clone(),
        busy_ms: x.map_or(0.0, |s| s.busy_ms) + y.map_or(0.0, |s| s.busy_ms),
        calls: x.map_or(0.0, |s| s.calls) + y.map_or(0.0, |s| s.calls),
        cpu_ms: cpu_of(a).zip(cpu_of(b)).map(|(p, q)| p + q),
        keys: match keyed {
            (Some(p), Some(q)) => {
                let (stats, worst) = merge_keys(p, q);
                Some(keys.push(stats, worst))
            }
            (Some(k), None) | (None, Some(k)) => Some(keys.push(*k.stats, k.worst())),
            (None, None) => None,
        },
    }
}

/// A scope's CPU time in one of two windows merged: none in a window it was not charged in
/// whose thread CPU time is known.
fn cpu_of((w, s): (&Window, Option<&ScopeWindow>)) -> Option<f64> {
    s.map_or(w.ran.map(|_| 0.0), |s| s.cpu_ms)
}

fn merge_keys<'k>(a: Keys<'k>, b: Keys<'k>) -> (KeyStats, Vec<(&'k str, f64)>) {
    let mut worst: Vec<(&str, f64)> = a.worst().collect();
    let keep = worst.len().max(b.worst().count());
    for (key, busy) in b.worst() {
        match worst.iter_mut().find(|(k, _)| *k == key) {
            Some(w) => w.1 += busy, // one key charged in both windows
            None => worst.push((key, busy)),
        }
    }
    worst.sort_by(|x, y| y.1.total_cmp(&x.1));
    worst.truncate(keep);
    let (a, b) = (a.stats, b.stats);
    let stats = KeyStats {
        count: a.count + b.count,
        dropped: a.dropped + b.dropped,
        p50_ms: a.p50_ms.max(b.p50_ms),
        p99_ms: a.p99_ms.max(b.p99_ms),
        max_ms: a.max_ms.max(b.max_ms),
    };
    (stats, worst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::aggregator::{Aggregator, Config, FIRST_SCOPE};
    use crate::attribution::ledger::test_support::Memory;

    #[test]
    fn a_long_recording_is_a_downsampled_timeline_of_its_whole_span() {
        let c = Config { window_ms: 10.0, history: 2, max_scopes: 2, key_slots: 2, max_keys: 4, worst_keys: 1, time_origin: 0.0 };
        let m = Memory::new(c.slots());
        let l = m.ledger();
        let mut a = Aggregator::new(c.clone(), 0.0);
        let x = a.add_scope("x");
        let k = FIRST_SCOPE + c.max_scopes;
        let mut r = Recording::new(None);
        let n = 8_000u64; // 80 s of 10 ms windows: merged three times over
        for i in 0..n {
            let t = i as f64 * 10.0;
            a.bind_key(&l, k + (i as usize % 2), x, format!("key-{i}").into()).unwrap();
            m.switch_to(k + (i as usize % 2), t);
            m.call(k + (i as usize % 2));
            let spent = if i == 1_234 { 9.0 } else { 1.0 };
            m.switch_to(0, t + spent);
            l.close_running(t + spent);
            r.push_window(a.close(&l, t + 10.0, None));
        }
        let v: Value = serde_json::from_str(&r.to_json_string(0.0)).unwrap();
        let windows = v["windows"].as_array().unwrap();
        assert!(windows.len() <= MAX_WINDOWS && windows.len() > MAX_WINDOWS / 2, "{}", windows.len());
        assert_eq!(windows[0]["start"], 0.0);
        assert_eq!(windows.last().unwrap()["end"], n as f64 * 10.0, "covers the whole span");
        let merged: u64 = windows.iter().map(|w| w["merged"].as_u64().unwrap_or(1)).sum();
        assert_eq!(merged, n, "every closed window is in exactly one kept window");
        let busy: f64 = windows.iter().map(|w| w["scopes"][0]["busyMs"].as_f64().unwrap()).sum();
        assert!((busy - (n as f64 + 8.0)).abs() < 1e-6, "busy time is summed: {busy}");
        let calls: f64 = windows.iter().map(|w| w["scopes"][0]["calls"].as_f64().unwrap()).sum();
        assert_eq!(calls, n as f64);
        let keys = windows.iter().map(|w| &w["scopes"][0]["keys"]).find(|k| k["maxMs"] == 9.0).expect("the slow key's window");
        assert_eq!(keys["worst"][0]["key"], "key-1234", "the worst key survives merging: {keys}");
        let count: u64 = windows.iter().map(|w| w["scopes"][0]["keys"]["count"].as_u64().unwrap()).sum();
        assert_eq!(count, n);
    }

    #[test]
    fn merged_a_scopes_cpu_time_is_summed_and_none_where_it_was_not_charged_but_known() {
        use crate::runtime::cpu::Ran;
        let scope = |index, busy_ms, cpu_ms| ScopeWindow { index, name: Arc::from(format!("s{index}")), busy_ms, calls: 1.0, keys: None, cpu_ms };
        let window = |scopes: Vec<ScopeWindow>, known: bool| Window {
            seq: 1,
            start: 0.0,
            end: 10.0,
            busy_ms: 0.0,
            rloop_ms: 0.0,
            unattributed: scope(0, 1.0, known.then_some(1.0)),
            scopes,
            lag: None,
            ran: known.then_some(Ran { cpu_ms: 9.0, throttled_ms: None }),
            gc: None,
            merged: 1,
            keys: KeyTable::default(),
        };
        let (a, b) = (window(vec![scope(2, 6.0, Some(3.0))], true), window(vec![scope(3, 4.0, Some(2.0))], true));
        let m = merge(&a, &b);
        let cpu: Vec<_> = std::iter::once(&m.unattributed).chain(&m.scopes).map(|s| (s.index, s.cpu_ms)).collect();
        assert_eq!(cpu, [(0, Some(2.0)), (2, Some(3.0)), (3, Some(2.0))]);
        let m = merge(&a, &window(vec![], false));
        assert_eq!((m.unattributed.cpu_ms, m.scopes[0].cpu_ms), (None, None), "one half unknown: unknown");
    }

    #[test]
    fn stalls_past_the_cap_are_counted() {
        let mut r = Recording::new(None);
        for i in 0..MAX_EVENTS + 5 {
            r.push_stall(&json!({ "lagMs": i }));
        }
        let v: Value = serde_json::from_str(&r.to_json_string(0.0)).unwrap();
        assert_eq!(v["lag"]["events"].as_array().unwrap().len(), MAX_EVENTS);
        assert_eq!(v["lag"]["dropped"], 5);
    }
}
