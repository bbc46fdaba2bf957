//! The ledger: a Float64Array written by the JS async hooks and read by Rust.
//!
//! Layout (index into f64 cells):
//! - `RUNNING`: the slot charged now, or -1 while the loop is idle (closed by the prepare handle),
//!   an i32 in the cell's first 4 bytes (JS: an Int32Array over them), published last;
//! - `SINCE`: when that slot began to be charged, in `performance.now()` milliseconds; while
//!   idle, when the idle mark closed it (the scope timeline of a CPU profile reads it, js/timeline.js);
//! - `WAKE`: when the loop last went from idle to busy (the start of the current stretch);
//! - `WANT`: set (1) by the idle mark after a stall nothing took a stack of; JS starts a stack
//!   sampler at its next wake and clears it (js/hooks.js);
//! - `HEADER + slot`: cumulative busy milliseconds of each slot;
//! - `HEADER + slots + slot`: cumulative callbacks of each slot.
//!
//! Only the monitored thread writes. Other threads read each cell as one aligned load, so a
//! value is never torn. Order: a switch stores `SINCE` (and `WAKE`) before the slot's total,
//! and publishes `RUNNING` last with a release store (a plain one on x64, whose stores are seen
//! in program order; `Atomics.store` elsewhere, js/hooks.js). A reader loads `RUNNING` with
//! acquire first, so the slot it sees never comes with an older start: arm64 and armv7 may
//! otherwise show the new slot with the last interval's start, or a stretch's first slot with
//! the last stretch's wake (idle time charged, a stall that is not one). What a reader racing
//! a switch can still see: the old slot with the new start (the switch's first instants
//! charged to the old slot), or a total that is not yet the new one (undercounted until the
//! next read); both are at most the read's own duration and given back by the next window
//! (windows diff cumulative values). It reads the total before re-reading `SINCE`, so on x64 a
//! total that has the last interval comes with that interval's end as start, never counted
//! twice; on arm the two plain stores may be seen in either order, and a reader between them
//! may count the last interval twice, unless `snapshot`'s second look sees the new `SINCE` and
//! reads again (`aggregator::delta` keeps windows from going negative after it). A writer
//! descheduled between its clock read and its stores starts the new interval in the past,
//! after readers charged that time to the old slot: the error is that pause, inside one stretch.

use std::sync::atomic::{
    AtomicI32, AtomicU64,
    Ordering::{Acquire, Relaxed, Release},
};

pub const RUNNING: usize = 0;
pub const SINCE: usize = 1;
pub const WAKE: usize = 2;
pub const WANT: usize = 3;
pub const HEADER: usize = 4;

/// Cells needed for `slots` slots.
pub fn cells(slots: usize) -> usize {
    HEADER + 2 * slots
}

/// The i32 in a cell's first 4 bytes (the `RUNNING` cell; JS: an Int32Array over them).
fn as_i32(cell: &AtomicU64) -> &AtomicI32 {
    // SAFETY: an 8-byte aligned AtomicU64 is 4-byte aligned memory of at least 4 bytes, valid
    // as long as the borrow; both types allow shared mutation.
    unsafe { &*(cell as *const AtomicU64).cast::<AtomicI32>() }
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
        as_i32(self.cell(RUNNING))
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
    /// switch lands among the reads, at most three times; then the error is one read's length.
    pub fn snapshot(&self, now: f64, to_read: impl Fn(Option<usize>) -> Vec<usize>) -> (f64, Vec<(usize, Reading)>) {
        for attempt in 1.. {
            let state = self.state();
            let running = self.busy(state);
            let at = now.max(state.1);
            let readings = to_read(running.map(|r| r.0)).into_iter().map(|s| (s, self.read(s, running, at))).collect();
            if attempt == 3 || self.state() == state {
                return (at, readings);
            }
        }
        unreachable!()
    }

    /// Asks JS for a stack sampler (see `WANT`). Only the monitored thread may call this.
    pub fn want_stacks(&self) {
        self.set(WANT, 1.0);
    }

    /// Charges the running interval up to `now` and marks the loop idle since `now`.
    /// Only the monitored thread may call this (it is the ledger's one writer).
    pub fn close_running(&self, now: f64) {
        if let Some((slot, since)) = self.running() {
            self.set(SINCE, now.max(since));
            if now > since {
                self.set(HEADER + slot, self.get(HEADER + slot) + (now - since));
            }
            self.running_cell().store(-1, Release);
        }
    }
}

#[cfg(test)]
pub mod test_support {
    use super::*;

    /// Ledger memory owned by a test, written the way the JS hooks write it.
    pub struct Memory {
        pub cells: Box<[AtomicU64]>,
        pub slots: usize,
    }

