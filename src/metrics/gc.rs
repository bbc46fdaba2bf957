//! Garbage collections by kind: JS observes them (js/metrics/gc.js, Node's 'gc' performance
//! entries) and pushes each batch here, where scrapes read a histogram per kind and the
//! OpenTelemetry adapter each collection once.

use std::collections::VecDeque;

use parking_lot::Mutex;

/// The kinds, as prom-client's `kind` label and OpenTelemetry's `v8js.gc.type` name them.
pub const KINDS: [&str; 4] = ["major", "minor", "incremental", "weakcb"];
/// prom-client's buckets for `nodejs_gc_duration_seconds`, s.
pub const BUCKETS: [f64; 6] = [0.001, 0.01, 0.1, 1.0, 2.0, 5.0];
/// Collections kept for readers that record each (OpenTelemetry): a reader that reads less
/// often than this many collections misses the oldest in its histogram, never in the totals.
const RECENT: usize = 4096;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KindTotals {
    pub count: u64,
    pub seconds: f64,
    /// Collections at most each `BUCKETS` bound long (cumulative, as Prometheus wants them).
    pub le: [u64; BUCKETS.len()],
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct GcTotals {
    pub by_kind: [KindTotals; KINDS.len()],
    /// Collections ever recorded, and the latest of them: (kind index, seconds).
    pub count: u64,
    pub recent: VecDeque<(usize, f64)>,
}

#[derive(Default)]
pub struct Gc {
    totals: Mutex<GcTotals>,
}

impl Gc {
    /// One collection of kind `kind` (index into `KINDS`; others are ignored) that took `seconds`.
    pub fn record(&self, kind: usize, seconds: f64) {
        if kind >= KINDS.len() || !seconds.is_finite() {
            return;
        }
        let seconds = seconds.max(0.0);
        let mut t = self.totals.lock();
        let k = &mut t.by_kind[kind];
        k.count += 1;
        k.seconds += seconds;
        for (n, &bound) in k.le.iter_mut().zip(&BUCKETS) {
            *n += u64::from(seconds <= bound);
        }
        t.count += 1;
        if t.recent.len() == RECENT {
            t.recent.pop_front();
        }
        t.recent.push_back((kind, seconds));
    }

    pub fn read(&self) -> GcTotals {
        self.totals.lock().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_per_kind_and_the_recent_collections() {
        let gc = Gc::default();
        gc.record(1, 0.0005);
        gc.record(1, 0.02);
        gc.record(0, 1.5);
        gc.record(9, 1.0); // no such kind
        gc.record(0, f64::NAN);
        let t = gc.read();
        assert_eq!(t.by_kind[1], KindTotals { count: 2, seconds: 0.0205, le: [1, 1, 2, 2, 2, 2] });
        assert_eq!(t.by_kind[0].le, [0, 0, 0, 0, 1, 1]);
        assert_eq!((t.count, t.recent.len()), (3, 3));
        for _ in 0..RECENT {
            gc.record(3, 0.001);
        }
        let t = gc.read();
        assert_eq!((t.count, t.recent.len(), t.recent[0]), (3 + RECENT as u64, RECENT, (3, 0.001)));
    }
}
