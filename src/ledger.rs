//! The ledger: a Float64Array written by the JS async hooks and read by Rust.
//!
//! Layout (index into f64 cells):
//! - `RUNNING`: the slot charged now, or -1 while the loop is idle (closed by the prepare handle);
//! - `SINCE`: when that slot began to be charged, in `performance.now()` milliseconds; while
//!   idle, when the idle mark closed it (the scope timeline of a CPU profile reads it, js/timeline.js);
//! - `WAKE`: when the loop last went from idle to busy (the start of the current stretch);
//! - `WANT`: set (1) by the idle mark after a stall nothing took a stack of; JS starts a stack
//!   sampler at its next wake and clears it (js/hooks.js);
//! - `HEADER + slot`: cumulative busy milliseconds of each slot;
//! - `HEADER + slots + slot`: cumulative callbacks of each slot.
//!
//! Only the monitored thread writes. Other threads read each cell as one aligned 64-bit
//! load, so a value is never torn; a reader racing a switch may see the running slot one
//! interval late, an error the next window gives back (windows diff cumulative values).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

pub const RUNNING: usize = 0;
pub const SINCE: usize = 1;
pub const WAKE: usize = 2;
pub const WANT: usize = 3;
pub const HEADER: usize = 4;

/// Cells needed for `slots` slots.
pub fn cells(slots: usize) -> usize {
    HEADER + 2 * slots
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

    fn get(&self, i: usize) -> f64 {
        f64::from_bits(self.cell(i).load(Relaxed))
    }

    fn set(&self, i: usize, v: f64) {
        self.cell(i).store(v.to_bits(), Relaxed)
    }

    /// The slot being charged and since when, if the loop is busy.
    pub fn running(&self) -> Option<(usize, f64)> {
        let slot = self.get(RUNNING);
        let since = self.get(SINCE);
        (slot >= 0.0 && (slot as usize) < self.slots).then_some((slot as usize, since))
    }

    /// When the loop last woke from idle.
    pub fn wake(&self) -> f64 {
        self.get(WAKE)
    }

    /// Cumulative busy time and calls of `slot` as of `now`, counting the running interval.
    pub fn read(&self, slot: usize, running: Option<(usize, f64)>, now: f64) -> Reading {
        let mut busy_ms = self.get(HEADER + slot);
        if let Some((s, since)) = running {
            if s == slot && now > since {
                busy_ms += now - since;
            }
        }
        Reading { busy_ms, calls: self.get(HEADER + self.slots + slot) }
    }

    /// Asks JS for a stack sampler (see `WANT`). Only the monitored thread may call this.
    pub fn want_stacks(&self) {
        self.set(WANT, 1.0);
    }

    /// Charges the running interval up to `now` and marks the loop idle since `now`.
    /// Only the monitored thread may call this (it is the ledger's one writer).
    pub fn close_running(&self, now: f64) {
        if let Some((slot, since)) = self.running() {
            if now > since {
                self.set(HEADER + slot, self.get(HEADER + slot) + (now - since));
            }
            self.set(SINCE, now.max(since));
            self.set(RUNNING, -1.0);
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
            m.set(RUNNING, -1.0);
            m
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
            let running = self.get(RUNNING);
            if running >= 0.0 {
                let i = HEADER + running as usize;
                self.set(i, self.get(i) + now - self.get(SINCE));
            } else {
                self.set(WAKE, now);
            }
            self.set(SINCE, now);
            self.set(RUNNING, slot as f64);
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
