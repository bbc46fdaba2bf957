//! A thread's garbage collections by kind: V8's GC callbacks (src/runtime/gc_hooks.rs) report
//! each collection's start and end on the monitored thread, and the record keeps the time of
//! those inside the current stretch, so a stall's GC is known as it ends, and every
//! collection's since the callbacks were installed, which a window close diffs (as it diffs the
//! ledger). No lock: the callbacks run inside V8, which may collect while the monitored thread
//! holds the monitor's; one writer, the monitored thread, whose idle mark reads the stretch's
//! and the lookout thread the totals.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering::{Acquire, Relaxed, Release}};

use serde::ser::{Serialize, SerializeMap, Serializer};

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

/// Collections of one kind inside a stall or a window: its `gc` entries (index.d.ts).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GcKind {
    pub kind: &'static str,
    pub ms: f64,
    pub count: u32,
}

impl Serialize for GcKind {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(Some(3))?;
        m.serialize_entry("kind", self.kind)?;
        m.serialize_entry("ms", &self.ms)?;
        m.serialize_entry("count", &self.count)?;
        m.end()
    }
}

/// ms and count of each kind (`KINDS`) since the callbacks were installed.
pub type GcTotals = [(f64, u64); KINDS.len()];

#[derive(Default)]
#[cfg_attr(not(unix), allow(dead_code))]
pub struct GcRecord {
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
    /// Since the callbacks were installed: ms (f64 bits) and count (stored after the ms, Release).
    total_ms: [AtomicU64; KINDS.len()],
    total_count: [AtomicU64; KINDS.len()],
}

#[cfg_attr(not(unix), allow(dead_code))]
impl GcRecord {
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
        let Some(k) = Some(self.kind.load(Relaxed)).filter(|&k| depth == 1 && k < KINDS.len()) else { return };
        let began = f64::from_bits(self.began.load(Relaxed));
        let total = f64::from_bits(self.total_ms[k].load(Relaxed)) + (now - began).max(0.0);
        self.total_ms[k].store(total.to_bits(), Relaxed);
        self.total_count[k].store(self.total_count[k].load(Relaxed) + 1, Release);
        let Some(wake) = stretch else { return };
        if f64::from_bits(self.wake.load(Relaxed)) != wake {
            for (ms, count) in self.ms.iter().zip(&self.count) {
                ms.store(0f64.to_bits(), Relaxed);
                count.store(0, Relaxed);
            }
            self.wake.store(wake.to_bits(), Relaxed);
        }
        // Only its part inside the stretch (one begun while idle, before the first callback, is not).
        let ms = (now - began.max(wake)).max(0.0);
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

    /// Every collection's since the callbacks were installed, the one running at `now` for its
    /// time so far (counted once it ends): windows split a long collection as they split a long
    /// callback. `None` without the callbacks (unknown).
    pub fn totals(&self, now: f64) -> Option<GcTotals> {
        if !self.hooked.load(Relaxed) {
            return None;
        }
        let mut totals: GcTotals = std::array::from_fn(|k| {
            let count = self.total_count[k].load(Acquire); // its ms are stored before it
            (f64::from_bits(self.total_ms[k].load(Relaxed)), count)
        });
        // Read after the totals: an end meanwhile has lowered the depth first, so it is not counted twice.
        if self.depth.load(Relaxed) > 0 {
            if let Some(t) = totals.get_mut(self.kind.load(Relaxed)) {
                t.0 += (now - f64::from_bits(self.began.load(Relaxed))).max(0.0);
            }
        }
        Some(totals)
    }
}

/// The collections from totals `a` to totals `b`, by kind, longest first: a window's (with
/// the part of one running at either end).
pub fn between(a: &GcTotals, b: &GcTotals) -> Vec<GcKind> {
    let mut kinds: Vec<GcKind> = (0..KINDS.len())
        .map(|k| GcKind { kind: KINDS[k], ms: (b[k].0 - a[k].0).max(0.0), count: b[k].1.saturating_sub(a[k].1) as u32 })
        .filter(|g| g.count > 0 || g.ms > 0.0)
        .collect();
    kinds.sort_by(|a, b| b.ms.total_cmp(&a.ms));
    kinds
}

/// Two neighbouring spans' collections as one, by kind, longest first.
pub fn plus(a: &[GcKind], b: &[GcKind]) -> Vec<GcKind> {
    let mut kinds = a.to_vec();
    for g in b {
        match kinds.iter_mut().find(|k| k.kind == g.kind) {
            Some(k) => {
                k.ms += g.ms;
                k.count += g.count;
            }
            None => kinds.push(*g),
        }
    }
    kinds.sort_by(|a, b| b.ms.total_cmp(&a.ms));
    kinds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_collections_of_the_stretch_running_by_kind() {
        let gc = GcRecord::default();
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

    #[test]
    fn every_collection_counts_in_the_totals_idle_or_not_and_a_running_one_for_its_time_so_far() {
        let gc = GcRecord::default();
        assert_eq!(gc.totals(0.0), None, "no callbacks: unknown");
        gc.set_hooked(true);
        let start = gc.totals(80.0).unwrap();
        gc.begin(1, 90.0);
        gc.end(None, 91.0); // while idle
        gc.begin(4, 95.0); // begun while idle: counted from its start
        gc.begin(16, 100.0);
        gc.end(Some(100.0), 110.0);
        gc.end(Some(100.0), 135.0);
        let mid = gc.totals(140.0).unwrap();
        assert_eq!(between(&start, &mid), vec![GcKind { kind: "major", ms: 40.0, count: 1 }, GcKind { kind: "minor", ms: 1.0, count: 1 }]);
        gc.begin(4, 200.0);
        let running = gc.totals(230.0).unwrap();
        assert_eq!(between(&mid, &running), vec![GcKind { kind: "major", ms: 30.0, count: 0 }], "a collection running: its time so far, counted once it ends");
        gc.end(Some(150.0), 250.0);
        gc.begin(2, 260.0);
        gc.end(Some(150.0), 263.0);
        assert_eq!(between(&running, &gc.totals(270.0).unwrap()), vec![GcKind { kind: "major", ms: 20.0, count: 1 }, GcKind { kind: "minor", ms: 3.0, count: 1 }], "a span has only its own part");
        let major = GcKind { kind: "major", ms: 40.0, count: 1 };
        assert_eq!(plus(&[GcKind { kind: "minor", ms: 1.0, count: 1 }], &[GcKind { kind: "minor", ms: 2.0, count: 2 }, major]), vec![major, GcKind { kind: "minor", ms: 3.0, count: 3 }]);
        assert_eq!(serde_json::to_value(GcKind { kind: "minor", ms: 3.0, count: 1 }).unwrap(), serde_json::json!({ "kind": "minor", "ms": 3.0, "count": 1 }));
    }
}
