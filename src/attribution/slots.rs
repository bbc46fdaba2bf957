//! Per-slot bookkeeping whose cost follows the slots in use, not the capacity the options allow.
//!
//! A ledger may have millions of slots (`maxScopes` up to 10⁶, `keySlots` up to 1 048 576)
//! while an app uses a few hundred. State per slot grows on first use ([`PerSlot`]), and a
//! window reads only the slots that can have changed ([`Active`]): those charged or bound in
//! the last `GRACE` windows, the running one, and a sweep through all the others, `SWEEP`
//! slots per second of window. The ledger is written by JS without telling Rust what changed,
//! so the sweep is what finds late work of a slot that went quiet (a key's reply after a long
//! wait): it is charged to the window in which the sweep reaches the slot, never lost. With
//! 1 s windows and up to `SWEEP` slots in use, as with the default options, every window reads
//! every slot in use; at 10 ms windows with the defaults' 75 000 slots, a quiet slot is read
//! within 60 ms. The lookout thread's work per second, and so how long it holds the lock that
//! key binding and the idle mark take, follows the slots in use, not the options.

/// Windows a slot stays on the active list after it was last charged or bound.
pub const GRACE: u64 = 3;
/// Slots the sweep reads per second of window (at least `SWEEP_MIN` a window).
pub const SWEEP: usize = 1 << 17;
const SWEEP_MIN: usize = 1024;

/// Slots the sweep reads in a window of `window_ms`.
pub fn sweep_for(window_ms: f64) -> usize {
    ((SWEEP as f64 * window_ms / 1000.0) as usize).max(SWEEP_MIN)
}

/// Values by slot, grown on first use: scope slots count from 0, key slots from `key_base`.
pub struct PerSlot<T> {
    scopes: Vec<T>,
    keys: Vec<T>,
    key_base: usize,
}

impl<T: Copy + Default> PerSlot<T> {
    pub fn new(key_base: usize) -> Self {
        PerSlot { scopes: Vec::new(), keys: Vec::new(), key_base }
    }

    fn place(&mut self, slot: usize) -> (&mut Vec<T>, usize) {
        match slot.checked_sub(self.key_base) {
            Some(j) => (&mut self.keys, j),
            None => (&mut self.scopes, slot),
        }
    }

    pub fn get(&self, slot: usize) -> T {
        let (v, i) = match slot.checked_sub(self.key_base) {
            Some(j) => (&self.keys, j),
            None => (&self.scopes, slot),
        };
        v.get(i).copied().unwrap_or_default()
    }

    pub fn set(&mut self, slot: usize, value: T) {
        let (v, i) = self.place(slot);
        if v.len() <= i {
            v.resize(i + 1, T::default());
        }
        v[i] = value;
    }
}

/// Which slots a window reads.
pub struct Active {
    /// Slots as u32 (at most `maxScopes` + `keySlots` + 3, about 2 M): the list and its copy a
    /// window take half the bytes.
    list: Vec<u32>,
    sweep: usize,
    /// 1 + the window (seq) a listed slot was last charged or bound in; 0: not listed.
    seen: PerSlot<u64>,
    cursor: usize,
}

impl Active {
    /// `always`: slots listed for good (unattributed, `(other)`).
    /// `sweep`: slots read per window beyond the list.
    pub fn new(key_base: usize, always: &[usize], sweep: usize) -> Self {
        let mut a = Active { list: Vec::new(), sweep, seen: PerSlot::new(key_base), cursor: 0 };
        for &s in always {
            a.touch(s, u64::MAX - 1); // seen: u64::MAX, never quiet
        }
        a
    }

    /// `slot` was bound or registered in window `seq`: it is read from now on.
    pub fn touch(&mut self, slot: usize, seq: u64) {
        if self.seen.get(slot) == 0 {
            self.list.push(slot as u32);
        }
        self.seen.set(slot, self.seen.get(slot).max(seq + 1));
    }

    /// The slots to read: the listed ones, `running`, and the sweep's next slots among the
    /// `scopes` scope slots and `keys` key slots in use, each once.
    pub fn to_read(&self, scopes: usize, keys: usize, running: Option<usize>) -> Vec<u32> {
        let mut out = self.list.clone();
        let unlisted = |s: usize| self.seen.get(s) == 0;
        let running = running.filter(|&r| unlisted(r));
        out.extend(running.map(|r| r as u32));
        let n = scopes + keys;
        for i in 0..self.sweep.min(n) {
            let p = (self.cursor + i) % n;
            let slot = if p < scopes { p } else { self.seen.key_base + p - scopes };
            if unlisted(slot) && Some(slot) != running {
                out.push(slot as u32);
            }
        }
        out
    }

    /// After window `seq` closed: `charged` slots are (re)listed, listed slots quiet for
    /// `GRACE` windows leave the list, and the sweep moves on over the `in_use` slots.
    pub fn closed(&mut self, charged: impl Iterator<Item = usize>, seq: u64, in_use: usize) {
        for s in charged {
            self.touch(s, seq);
        }
        let Active { list, seen, .. } = self;
        list.retain(|&s| {
            let keep = seen.get(s as usize).saturating_add(GRACE) > seq + 1;
            if !keep {
                seen.set(s as usize, 0);
            }
            keep
        });
        self.cursor = (self.cursor + self.sweep) % in_use.max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_slots_leave_the_list_and_the_sweep_still_reaches_them() {
        let key_base = 1_000_002;
        let mut a = Active::new(key_base, &[0, 1], 1024);
        a.touch(2, 1);
        a.touch(key_base + 5, 1);
        let read: Vec<usize> = a.to_read(3, 6, None).into_iter().map(|s| s as usize).collect();
        assert_eq!(&read[..3], &[0, 1, 2][..]);
        assert!(read.contains(&(key_base + 5)) && read.contains(&(key_base + 4)), "few in use: the sweep reads them all");
        assert_eq!(read.len(), 9, "each slot once");
        a.closed([key_base + 5].into_iter(), 2, 9);
        a.closed(std::iter::empty(), 4, 9);
        assert_eq!(a.list, vec![0, 1, key_base as u32 + 5], "slot 2 was quiet for GRACE windows");
        a.closed(std::iter::empty(), 5, 9);
        assert_eq!(a.list, vec![0, 1], "the always-listed stay");
        assert_eq!(a.to_read(3, 6, Some(key_base + 5)).iter().filter(|&&s| s as usize == key_base + 5).count(), 1);
    }

    #[test]
    fn per_slot_values_cost_memory_only_up_to_the_highest_slot_used() {
        let mut p: PerSlot<u64> = PerSlot::new(1_000_002);
        p.set(1_000_002 + 3, 7);
        assert_eq!((p.scopes.len(), p.keys.len()), (0, 4));
        assert_eq!(p.get(1_000_002 + 3), 7);
        assert_eq!(p.get(5_000_000), 0);
    }
}
