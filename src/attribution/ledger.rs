//! The ledger: a Float64Array written by the JS async hooks and read by Rust.
//!
//! Layout (index into f64 cells):
//! - `RUNNING`: the slot charged now, or -1 while the loop is idle (closed by the prepare handle),
//!   an i32 in the cell's first 4 bytes (JS: an Int32Array over the cell), published last; in
//!   its last 4 bytes the i32 switch count (`SEQ`), odd while a switch is being written;
//! - `SINCE`: when that slot began to be charged, in `performance.now()` milliseconds; while
//!   idle, when the idle mark closed it (the scope timeline of a CPU profile reads it,
//!   js/attribution/timeline.js);
//! - `WAKE`: when the loop last went from idle to busy (the start of the current stretch);
//! - `WANT`: set (1) by the idle mark after a stall nothing took a stack of; JS starts a stack
//!   sampler at its next wake and clears it (js/attribution/hooks.js);
//! - `WINDOW`: the `seq` of the window open now, stored by the lookout thread as it closes one: the
//!   Node-RED plugin counts a node's messages in the window each delivery starts in
//!   (node-red/attribution.js), whenever JS gets to see that window closed;
//! - `HEADER + slot`: cumulative busy milliseconds of each slot;
//! - `HEADER + slots + slot`: cumulative callbacks of each slot.
//!
//! JS takes these indices, and the slots every ledger has (`aggregator::UNATTRIBUTED`, `OTHER`,
//! `RLOOP`, `FIRST_SCOPE`), from the addon as it loads (`layout()`; js/attribution/ledger.js).
//!
//! Only the monitored thread writes (but `WINDOW`, a value JS only reads). Other threads read each cell as one aligned load, so a
//! value is never torn. A switch stores `SINCE` (and `WAKE`), the last slot's total, then
//! `RUNNING`; a reader needs them from one switch: the new slot with the last interval's start
//! would charge that interval twice, a stretch's first slot with the last stretch's wake would
//! count idle time as a stall, the new total with the old `SINCE` the last interval twice.
//!
//! On x64 stores are seen in program order, so JS's switches are plain stores and leave the
//! count alone (`Atomics.store` is a locked xchg there); only `close_running` moves it.
//! `RUNNING`, loaded first with acquire, never comes with an older start; `read` loads the
//! total before loading `SINCE` again, so a total that has the last interval comes with that
//! interval's end; `snapshot` reads again when `RUNNING` or `SINCE` changed meanwhile. A reader
//! racing a switch can still see the old slot with the new start, or a total not yet the new
//! one: at most the read's own duration, given back by the next window.
//!
//! Elsewhere (arm64, armv7) plain stores may be seen in any order, and JS has no fence: the
//! switch is a seqlock's write. JS stores the count odd with `Atomics.store` and loads it back
//! with `Atomics.load` before the plain stores, and stores `RUNNING` then the even count with
//! `Atomics.store` after them (js/attribution/hooks.js `begin`). V8 makes these an stlr, an ldar and stlrs
//! on arm64: an stlr comes after every access before it, an ldar before every access after
//! it, and an ldar is not taken before an earlier stlr, so the odd count is seen before any of
//! the switch's stores and the even one after all of them; on armv7 a store is between dmb's.
//! `snapshot` loads the count with acquire, reads, fences (acquire) and loads it again: the
//! same even count both times means no read saw a store of a later switch (it would come after
//! that switch's odd count, which the second load would then see) and every read saw those of
//! the switch before (acquire on its even count), whatever the hardware reorders. The prepare
//! handle's `close_running` (the same thread) writes the same way, with a release fence.
//!
//! What a settled reading can still be off by: a reader is late after it read the clock, so
//! windows charge up to the switch it sees (`snapshot`'s `at`); a writer descheduled between
//! its clock read and its stores starts the new interval in the past, after readers charged
//! that time to the old slot: the error is that pause, inside one stretch. A reading that does
//! not settle in `TRIES` leaves the running interval out: the next window gives it back, as
//! windows diff cumulative values (`aggregator::delta` keeps them from going negative).

use std::sync::atomic::{
    fence, AtomicI32, AtomicU64,
    Ordering::{Acquire, Relaxed, Release},
};

pub const RUNNING: usize = 0;
pub const SINCE: usize = 1;
pub const WAKE: usize = 2;
pub const WANT: usize = 3;
pub const WINDOW: usize = 4;
pub const HEADER: usize = 5;
/// The switch count's i32 in the `RUNNING` cell (the slot charged is the other, the first).
pub const SEQ: usize = 1;

/// Looks of `snapshot` for a settled reading (the writer's switch takes tens of ns).
const TRIES: u32 = 8;

/// Cells needed for `slots` slots.
pub fn cells(slots: usize) -> usize {
    HEADER + 2 * slots
}

/// The i32 in a cell's first (`half` 0) or last 4 bytes (the `RUNNING` cell; JS: an Int32Array over it).
fn as_i32(cell: &AtomicU64, half: usize) -> &AtomicI32 {
    assert!(half < 2);
    // SAFETY: an 8-byte aligned AtomicU64 is two 4-byte aligned i32s, valid as long as the
    // borrow; both types allow shared mutation.
    unsafe { &*(cell as *const AtomicU64).cast::<AtomicI32>().add(half) }
}

/// A view of ledger memory owned elsewhere (a JS ArrayBuffer kept alive while attached).
pub struct Ledger {
    cells: *const AtomicU64,
    slots: usize,
}

