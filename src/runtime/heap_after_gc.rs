//! The heap used after the newest major and minor GC of a monitored thread, from V8's GC
//! epilogue (src/runtime/gc_hooks.rs): what heap used between GCs hides under garbage. After a
//! major GC the heap holds what is live; after a minor GC, what outlived the young generation.
//! One writer (the epilogue, on the monitored thread), any reader: a reading may pair one GC's
//! count with the next one's heap, which is as new.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};

/// After the newest GC of one kind: how many of the kind ran, and the heap used then.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AfterGc {
    pub count: u32,
    pub heap_used: u64,
}

#[derive(Default)]
pub struct HeapAfterGc {
    /// The epilogue records: where V8's names are not found, nothing is known.
    hooked: AtomicBool,
    major: (AtomicU32, AtomicU64),
    minor: (AtomicU32, AtomicU64),
}

#[cfg_attr(not(unix), allow(dead_code))] // no callbacks on Windows (src/runtime/gc_hooks.rs)
impl HeapAfterGc {
    pub fn set_hooked(&self, on: bool) {
        self.hooked.store(on, Relaxed);
    }

    /// Records the heap used after a GC of V8's `GCType` bits; other kinds (incremental marking
    /// steps, weak callbacks) end no collection and are left out.
    pub fn record(&self, v8_type: i32, heap_used: u64) {
        let (count, used) = match v8_type {
            4 => &self.major,     // kGCTypeMarkSweepCompact
            1 | 2 => &self.minor, // kGCTypeScavenge, kGCTypeMinorMarkSweep
            _ => return,
        };
        used.store(heap_used, Relaxed);
        count.fetch_add(1, Relaxed);
    }

    /// `(major, minor)`; `None` where the epilogue does not record.
    pub fn read(&self) -> Option<(AfterGc, AfterGc)> {
        let of = |(count, used): &(AtomicU32, AtomicU64)| AfterGc { count: count.load(Relaxed), heap_used: used.load(Relaxed) };
        self.hooked.load(Relaxed).then(|| (of(&self.major), of(&self.minor)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_gc_of_each_kind_and_how_many_ran() {
        let h = HeapAfterGc::default();
        assert_eq!(h.read(), None, "unknown until hooked");
        h.set_hooked(true);
        h.record(1, 100);
        h.record(2, 90);
        h.record(4, 50);
        h.record(8, 7); // an incremental marking step ends no collection
        assert_eq!(h.read(), Some((AfterGc { count: 1, heap_used: 50 }, AfterGc { count: 2, heap_used: 90 })));
    }
}
