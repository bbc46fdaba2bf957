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

#[cfg(test)]
use crate::stalls::lag::LagStats;
use super::keys::Unnamed;
use super::ledger::{Ledger, Reading};
use super::names::Names;
use super::slots::{Active, PerSlot};
pub use super::window::{Pending, ScopeWindow, Window};

pub const UNATTRIBUTED: usize = 0;
pub const OTHER: usize = 1;
const FIRST_SCOPE: usize = 2;
/// Heap bytes the history keeps at most (see `Window::heap_bytes`): with many scopes charged
/// in every window it keeps fewer than `history` windows, the oldest going first, and counts
/// them in `history_dropped`; a window over the bound on its own stays until the next one
/// closes. 10 000 keyed scopes a window take ≈ 2.5 MB.
pub const HISTORY_BYTES: usize = 4 << 20;

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

struct KeyOwner {
    scope: usize,
    /// Shared with the windows being built from it, which may be built outside the lock.
    key: Arc<str>,
}

/// Time of keys whose slot was rebound during the current window.
#[derive(Clone, Default)]
struct Retired {
    /// By scope index; grows to the highest scope retired into.
    per_scope: Vec<Reading>,
    /// At most `max_keys` names; later keys go to `unnamed`.
    keys: Vec<(usize, Arc<str>, f64)>,
    unnamed: HashMap<usize, Unnamed>,
}

pub struct Aggregator {
    cfg: Config,
    names: Names,
    /// Slot by name, built as the names reach `max_scopes`: JS then asks for every name.
    index: Option<HashMap<Arc<str>, usize>>,
    scopes_overflowed: u64,
    /// By key slot − key base, grown as the ring first reaches a slot.
    key_owner: Vec<Option<KeyOwner>>,
    /// Readings at the start of the current window, of the slots in use.
    base: PerSlot<Reading>,
    active: Active,
    retired: Retired,
    window_start: f64,
    /// When the current window is due: on a fixed schedule, however late the last close came.
    due: f64,
    /// A close is begun and its window not yet kept (it is built outside the lock).
    closing: bool,
    seq: u64,
    totals: Vec<Reading>,
    history: VecDeque<Arc<Window>>,
    /// Heap bytes of the windows in `history`.
    history_bytes: usize,
    /// Windows pushed out of the history before `history` newer ones were kept (the budget).
    history_dropped: u64,
}

