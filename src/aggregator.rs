//! The aggregator: turns the ledger's cumulative per-slot counters into windows.
//!
//! Slots are the ledger's unit of charge. Slot 0 is unattributed time, slot 1 is `(other)`
//! (scopes past the cap), then one slot per scope, then a ring of key slots: a key slot is
//! bound to one (scope, key) at a time and rebound when the ring comes round, its time so far
//! retired into the current window first. A window is the difference of cumulative readings
//! at its two ends, so a window closed while a callback still runs includes that callback's
//! time so far, and nothing is counted twice.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::keys::{self, KeyStats, Unnamed};
use crate::lag::LagStats;
use crate::ledger::{Ledger, Reading};

pub const UNATTRIBUTED: usize = 0;
pub const OTHER: usize = 1;
const FIRST_SCOPE: usize = 2;

/// Validated settings of one monitor.
#[derive(Clone, Debug)]
pub struct Config {
    pub window_ms: f64,
    pub history: usize,
    pub max_scopes: usize,
    pub key_slots: usize,
    /// Distinct keys recorded per window; more are counted in `dropped`.
    pub max_keys: usize,
    /// Worst keys listed per scope and window.
    pub worst_keys: usize,
    /// `performance.timeOrigin` of the monitored thread, to turn its clock into epoch ms.
    pub time_origin: f64,
}