    impl Memory {
        pub fn new(slots: usize) -> Self {
            let cells = (0..cells(slots)).map(|_| AtomicU64::new(0)).collect();
            let m = Memory { cells, slots };
            m.set_running(-1);
            m
        }
        /// Publishes the running slot, as JS does (a release store).
        pub fn set_running(&self, slot: i32) {
            as_i32(&self.cells[RUNNING]).store(slot, Release)
        }
        pub fn running(&self) -> i32 {
            as_i32(&self.cells[RUNNING]).load(Acquire)
        }
        pub fn set(&self, i: usize, v: f64) {
            self.cells[i].store(v.to_bits(), Relaxed)
        }
        pub fn get(&self, i: usize) -> f64 {
            f64::from_bits(self.cells[i].load(Relaxed))
        }
        pub fn ledger(&self) -> Ledger {
            // SAFETY: the test keeps `self` alive while it uses the ledger.
            unsafe { Ledger::from_raw(self.cells.as_ptr(), self.slots) }
        }
        /// What the JS hot path does when the charged slot changes at `now`.
        pub fn switch_to(&self, slot: usize, now: f64) {
            let running = self.running();
            if running >= 0 {
                let since = self.get(SINCE);
                self.set(SINCE, now);
                let i = HEADER + running as usize;
                self.set(i, self.get(i) + now - since);
            } else {
                self.set(WAKE, now);
                self.set(SINCE, now);
            }
            self.set_running(slot as i32);
        }
        pub fn call(&self, slot: usize) {
            let i = HEADER + self.slots + slot;
            self.set(i, self.get(i) + 1.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::Memory;

    #[test]
    fn running_interval_counts_live_and_closes_once() {
        let m = Memory::new(4);
        let l = m.ledger();
        m.switch_to(2, 10.0);
        let r = l.running();
        assert_eq!(r, Some((2, 10.0)));
        assert_eq!(l.read(2, r, 25.0).busy_ms, 15.0);
        m.switch_to(3, 30.0);
        assert_eq!(l.read(2, l.running(), 40.0).busy_ms, 20.0);
        l.close_running(35.0);
        assert_eq!(l.running(), None);
        assert_eq!(m.get(super::SINCE), 35.0, "idle since the mark");
        assert_eq!(l.read(3, None, 99.0).busy_ms, 5.0);
        l.close_running(50.0); // idle: nothing more is charged
        assert_eq!(l.read(3, None, 99.0).busy_ms, 5.0);
    }
}

#[cfg(test)]
mod stress {
    use super::test_support::Memory;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
    use std::sync::Arc;

    /// One thread switches slots as fast as it can on a fake clock it stamps after each
    /// switch: stretches of 16 one-ms intervals, then an idle gap. Another reads half a ms past
    /// the stamp it saw: the running interval it sees began at that stamp or later (a torn pair
    /// would give an earlier start: the last interval or the idle gap charged again), and the
    /// busy time it reads is no more than the timeline has by the stamp after it, give or take
    /// the switch in flight.
    #[test]
    fn a_reader_racing_switches_never_overcounts() {
        const SLOTS: usize = 3;
        const RUN: u32 = 16; // switches per stretch, 1 ms apart
        const PERIOD: f64 = 1000.0; // ms from one stretch's wake to the next
        let m = Arc::new(Memory::new(SLOTS));
        let clock = Arc::new(AtomicU64::new(f64::NAN.to_bits()));
        let done = Arc::new(AtomicBool::new(false));
        let writer = {
            let (m, clock, done) = (m.clone(), clock.clone(), done.clone());
            std::thread::spawn(move || {
                let l = m.ledger();
                for j in 0..8_000u32 {
                    let wake = f64::from(j) * PERIOD;
                    for k in 0..RUN {
                        m.switch_to(((j * RUN + k) % SLOTS as u32) as usize, wake + f64::from(k));
                        clock.store((wake + f64::from(k)).to_bits(), Release);
                        (0..100).for_each(|_| std::hint::spin_loop()); // for the reader to catch up now and then
                    }
                    l.close_running(wake + f64::from(RUN));
                }
                done.store(true, Release);
            })
        };
        let l = m.ledger();
        let (mut reads, mut live) = (0u64, 0u64);
        let busy_at = |stamp: f64| f64::from(RUN) * (stamp / PERIOD).floor() + stamp % PERIOD;
        while !done.load(Acquire) {
            let stamp = f64::from_bits(clock.load(Acquire));
            if stamp.is_nan() {
                continue;
            }
            let now = stamp + 0.5;
            let running = l.running();
            let total: f64 = (0..SLOTS).map(|s| l.read(s, running, now).busy_ms).sum();
            let after = f64::from_bits(clock.load(Acquire));
            if let Some((_, since)) = running {
                assert!(since >= stamp, "the slot switched to after {stamp} ms runs since {since}");
                live += u64::from(now > since);
            }
            assert!(total <= busy_at(after) + 1.5, "read {total} ms busy by {after}, the timeline has {}", busy_at(after));
            reads += 1;
        }
        writer.join().unwrap();
        assert!(reads > 1000 && live > 0, "{reads} reads, {live} with a live interval");
    }
}