impl Aggregator {
    pub fn new(cfg: Config, now: f64) -> Self {
        Aggregator {
            names: Names::new(&["(unattributed)", "(other)"]),
            index: None,
            scopes_overflowed: 0,
            key_owner: Vec::new(),
            base: PerSlot::new(cfg.key_base()),
            active: Active::new(cfg.key_base(), &[UNATTRIBUTED, OTHER], super::slots::sweep_for(cfg.window_ms)),
            retired: Retired::default(),
            window_start: now,
            due: now + cfg.window_ms,
            closing: false,
            seq: 0,
            totals: vec![Reading::default(); FIRST_SCOPE],
            history: VecDeque::new(),
            history_bytes: 0,
            history_dropped: 0,
            cfg,
        }
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Registers a scope name; returns its slot. Once `max_scopes` are taken, returns the slot of
    /// a name registered before, or `OTHER` for a new one, counted (js/monitor.js asks for every
    /// name from then on, and only for new ones before).
    pub fn add_scope(&mut self, name: &str) -> usize {
        if self.scopes() < FIRST_SCOPE + self.cfg.max_scopes {
            let slot = self.names.push(name);
            self.totals.push(Reading::default());
            self.active.touch(slot, self.seq + 1);
            return slot;
        }
        let names = &self.names;
        let index = self.index.get_or_insert_with(|| names.all().into_iter().enumerate().skip(FIRST_SCOPE).map(|(slot, n)| (n, slot)).collect());
        index.get(name).copied().unwrap_or_else(|| {
            self.scopes_overflowed += 1;
            OTHER
        })
    }

    /// Scopes registered, unattributed and `(other)` included: one total each. Counted without
    /// the name table, which the watch thread reads outside the lock.
    fn scopes(&self) -> usize {
        self.totals.len()
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
        if scope >= self.scopes() {
            return Err(format!("scope {scope} is not registered"));
        }
        if ledger.running().is_some_and(|(s, _)| s == slot) {
            return Err(format!("slot {slot} is being charged"));
        }
        let reading = ledger.read(slot, None, 0.0);
        if self.key_owner.len() <= j {
            self.key_owner.resize_with(j + 1, || None);
        }
        if let Some(old) = self.key_owner[j].take() {
            let d = delta(reading, self.base.get(slot));
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
        self.base.set(slot, reading);
        self.key_owner[j] = Some(KeyOwner { scope, key: Arc::from(key) });
        self.active.touch(slot, self.seq + 1);
        Ok(())
    }

    /// The window from the last close until `now`, read without closing it.
    pub fn measure(&self, ledger: &Ledger, now: f64) -> Window {
        self.scan(ledger, now, self.retired.clone()).0.finish(None)
    }

    /// Closes the current window at `now`, keeps it in the history and returns it (what the
    /// watch thread does in three steps, see `close_begin`).
    #[cfg(test)]
    pub fn close(&mut self, ledger: &Ledger, now: f64, lag: Option<LagStats>) -> Arc<Window> {
        let pending = self.close_begin(ledger, now);
        self.close_end(pending.finish(lag)).0
    }

    /// The part of a close that needs the ledger and the aggregator: the next window starts at
    /// `now`. The window itself is built by `Pending::finish`, which needs neither (so the
    /// watch thread runs it without the lock key binding and the idle mark wait on), and kept
    /// by `close_end`.
    pub fn close_begin(&mut self, ledger: &Ledger, now: f64) -> Pending {
        let retired = std::mem::take(&mut self.retired);
        let (pending, readings) = self.scan(ledger, now, retired);
        let now = pending.end; // later than asked when a switch came after it (Ledger::snapshot)
        let mut charged = Vec::new();
        for (slot, r) in readings {
            if r != self.base.get(slot) {
                charged.push(slot);
            }
            self.base.set(slot, r);
        }
        for &(scope, r) in &pending.charges {
            add(&mut self.totals[scope], r);
        }
        self.active.closed(charged.into_iter(), self.seq + 1, self.scopes() + self.key_owner.len());
        self.window_start = now;
        // The next window is due one length after this one was (a late close makes this
        // window longer and the next shorter, not every window longer); a close later than
        // a whole window, or an early one, starts the schedule again from now.
        let next = self.due + self.cfg.window_ms;
        self.due = if now >= self.due && next > now { next } else { now + self.cfg.window_ms };
        self.seq += 1;
        ledger.open_window(self.seq + 1);
        self.closing = true;
        pending
    }

    /// Keeps a window `close_begin` began in the history; returns it, and the windows it
    /// pushed out (to be dropped outside the lock): beyond `history` windows, or beyond
    /// `HISTORY_BYTES` (the newest window always stays).
    pub fn close_end(&mut self, window: Window) -> (Arc<Window>, Vec<Arc<Window>>) {
        self.closing = false;
        self.history_bytes += window.heap_bytes();
        let window = Arc::new(window);
        self.history.push_back(window.clone());
        let mut evicted = Vec::new();
        while self.history.len() > self.cfg.history || (self.history_bytes > HISTORY_BYTES && self.history.len() > 1) {
            let old = self.history.pop_front().expect("more than one window");
            if self.history.len() < self.cfg.history {
                self.history_dropped += 1; // the budget's doing, not the count's
            }
            self.history_bytes -= old.heap_bytes();
            evicted.push(old);
        }
        (window, evicted)
    }

    /// Windows the history dropped to stay within `HISTORY_BYTES`.
    pub fn history_dropped(&self) -> u64 {
        self.history_dropped
    }

    /// The scope a slot is charged to now.
    pub fn scope_of(&self, slot: usize) -> usize {
        match slot.checked_sub(self.cfg.key_base()).and_then(|j| self.key_owner.get(j)) {
            Some(owner) => owner.as_ref().map_or(UNATTRIBUTED, |o| o.scope),
            None if slot < self.scopes() => slot,
            None => UNATTRIBUTED,
        }
    }

    /// The scope name and key a slot is charged to now.
    pub fn describe_slot(&self, slot: usize) -> (Arc<str>, Option<&str>) {
        let key = slot.checked_sub(self.cfg.key_base()).and_then(|j| self.key_owner.get(j)?.as_ref()).map(|o| &*o.key);
        (self.names.get(self.scope_of(slot)), key)
    }

    /// When the current window is due to close.
    pub fn due(&self) -> f64 {
        self.due
    }

    /// When the next window will be in the history: now, while one is being built (a reader
    /// that waited for `due()` would otherwise wait a whole window more and get two at once).
    pub fn next_kept(&self) -> f64 {
        if self.closing {
            self.window_start
        } else {
            self.due
        }
    }

    pub fn last(&self) -> Option<Arc<Window>> {
        self.history.back().cloned()
    }

    pub fn history(&self) -> impl Iterator<Item = &Arc<Window>> {
        self.history.iter()
    }

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

    /// Reads the slots that can have changed; `retired`: what rebound keys left this window.
    fn scan(&self, ledger: &Ledger, now: f64, retired: Retired) -> (Pending, Vec<(usize, Reading)>) {
        let key_base = self.cfg.key_base();
        let (now, readings) = ledger.snapshot(now, |running| self.active.to_read(self.scopes(), self.key_owner.len(), running));

        // Only the slots charged, by scope index; summed per scope and named by `Pending::finish`,
        // outside the lock: the slots charged, not maxScopes, set the cost under it.
        let charged = |r: &Reading| r.busy_ms > 0.0 || r.calls > 0.0;
        let mut charges: Vec<(usize, Reading)> = retired.per_scope.iter().copied().enumerate().filter(|(_, r)| charged(r)).collect();
        let mut named = retired.keys;
        for &(slot, reading) in &readings {
            let d = delta(reading, self.base.get(slot));
            if !charged(&d) {
                continue;
            }
            if slot < key_base {
                charges.push((slot, d));
            } else if let Some(Some(owner)) = self.key_owner.get(slot - key_base) {
                charges.push((owner.scope, d));
                if d.busy_ms > 0.0 {
                    named.push((owner.scope, owner.key.clone(), d.busy_ms));
                }
            }
        }
        let pending = Pending {
            seq: self.seq + 1,
            start: self.window_start,
            end: now,
            charges,
            names: self.names.clone(),
            named,
            unnamed: retired.unnamed,
            max_keys: self.cfg.max_keys,
            worst_keys: self.cfg.worst_keys,
            read_bytes: readings.capacity() * (std::mem::size_of::<(usize, Reading)>() + std::mem::size_of::<usize>()),
        };
        (pending, readings)
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

pub(crate) fn add(to: &mut Reading, d: Reading) {
    to.busy_ms += d.busy_ms;
    to.calls += d.calls;
}

/// What a slot was charged since `base`; never negative (a reader racing a switch may see a
/// reading a hair early, and a window must not give time back).
fn delta(now: Reading, base: Reading) -> Reading {
    Reading { busy_ms: (now.busy_ms - base.busy_ms).max(0.0), calls: (now.calls - base.calls).max(0.0) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::ledger::test_support::Memory;

    fn cfg() -> Config {
        Config { window_ms: 1000.0, history: 3, max_scopes: 2, key_slots: 2, max_keys: 2, worst_keys: 1, time_origin: 0.0 }
    }

    fn scope<'a>(w: &'a Window, name: &str) -> &'a ScopeWindow {
        w.scopes.iter().find(|s| &*s.name == name).unwrap_or_else(|| panic!("no scope {name} in {w:?}"))
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
        assert_eq!(totals.iter().find(|t| &*t.0 == "x").unwrap().1.busy_ms, 600.0);
    }

    #[test]
    fn binding_and_a_close_under_the_lock_wait_on_no_name() {
        // The watch thread names a window's scopes outside the monitor's lock, reading the name
        // table a chunk at a time; what runs under the lock must not wait on that table.
        let c = cfg();
        let m = Memory::new(c.slots());
        let l = m.ledger();
        let mut a = Aggregator::new(c.clone(), 0.0);
        let x = a.add_scope("x");
        let names = a.names.clone();
        m.switch_to(x, 0.0);
        m.call(x);
        m.switch_to(UNATTRIBUTED, 10.0);
        let (done, got) = std::sync::mpsc::channel();
        let pending = std::thread::scope(|s| {
            let held = names.hold();
            s.spawn(|| {
                a.bind_key(&l, 2 + c.max_scopes, x, "k".into()).unwrap();
                let _ = done.send(a.close_begin(&l, 20.0));
            });
            let pending = got.recv_timeout(std::time::Duration::from_secs(20));
            drop(held);
            pending.expect("close_begin waited on the name table")
        });
        assert_eq!(scope(&pending.finish(None), "x").busy_ms, 10.0);
    }

    #[test]
    fn scopes_past_the_cap_go_to_other_and_are_counted() {
        let mut a = Aggregator::new(cfg(), 0.0);
        assert_eq!(a.add_scope("a"), 2);
        assert_eq!(a.add_scope("b"), 3);
        assert_eq!(a.add_scope("c"), OTHER);
        assert_eq!(a.add_scope("b"), 3, "a name registered before keeps its slot once full");
        assert_eq!(a.add_scope("(other)"), OTHER, "past the cap, a name is no built-in slot's");
        assert_eq!(a.add_scope("c"), OTHER);
        assert_eq!(a.scopes_overflowed(), 3, "each entry past the cap counts");
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
        let named = w.keys_of(route).unwrap();
        let keys = named.stats;
        assert_eq!(keys.count, 3, "req-1 (retired, 10 ms), req-2 (30 ms), req-3 (5 ms)");
        assert_eq!(keys.dropped, 1, "max_keys = 2: the least busy key loses its name");
        assert_eq!(named.worst().collect::<Vec<_>>(), vec![("req-2", 30.0)]);
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
        assert_eq!(m.get(crate::attribution::ledger::WINDOW), 6.0, "JS reads the window open now");
    }

    #[test]
    fn the_history_stays_within_its_bytes_dropping_the_oldest_and_counting_them() {
        let c = Config { history: 1000, max_scopes: 20_000, ..cfg() };
        let m = Memory::new(c.slots());
        let l = m.ledger();
        let mut a = Aggregator::new(c, 0.0);
        let scopes: Vec<usize> = (0..20_000).map(|i| a.add_scope(&format!("s{i}"))).collect();
        let mut t = 0.0;
        let mut widest = 0;
        for seq in 1..=40u64 {
            for &s in &scopes {
                m.call(s); // every scope charged in every window
            }
            t += 1000.0;
            let w = a.close(&l, t, None);
            widest = widest.max(w.heap_bytes());
            let kept: usize = a.history().map(|w| w.heap_bytes()).sum();
            assert!(kept <= HISTORY_BYTES, "{kept} bytes kept");
            assert_eq!(a.history().last().unwrap().seq, seq, "the newest window stays");
            assert_eq!(a.history().count() as u64 + a.history_dropped(), seq, "every window kept or counted");
        }
        assert!(widest > 20_000 * std::mem::size_of::<ScopeWindow>(), "{widest} bytes for 20 000 scopes");
        assert!(a.history_dropped() > 0 && a.history().count() > 1);
        let seqs: Vec<u64> = a.history().map(|w| w.seq).collect();
        assert!(seqs.windows(2).all(|p| p[1] == p[0] + 1), "the newest windows, in order: {seqs:?}");
    }

    #[test]
    fn with_more_slots_in_use_than_a_sweep_late_work_of_a_quiet_key_is_found_not_lost() {
        let c = Config { window_ms: 10.0, key_slots: crate::attribution::slots::sweep_for(10.0) + 10, max_keys: 10, ..cfg() };
        let m = Memory::new(c.slots());
        let l = m.ledger();
        let mut a = Aggregator::new(c.clone(), 0.0);
        let s = a.add_scope("s");
        let k0 = 2 + c.max_scopes;
        for j in 0..c.key_slots {
            a.bind_key(&l, k0 + j, s, format!("k{j}")).unwrap();
        }
        let mut t = 0.0;
        for _ in 0..=crate::attribution::slots::GRACE {
            t += 10.0;
            a.close(&l, t, None); // every key slot quiet: they leave the active list
        }
        m.switch_to(k0 + 7, t + 1.0); // late work of key 7, unlisted by now
        m.switch_to(UNATTRIBUTED, t + 6.0);
        let mut found = 0.0;
        for _ in 0..2 {
            t += 10.0;
            found += a.close(&l, t, None).scopes.iter().filter(|x| &*x.name == "s").map(|x| x.busy_ms).sum::<f64>();
        }
        assert_eq!(found, 5.0, "the sweep reached it within keySlots / SWEEP windows");
        assert_eq!(a.totals(&l, t).iter().find(|x| &*x.0 == "s").unwrap().1.busy_ms, 5.0);
    }

    #[test]
    fn a_close_of_a_churning_key_ring_counts_its_scratch_to_be_given_back() {
        // What malloc keeps after a close of tens of thousands of charged slots is what the
        // watch thread gives back (malloc::lasting); a close of a few slots counts nothing.
        let c = Config { key_slots: 1 << 16, max_keys: 10_000, ..cfg() };
        let m = Memory::new(c.slots());
        let l = m.ledger();
        let mut a = Aggregator::new(c.clone(), 0.0);
        let s = a.add_scope("s");
        let k0 = 2 + c.max_scopes;
        let few = a.close_begin(&l, 1.0);
        assert_eq!(crate::runtime::malloc::lasting(few.scratch_bytes()), 0);
        let mut t = 1.0;
        for j in 0..c.key_slots {
            a.bind_key(&l, k0 + j, s, format!("key-{j}")).unwrap();
            m.switch_to(k0 + j, t);
            m.call(k0 + j);
            t += 0.001;
        }
        m.switch_to(UNATTRIBUTED, t);
        let many = a.close_begin(&l, t + 1.0);
        assert_eq!(many.charges.len(), c.key_slots + 1, "every key slot was charged, and unattributed");
        assert!(crate::runtime::malloc::lasting(many.scratch_bytes()) >= c.key_slots * 80, "{} bytes", many.scratch_bytes());
    }

    #[test]
    fn a_close_being_built_is_due_now() {
        let c = Config { window_ms: 10.0, ..cfg() };
        let m = Memory::new(c.slots());
        let l = m.ledger();
        let mut a = Aggregator::new(c, 0.0);
        assert_eq!(a.next_kept(), 10.0);
        let pending = a.close_begin(&l, 10.5);
        assert_eq!(a.due(), 20.0);
        assert_eq!(a.next_kept(), 10.5, "the window closed at 10.5 is not in the history yet");
        a.close_end(pending.finish(None));
        assert_eq!(a.next_kept(), 20.0);
        assert_eq!(a.history().count(), 1);
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
        let v = serde_json::to_value(a.close(&l, 250.0, None).json(1_000_000.0)).unwrap();
        assert_eq!(v["start"], 1_000_000.0);
        assert_eq!(v["durationMs"], 250.0);
        assert_eq!(v["thread"]["elu"], 1.0);
        assert_eq!(v["scopes"][0]["name"], "x");
        assert_eq!(v["unattributed"]["busyMs"], 0.0);
    }
}
