//! Windows: busy time per scope over a span, in the form they are kept (shared names, key
//! statistics in one table a window; their public JSON shape is `json`); and how a closed
//! window is built from what the aggregator read, outside the monitor's lock.

use std::collections::HashMap;
use std::sync::Arc;

use smol_str::SmolStr;

use crate::runtime::cpu::Ran;
use crate::stalls::gc::GcKind;
use crate::stalls::lag::LagStats;
use super::aggregator::{add, RLOOP, UNATTRIBUTED};
use super::keys::{self, KeyTable, Keys, Unnamed};
use super::ledger::Reading;
use super::names::Names;

pub mod json;

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
    /// The app's busy time: scopes and unattributed, rloop's own work left out.
    pub busy_ms: f64,
    /// rloop's own work on the loop (`aggregator::RLOOP`), apart from the app's.
    pub rloop_ms: f64,
    pub unattributed: ScopeWindow,
    /// Scopes that were charged, busiest first.
    pub scopes: Vec<ScopeWindow>,
    /// Loop stretches and stalls, for a closed window of a monitor that tracks lag.
    pub lag: Option<LagStats>,
    /// What CPU the thread got over a closed window (`None`: unknown, or a live window).
    pub ran: Option<Ran>,
    /// Its garbage collections by kind, longest first, for a closed window (`None`: unknown, or a live window).
    pub gc: Option<Vec<GcKind>>,
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
    pub named: Vec<(usize, SmolStr, f64)>,
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
        self.read_bytes + self.charges.capacity() * size_of::<(usize, Reading)>() + self.named.capacity() * size_of::<(usize, SmolStr, f64)>()
    }

    pub fn finish(self, lag: Option<LagStats>) -> Window {
        let mut key_stats = keys::summarize(self.named, &self.unnamed, self.max_keys, self.worst_keys);
        let mut keys = KeyTable::default();
        let mut per_scope: HashMap<usize, Reading> = HashMap::new();
        for (scope, r) in self.charges {
            add(per_scope.entry(scope).or_default(), r);
        }
        let rloop_ms = per_scope.remove(&RLOOP).map_or(0.0, |r| r.busy_ms);
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
        Window { seq: self.seq, start: self.start, end: self.end, busy_ms, rloop_ms, unattributed, scopes, lag, ran: None, gc: None, merged: 1, keys }
    }
}

impl Window {
    /// Heap bytes this window holds (scope names are shared, not counted): what a history or
    /// a recording keeps for it.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        size_of::<Window>() + self.scopes.capacity() * size_of::<ScopeWindow>() + self.gc.as_ref().map_or(0, |g| g.capacity() * size_of::<GcKind>()) + self.keys.heap_bytes()
    }

    /// A scope's key statistics, if any of its work in this window was keyed.
    pub fn keys_of(&self, s: &ScopeWindow) -> Option<Keys<'_>> {
        s.keys.map(|i| self.keys.get(i))
    }
}
