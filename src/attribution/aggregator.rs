//! The aggregator: turns the ledger's cumulative per-slot counters into windows.
//!
//! Slots are the ledger's unit of charge. Slot 0 is unattributed time, slot 1 is `(other)`
//! (scopes past the cap), slot 2 rloop's own work (no scope: a window says it apart, out of
//! its busy time), then one slot per scope, then a ring of key slots: a key slot is
//! bound to one (scope, key) at a time and rebound when the ring comes round, its time so far
//! retired into the current window first. A window is the difference of cumulative readings
//! at its two ends, so a window closed while a callback still runs includes that callback's
//! time so far, and nothing is counted twice. Binding key slots is `key_slots`, the totals
//! since start `totals`.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use smol_str::SmolStr;

#[cfg(test)]
use crate::stalls::lag::LagStats;
use super::keys::Unnamed;
use super::ledger::{Ledger, Reading};
use super::names::Names;
use super::slots::{Active, PerSlot};
pub use super::window::{Pending, ScopeWindow, Window};
pub use totals::{RawTotals, Totals};

mod key_slots;
#[cfg(test)]
mod tests;
mod totals;

pub const UNATTRIBUTED: usize = 0;
pub const OTHER: usize = 1;
/// rloop's own work on the loop (js/capture/own-work.js): not the app's, so in no scope and
/// out of the thread's busy time; a window's `rloop_ms`.
pub const RLOOP: usize = 2;
pub const FIRST_SCOPE: usize = 3;
/// Heap bytes the history keeps at most (see `Window::heap_bytes`): with many scopes charged
/// in every window it keeps fewer than `history` windows, the oldest going first, and counts
/// them in `history_dropped`; a window over the bound on its own stays until the next one
/// closes. 10 000 keyed scopes a window take ≈ 1.2 MB.
pub const HISTORY_BYTES: usize = 2 << 20;

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
    /// Copied into (or, past 23 bytes, shared with) the windows built from it, which may be
    /// built outside the lock.
    key: SmolStr,
}

/// Time of keys whose slot was rebound during the current window.
#[derive(Clone, Default)]
struct Retired {
    /// By scope index; grows to the highest scope retired into.
    per_scope: Vec<Reading>,
    /// At most `max_keys` names; later keys go to `unnamed`.
    keys: Vec<(usize, SmolStr, f64)>,
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
            names: Names::new(&["(unattributed)", "(other)", "(rloop)"]),
            index: None,
            scopes_overflowed: 0,
            key_owner: Vec::new(),
            base: PerSlot::new(cfg.key_base()),
            active: Active::new(cfg.key_base(), &[UNATTRIBUTED, OTHER, RLOOP], super::slots::sweep_for(cfg.window_ms)),
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

    /// Scopes registered, the built-in slots included: one total each. Counted without
    /// the name table, which the lookout thread reads outside the lock.
    fn scopes(&self) -> usize {
        self.totals.len()
    }

    pub fn scopes_overflowed(&self) -> u64 {
        self.scopes_overflowed
    }

    /// The window from the last close until `now`, read without closing it.
    pub fn measure(&self, ledger: &Ledger, now: f64) -> Window {
        self.scan(ledger, now, self.retired.clone()).0.finish(None)
    }

    /// Closes the current window at `now`, keeps it in the history and returns it (what the
    /// lookout thread does in three steps, see `close_begin`).
    #[cfg(test)]
    pub fn close(&mut self, ledger: &Ledger, now: f64, lag: Option<LagStats>) -> Arc<Window> {
        let pending = self.close_begin(ledger, now);
        self.close_end(pending.finish(lag)).0
    }

    /// The part of a close that needs the ledger and the aggregator: the next window starts at
    /// `now`. The window itself is built by `Pending::finish`, which needs neither (so the
    /// lookout thread runs it without the lock key binding and the idle mark wait on), and kept
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
            read_bytes: readings.capacity() * (std::mem::size_of::<(usize, Reading)>() + std::mem::size_of::<u32>()),
        };
        (pending, readings)
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
