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
        as_i32(&self.cells[RUNNING], 0).store(slot, Release)
    }
    pub fn running(&self) -> i32 {
        as_i32(&self.cells[RUNNING], 0).load(Acquire)
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
    /// What the JS hot path does off x64 when the charged slot changes at `now`.
    pub fn switch_to(&self, slot: usize, now: f64) {
        let seq = as_i32(&self.cells[RUNNING], SEQ);
        let odd = begin(seq);
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
        seq.store(odd.wrapping_add(1), Release);
    }
    pub fn call(&self, slot: usize) {
        let i = HEADER + self.slots + slot;
        self.set(i, self.get(i) + 1.0);
    }
}