// SAFETY: every access is an atomic load or store on 8-byte aligned cells; the owner keeps the
// memory alive while any `Ledger` over it is reachable (see `Shared::detach`).
unsafe impl Send for Ledger {}
unsafe impl Sync for Ledger {}

/// Cumulative values of one slot at a moment, the running interval included.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Reading {
    pub busy_ms: f64,
    pub calls: f64,
}

impl Ledger {
    /// # Safety
    /// `cells` must point to `cells(slots)` 8-byte aligned f64 cells that stay valid for the
    /// life of the returned value.
    pub unsafe fn from_raw(cells: *const AtomicU64, slots: usize) -> Self {
        Ledger { cells, slots }
    }

    fn cell(&self, i: usize) -> &AtomicU64 {
        assert!(i < cells(self.slots), "ledger cell {i} out of range");
        // SAFETY: in range (checked above) of memory valid for our lifetime (from_raw contract).
        unsafe { &*self.cells.add(i) }
    }

    /// Acquire: a later load is not moved before it (`read` loads `SINCE` after the total).
    fn get(&self, i: usize) -> f64 {
        f64::from_bits(self.cell(i).load(Acquire))
    }

    fn set(&self, i: usize, v: f64) {
        self.cell(i).store(v.to_bits(), Relaxed)
    }

    fn running_cell(&self) -> &AtomicI32 {
        as_i32(self.cell(RUNNING), 0)
    }

    fn seq_cell(&self) -> &AtomicI32 {
        as_i32(self.cell(RUNNING), SEQ)
    }

    /// The slot being charged and since when, if the loop is busy. Cells read after this
    /// (`wake`, `read`) are at least as new as the switch that published the slot.
    pub fn running(&self) -> Option<(usize, f64)> {
        self.busy(self.state())
    }

    /// `RUNNING` as published, then `SINCE`.
    fn state(&self) -> (i32, f64) {
        (self.running_cell().load(Acquire), self.get(SINCE))
    }

    fn busy(&self, (slot, since): (i32, f64)) -> Option<(usize, f64)> {
        (slot >= 0 && (slot as usize) < self.slots).then_some((slot as usize, since))
    }

    /// When the loop last woke from idle.
    pub fn wake(&self) -> f64 {
        self.get(WAKE)
    }

    /// Cumulative busy time and calls of `slot` as of `now`, counting the running interval.
    /// `SINCE` is read again after the total: a total that has the interval a switch closed is
    /// never paired with that interval's start (see the module comment).
    pub fn read(&self, slot: usize, running: Option<(usize, f64)>, now: f64) -> Reading {
        let mut busy_ms = self.get(HEADER + slot);
        if let Some((s, since)) = running {
            let since = since.max(self.get(SINCE));
            if s == slot && now > since {
                busy_ms += now - since;
            }
        }
        Reading { busy_ms, calls: self.get(HEADER + self.slots + slot) }
    }

    /// Readings of the slots `to_read` names (given the running slot) that hold at one moment,
    /// and that moment: `now`, or the last switch when it came after `now` (a reader late since
    /// it read the clock: the totals already count up to that switch). Read again while a
    /// switch lands among the reads (the seqlock of the module comment), at most `TRIES` times;
    /// then without the running interval.
    pub fn snapshot(&self, now: f64, to_read: impl Fn(Option<usize>) -> Vec<u32>) -> (f64, Vec<(usize, Reading)>) {
        let mut unsettled = None;
        for _ in 0..TRIES {
            let seq = self.seq_cell().load(Acquire);
            let state = self.state();
            let running = self.busy(state);
            let at = now.max(state.1);
            let slots = to_read(running.map(|r| r.0));
            let readings = slots.iter().map(|&s| (s as usize, self.read(s as usize, running, at))).collect();
            fence(Acquire);
            if seq & 1 == 0 && self.seq_cell().load(Relaxed) == seq && self.state() == state {
                return (at, readings);
            }
            unsettled = Some((at, slots));
            std::hint::spin_loop();
        }
        let (at, slots) = unsettled.expect("TRIES > 0");
        (at, slots.into_iter().map(|s| (s as usize, self.read(s as usize, None, at))).collect())
    }

    /// Window `seq` is open from now on (see `WINDOW`). Any thread: JS reads the cell as one
    /// aligned load, and a small integer's f64 has all its bits in the cell's upper half.
    pub fn open_window(&self, seq: u64) {
        self.cell(WINDOW).store((seq as f64).to_bits(), Release)
    }

    /// Asks JS for a stack sampler (see `WANT`). Only the monitored thread may call this.
    pub fn want_stacks(&self) {
        self.set(WANT, 1.0);
    }

    /// Charges the running interval up to `now` and marks the loop idle since `now`.
    /// Only the monitored thread may call this (it is the ledger's one writer).
    pub fn close_running(&self, now: f64) {
        if let Some((slot, since)) = self.running() {
            let seq = begin(self.seq_cell());
            self.set(SINCE, now.max(since));
            if now > since {
                self.set(HEADER + slot, self.get(HEADER + slot) + (now - since));
            }
            self.running_cell().store(-1, Release);
            self.seq_cell().store(seq.wrapping_add(1), Release);
        }
    }
}

/// Opens a switch's stores (the writer's half of the seqlock) and returns the odd count: the
/// release fence orders it before the stores that follow, for a reader that fences with acquire.
fn begin(seq: &AtomicI32) -> i32 {
    let odd = seq.load(Relaxed).wrapping_add(1);
    seq.store(odd, Relaxed);
    fence(Release);
    odd
}

#[cfg(test)]
pub mod test_support;
#[cfg(test)]
mod tests;