impl Config {
    pub fn slots(&self) -> usize {
        FIRST_SCOPE + self.max_scopes + self.key_slots
    }
    fn key_base(&self) -> usize {
        FIRST_SCOPE + self.max_scopes
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ScopeWindow {
    /// Scope index (= its slot); not part of the public output.
    pub index: usize,
    pub name: String,
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

struct KeyOwner {
    scope: usize,
    key: String,
}

/// Time of keys whose slot was rebound during the current window.
#[derive(Default)]
struct Retired {
    /// By scope index; grows to the highest scope retired into.
    per_scope: Vec<Reading>,
    /// At most `max_keys` names; later keys go to `unnamed`.
    keys: Vec<(usize, String, f64)>,
    unnamed: HashMap<usize, Unnamed>,
}

pub struct Aggregator {
    cfg: Config,
    names: Vec<String>,
    scopes_overflowed: u64,
    key_owner: Vec<Option<KeyOwner>>,
    key_high_water: usize,
    base: Vec<Reading>,
    retired: Retired,
    window_start: f64,
    /// When the current window is due: on a fixed schedule, however late the last close came.
    due: f64,
    seq: u64,
    totals: Vec<Reading>,
    history: VecDeque<Arc<Window>>,
}

impl Aggregator {
    pub fn new(cfg: Config, now: f64) -> Self {
        let slots = cfg.slots();
        Aggregator {
            names: vec!["(unattributed)".into(), "(other)".into()],
            scopes_overflowed: 0,
            key_owner: (0..cfg.key_slots).map(|_| None).collect(),
            key_high_water: 0,
            base: vec![Reading::default(); slots],
            retired: Retired::default(),
            window_start: now,
            due: now + cfg.window_ms,
            seq: 0,
            totals: vec![Reading::default(); FIRST_SCOPE],
            history: VecDeque::with_capacity(cfg.history),
            cfg,
        }
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Registers a scope name; returns its slot, or `OTHER` once `max_scopes` are taken.
    pub fn add_scope(&mut self, name: &str) -> usize {
        if self.names.len() >= FIRST_SCOPE + self.cfg.max_scopes {
            self.scopes_overflowed += 1;
            return OTHER;
        }
        self.names.push(name.to_owned());
        self.totals.push(Reading::default());
        self.names.len() - 1
    }

    pub fn scopes_overflowed(&self) -> u64 {
        self.scopes_overflowed
    }

    /// Binds key slot `slot` to (`scope`, `key`), retiring what its previous key was charged
    /// in this window. Called by the monitored thread (the ledger's one writer) while that slot
    /// is not running: its reading is then complete without a clock read.
    pub fn bind_key(&mut self, ledger: &Ledger, slot: usize, scope: usize, key: String) -> Result<(), String> {
        let j = slot
            .checked_sub(self.cfg.key_base())
            .filter(|&j| j < self.cfg.key_slots)
            .ok_or_else(|| format!("slot {slot} is not a key slot"))?;
        if scope >= self.names.len() {
            return Err(format!("scope {scope} is not registered"));
        }
        if ledger.running().is_some_and(|(s, _)| s == slot) {
            return Err(format!("slot {slot} is being charged"));
        }
        let reading = ledger.read(slot, None, 0.0);
        if let Some(old) = self.key_owner[j].take() {
            let d = delta(reading, self.base[slot]);
            let per_scope = &mut self.retired.per_scope;
            if per_scope.len() <= old.scope {
                per_scope.resize(old.scope + 1, Reading::default());
            }
            add(&mut per_scope[old.scope], d);
            if d.busy_ms > 0.0 {
                if self.retired.keys.len() < self.cfg.max_keys {
                    self.retired.keys.push((old.scope, old.key, d.busy_ms));
                } else {
                    self.retired.unnamed.entry(old.scope).or_default().record(d.busy_ms);
                }
            }
        }
        self.base[slot] = reading;
        self.key_owner[j] = Some(KeyOwner { scope, key });
        self.key_high_water = self.key_high_water.max(j + 1);
        Ok(())
    }

    /// The window from the last close until `now`, read without closing it.
    pub fn measure(&self, ledger: &Ledger, now: f64) -> Window {
        self.scan(ledger, now).0
    }

    /// Closes the current window at `now`, keeps it in the history and returns it.
    pub fn close(&mut self, ledger: &Ledger, now: f64, lag: Option<LagStats>) -> Arc<Window> {
        let (mut window, readings) = self.scan(ledger, now);
        window.lag = lag;
        for (slot, r) in readings {
            self.base[slot] = r;
        }
        self.retired = Retired::default();
        self.window_start = now;
        // The next window is due one length after this one was (a late close makes this
        // window longer and the next shorter, not every window longer); a close later than
        // a whole window, or an early one, starts the schedule again from now.
        let next = self.due + self.cfg.window_ms;
        self.due = if now >= self.due && next > now { next } else { now + self.cfg.window_ms };
        self.seq += 1;
        for s in std::iter::once(&window.unattributed).chain(&window.scopes) {
            add(&mut self.totals[s.index], Reading { busy_ms: s.busy_ms, calls: s.calls });
        }
        let window = Arc::new(window);
        if self.history.len() == self.cfg.history {
            self.history.pop_front();
        }
        self.history.push_back(window.clone());
        window
    }

    /// The scope a slot is charged to now.
    pub fn scope_of(&self, slot: usize) -> usize {
        match slot.checked_sub(self.cfg.key_base()).and_then(|j| self.key_owner.get(j)) {
            Some(owner) => owner.as_ref().map_or(UNATTRIBUTED, |o| o.scope),
            None if slot < self.names.len() => slot,
            None => UNATTRIBUTED,
        }
    }

    /// The scope name and key a slot is charged to now.
    pub fn describe_slot(&self, slot: usize) -> (&str, Option<&str>) {
        let key = slot.checked_sub(self.cfg.key_base()).and_then(|j| self.key_owner.get(j)?.as_ref()).map(|o| o.key.as_str());
        (&self.names[self.scope_of(slot)], key)
    }

    /// When the current window is due to close.
    pub fn due(&self) -> f64 {
        self.due
    }

    pub fn last(&self) -> Option<Arc<Window>> {
        self.history.back().cloned()
    }

    pub fn history(&self) -> impl Iterator<Item = &Arc<Window>> {
        self.history.iter()
    }

    /// Busy time and calls per scope index since start, the current window included.
    pub fn totals(&self, ledger: &Ledger, now: f64) -> Vec<(&str, Reading)> {
        let current = self.measure(ledger, now);
        let mut sums = self.totals.clone();
        for s in std::iter::once(&current.unattributed).chain(&current.scopes) {
            add(&mut sums[s.index], Reading { busy_ms: s.busy_ms, calls: s.calls });
        }
        self.names.iter().map(String::as_str).zip(sums).collect()
    }

    fn scan(&self, ledger: &Ledger, now: f64) -> (Window, Vec<(usize, Reading)>) {
        let running = ledger.running();
        let key_base = self.cfg.key_base();
        let slots = (0..self.names.len()).chain(key_base..key_base + self.key_high_water);
        let readings: Vec<(usize, Reading)> = slots.map(|s| (s, ledger.read(s, running, now))).collect();

        let mut per_scope = vec![Reading::default(); self.names.len()];
        for (scope, r) in self.retired.per_scope.iter().enumerate() {
            add(&mut per_scope[scope], *r);
        }
        let mut named: Vec<(usize, &str, f64)> = self.retired.keys.iter().map(|(s, k, b)| (*s, k.as_str(), *b)).collect();
        for &(slot, reading) in &readings {
            let d = delta(reading, self.base[slot]);
            if slot < key_base {
                add(&mut per_scope[slot], d);
            } else if let Some(owner) = &self.key_owner[slot - key_base] {
                add(&mut per_scope[owner.scope], d);
                if d.busy_ms > 0.0 {
                    named.push((owner.scope, &owner.key, d.busy_ms));
                }
            }
        }

        let mut key_stats = keys::summarize(named, &self.retired.unnamed, self.cfg.max_keys, self.cfg.worst_keys);
        let mut scope_window = |index: usize| ScopeWindow {
            index,
            name: self.names[index].clone(),
            busy_ms: per_scope[index].busy_ms,
            calls: per_scope[index].calls,
            keys: key_stats.remove(&index).map(Box::new),
        };
        let unattributed = scope_window(UNATTRIBUTED);
        let mut scopes: Vec<ScopeWindow> = (OTHER..self.names.len())
            .filter(|&i| per_scope[i].busy_ms > 0.0 || per_scope[i].calls > 0.0)
            .map(scope_window)
            .collect();
        scopes.sort_by(|a, b| b.busy_ms.total_cmp(&a.busy_ms));
        let window = Window {
            seq: self.seq + 1,
            start: self.window_start,
            end: now,
            busy_ms: per_scope.iter().map(|r| r.busy_ms).sum(),
            unattributed,
            scopes,
            lag: None,
            merged: 1,
        };
        (window, readings)
    }
}

fn add(to: &mut Reading, d: Reading) {
    to.busy_ms += d.busy_ms;
    to.calls += d.calls;
}

/// What a slot was charged since `base`; never negative (a reader racing a switch may see a
/// reading a hair early, and a window must not give time back).
fn delta(now: Reading, base: Reading) -> Reading {
    Reading { busy_ms: (now.busy_ms - base.busy_ms).max(0.0), calls: (now.calls - base.calls).max(0.0) }
}

impl Window {
    /// The public shape (`index.d.ts`: `Window`), times as epoch milliseconds.
    pub fn to_json(&self, time_origin: f64) -> Value {
        let duration = self.end - self.start;
        let elu = |busy: f64| if duration > 0.0 { (busy / duration).clamp(0.0, 1.0) } else { 0.0 };
        let scope = |s: &ScopeWindow| {
            let mut v = json!({ "name": s.name, "elu": elu(s.busy_ms), "busyMs": s.busy_ms, "calls": s.calls });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::test_support::Memory;

    fn cfg() -> Config {
        Config { window_ms: 1000.0, history: 3, max_scopes: 2, key_slots: 2, max_keys: 2, worst_keys: 1, time_origin: 0.0 }
    }

    fn scope<'a>(w: &'a Window, name: &str) -> &'a ScopeWindow {
        w.scopes.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no scope {name} in {w:?}"))
    }

    #[test]
    fn window_sums_scopes_and_unattributed_and_includes_running_time() {
        let m = Memory::new(cfg().slots());
        let l = m.ledger();
        let mut a = Aggregator::new(cfg(), 0.0);
        let x = a.add_scope("x");
        m.switch_to(UNATTRIBUTED, 0.0);
        m.switch_to(x, 100.0);
        m.call(x);
        // x still running at 400: a live read charges it 300 ms so far.
        let w = a.measure(&l, 400.0);
        assert_eq!(w.unattributed.busy_ms, 100.0);
        assert_eq!(scope(&w, "x").busy_ms, 300.0);
        assert_eq!(scope(&w, "x").calls, 1.0);
        assert_eq!(w.busy_ms, 400.0);

        let closed = a.close(&l, 500.0, None);
        assert_eq!(scope(&closed, "x").busy_ms, 400.0);
        l.close_running(700.0);
        let next = a.measure(&l, 1000.0);
        assert_eq!(scope(&next, "x").busy_ms, 200.0, "the next window starts where the last ended");
        assert_eq!(next.busy_ms, 200.0);
        let totals = a.totals(&l, 1000.0);
        assert_eq!(totals.iter().find(|t| t.0 == "x").unwrap().1.busy_ms, 600.0);
    }

    #[test]
    fn scopes_past_the_cap_go_to_other_and_are_counted() {
        let mut a = Aggregator::new(cfg(), 0.0);
        assert_eq!(a.add_scope("a"), 2);
        assert_eq!(a.add_scope("b"), 3);
        assert_eq!(a.add_scope("c"), OTHER);
        assert_eq!(a.scopes_overflowed(), 1);
    }

    #[test]
    fn keys_get_percentiles_worst_and_survive_rebinding() {
        let c = cfg();
        let m = Memory::new(c.slots());
        let l = m.ledger();
        let mut a = Aggregator::new(c.clone(), 0.0);
        let s = a.add_scope("route");
        let k0 = 2 + c.max_scopes;
        a.bind_key(&l, k0, s, "req-1".into()).unwrap();
        m.switch_to(k0, 0.0);
        m.switch_to(UNATTRIBUTED, 10.0);
        a.bind_key(&l, k0 + 1, s, "req-2".into()).unwrap();
        m.switch_to(k0 + 1, 10.0);
        m.switch_to(UNATTRIBUTED, 40.0);
        // The ring comes round: req-1's 10 ms are retired into this window, req-3 starts at zero.
        a.bind_key(&l, k0, s, "req-3".into()).unwrap();
        m.switch_to(k0, 40.0);
        l.close_running(45.0);
        let w = a.close(&l, 50.0, None);
        let route = scope(&w, "route");
        assert_eq!(route.busy_ms, 45.0);
        let keys = route.keys.as_ref().unwrap();
        assert_eq!(keys.count, 3, "req-1 (retired, 10 ms), req-2 (30 ms), req-3 (5 ms)");
        assert_eq!(keys.dropped, 1, "max_keys = 2: the least busy key loses its name");
        assert_eq!(keys.worst, vec![("req-2".to_string(), 30.0)]);
        assert_eq!(keys.max_ms, 30.0);
        assert!((keys.p50_ms - 10.0).abs() < 0.1, "{keys:?}");
        assert!((keys.p99_ms - 30.0).abs() < 0.3, "{keys:?}");
        assert!(a.bind_key(&l, 1, s, "x".into()).is_err(), "slot 1 is not a key slot");
        m.switch_to(k0, 50.0);
        let err = a.bind_key(&l, k0, s, "req-4".into()).unwrap_err();
        assert_eq!(err, format!("slot {k0} is being charged"), "its running interval would go to the new key");
    }

    #[test]
    fn history_keeps_the_last_n_windows() {
        let m = Memory::new(cfg().slots());
        let l = m.ledger();
        let mut a = Aggregator::new(cfg(), 0.0);
        for i in 1..=5 {
            a.close(&l, i as f64 * 1000.0, None);
        }
        let seqs: Vec<u64> = a.history().map(|w| w.seq).collect();
        assert_eq!(seqs, vec![3, 4, 5]);
        assert_eq!(a.due(), 6000.0);
    }

    #[test]
    fn windows_keep_to_a_fixed_schedule_when_closed_late() {
        let c = Config { window_ms: 10.0, ..cfg() };
        let m = Memory::new(c.slots());
        let l = m.ledger();
        let mut a = Aggregator::new(c, 0.0);
        let mut ends = Vec::new();
        for i in 0..100 {
            let late = [0.3, 1.2, 0.05, 1.9][i % 4]; // the watch thread wakes a little late
            let now = a.due() + late;
            ends.push(a.close(&l, now, None).end);
        }
        assert_eq!(a.due(), 1010.0, "due times stay on the 10 ms grid");
        let mean = ends.last().unwrap() / ends.len() as f64;
        assert!((mean - 10.0).abs() < 0.03, "mean window {mean} ms");
        a.close(&l, a.due() + 25.0, None); // more than a window late: the schedule restarts
        assert_eq!(a.due(), 1045.0);
    }

    #[test]
    fn json_has_elu_and_epoch_times() {
        let m = Memory::new(cfg().slots());
        let l = m.ledger();
        let mut a = Aggregator::new(cfg(), 0.0);
        let x = a.add_scope("x");
        m.switch_to(x, 0.0);
        let v = a.close(&l, 250.0, None).to_json(1_000_000.0);
        assert_eq!(v["start"], 1_000_000.0);
        assert_eq!(v["durationMs"], 250.0);
        assert_eq!(v["thread"]["elu"], 1.0);
        assert_eq!(v["scopes"][0]["name"], "x");
        assert_eq!(v["unattributed"]["busyMs"], 0.0);
    }
}
