//! The garbage collections inside the stretch running, by kind: V8's GC callbacks
//! (src/runtime/gc_hooks.rs) report each collection's start and end on the monitored thread,
//! and the tally keeps the time of those inside the current stretch, so a stall's GC is known
//! as it ends. No lock: the callbacks run inside V8, which may collect while the monitored
//! thread holds the monitor's; one writer, the monitored thread, whose idle mark reads it.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};

use crate::metrics::GC_KINDS as KINDS;

/// V8's `GCType` bits, as the kinds the metrics name (major, minor, incremental, weakcb).
#[cfg_attr(not(unix), allow(dead_code))] // no callbacks on Windows (src/runtime/gc_hooks.rs)
fn kind_of(v8_type: i32) -> Option<usize> {
    match v8_type {
        4 => Some(0),     // kGCTypeMarkSweepCompact
        1 | 2 => Some(1), // kGCTypeScavenge, kGCTypeMinorMarkSweep
        8 => Some(2),     // kGCTypeIncrementalMarking
        16 => Some(3),    // kGCTypeProcessWeakCallbacks
        _ => None,
    }
}

/// Collections of one kind inside a stall.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GcKind {
    pub kind: &'static str,
    pub ms: f64,
    pub count: u32,
}

#[derive(Default)]
#[cfg_attr(not(unix), allow(dead_code))]
pub struct StallGc {
    /// The GC callbacks are installed: without them a stall's GC is unknown.
    hooked: AtomicBool,
    /// The wake of the stretch the tally is of (f64 bits).
    wake: AtomicU64,
    ms: [AtomicU64; KINDS.len()],
    count: [AtomicU32; KINDS.len()],
    /// Collections begun and not ended: V8 may run one inside another, the outer one counts.
    depth: AtomicU32,
    began: AtomicU64,
    kind: AtomicUsize,
}

#[cfg_attr(not(unix), allow(dead_code))]
impl StallGc {
    pub fn set_hooked(&self, hooked: bool) {
        self.hooked.store(hooked, Relaxed);
    }

    /// A collection of V8 type `v8_type` begins at `now` (monitored thread's clock).
    pub fn begin(&self, v8_type: i32, now: f64) {
        if self.depth.fetch_add(1, Relaxed) == 0 {
            self.began.store(now.to_bits(), Relaxed);
            self.kind.store(kind_of(v8_type).unwrap_or(usize::MAX), Relaxed);
        }
    }

    /// The collection ends at `now`; `stretch`: the wake of the stretch running, if the loop is busy.
    pub fn end(&self, stretch: Option<f64>, now: f64) {
        let depth = self.depth.load(Relaxed);
        if depth == 0 {
            return; // installed during a collection
        }
        self.depth.store(depth - 1, Relaxed);
        let (Some(wake), 1) = (stretch, depth) else { return };
        let Some(k) = Some(self.kind.load(Relaxed)).filter(|&k| k < KINDS.len()) else { return };
        if f64::from_bits(self.wake.load(Relaxed)) != wake {
            for (ms, count) in self.ms.iter().zip(&self.count) {
                ms.store(0f64.to_bits(), Relaxed);
                count.store(0, Relaxed);
            }
            self.wake.store(wake.to_bits(), Relaxed);
        }
        // Only its part inside the stretch (one begun while idle, before the first callback, is not).
        let ms = (now - f64::from_bits(self.began.load(Relaxed)).max(wake)).max(0.0);
        self.ms[k].store((f64::from_bits(self.ms[k].load(Relaxed)) + ms).to_bits(), Relaxed);
        self.count[k].store(self.count[k].load(Relaxed) + 1, Relaxed);
    }

    /// The collections inside the stretch that woke at `wake`, longest first; `None` without the
    /// callbacks (unknown).
    pub fn of(&self, wake: f64) -> Option<Vec<GcKind>> {
        if !self.hooked.load(Relaxed) {
            return None;
        }
        if f64::from_bits(self.wake.load(Relaxed)) != wake {
            return Some(Vec::new());
        }
        let mut kinds: Vec<GcKind> = (0..KINDS.len())
            .map(|k| GcKind { kind: KINDS[k], ms: f64::from_bits(self.ms[k].load(Relaxed)), count: self.count[k].load(Relaxed) })
            .filter(|g| g.count > 0)
            .collect();
        kinds.sort_by(|a, b| b.ms.total_cmp(&a.ms));
        Some(kinds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_collections_of_the_stretch_running_by_kind() {
        let gc = StallGc::default();
        assert_eq!(gc.of(100.0), None, "no callbacks: unknown");
        gc.set_hooked(true);
        gc.begin(1, 90.0);
        gc.end(None, 91.0); // while idle: no stretch
        assert_eq!(gc.of(100.0), Some(vec![]));
        gc.begin(1, 110.0);
        gc.end(Some(100.0), 112.0);
        gc.begin(4, 150.0);
        gc.begin(16, 200.0); // weak callbacks inside the full collection: counted with it
        gc.end(Some(100.0), 210.0);
        gc.end(Some(100.0), 290.0);
        gc.begin(2, 300.0);
        gc.end(Some(100.0), 301.0);
        let kinds = gc.of(100.0).unwrap();
        assert_eq!(kinds, vec![GcKind { kind: "major", ms: 140.0, count: 1 }, GcKind { kind: "minor", ms: 3.0, count: 2 }]);
        assert_eq!(gc.of(500.0), Some(vec![]), "another stretch: none of these");
        gc.begin(8, 495.0);
        gc.end(Some(500.0), 520.0);
        assert_eq!(gc.of(500.0).unwrap(), vec![GcKind { kind: "incremental", ms: 20.0, count: 1 }], "a new stretch starts from none, and from its wake");
        gc.end(Some(500.0), 530.0);
        assert_eq!(gc.of(500.0).unwrap()[0].count, 1, "an end without a begin (installed mid-collection) counts nothing");
    }
}
