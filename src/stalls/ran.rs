//! How much of a stall the thread ran: its CPU time from the stall's start to its end, and
//! its cgroup's throttling over the same span.
//!
//! The end is read as the stall ends (rare). The start cannot be read as the loop wakes
//! without a syscall on every wake, so it is read by the lookout thread: while the loop is idle
//! its thread does not run, so a reading taken then, with no stretch ended since, is the
//! thread's CPU time at the next wake (but for what the loop does before its first callback).
//! The cgroup's throttling goes on counting while the loop is idle (other threads, other
//! processes of the cgroup), so the idle loop is read again every so often. When stretches ran
//! between that reading and the stall (a busy loop), the stall is measured from the lookout
//! thread's first look at it instead, and says from when.

use crate::runtime::cpu::{Ran, Usage};

/// What a stall's event says of the CPU the thread got.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StallRan {
    /// Ms after the stall began from which it was measured: 0 for all of it.
    pub from_ms: f64,
    pub ran: Ran,
}

#[derive(Default)]
pub struct RanTracker {
    /// The last reading taken while the loop was idle, and how many stretches had ended then.
    idle: Option<(Usage, u64)>,
    /// The first reading of the stretch being looked, when `idle` does not hold its start.
    head: Option<Usage>,
}

impl RanTracker {
    /// Whether a look at the idle loop at `now` should read (`ended` stretches having ended): after
    /// each stretch, and `every` ms while it stays idle, however often the lookout thread wakes.
    pub fn wants_idle(&self, now: f64, ended: u64, every: f64) -> bool {
        self.idle.is_none_or(|(u, e)| e != ended || now - u.at >= every)
    }

    /// A reading taken while the loop was idle, with `ended` stretches ended.
    pub fn idle(&mut self, usage: Usage, ended: u64) {
        self.idle = Some((usage, ended));
    }

    /// A new stretch is being looked.
    pub fn follow(&mut self) {
        self.head = None;
    }

    /// Whether a look at the stretch running (the `ended`th) should read: only when the idle
    /// reading is not its start, and only once.
    pub fn wants_head(&self, ended: u64) -> bool {
        self.head.is_none() && !self.starts(ended)
    }

    pub fn head(&mut self, usage: Usage) {
        self.head = Some(usage);
    }

    fn starts(&self, ended: u64) -> bool {
        self.idle.is_some_and(|(_, e)| e == ended)
    }

    /// The stall that woke at `wake` (the `ended`th stretch) as read at `end`; `None` when its
    /// start is not known. `looked`: the lookout thread's readings are of this stretch.
    pub fn stall(&self, wake: f64, ended: u64, looked: bool, end: Option<Usage>) -> Option<StallRan> {
        let end = end?;
        let (start, from_ms) = match (self.idle, self.head) {
            (Some((idle, e)), _) if e == ended => (Usage { at: wake, ..idle }, 0.0),
            (_, Some(head)) if looked => (head, (head.at - wake).max(0.0)),
            _ => return None,
        };
        Some(StallRan { from_ms, ran: Ran::between(&start, &end) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::cgroup::Throttled;

    fn usage(at: f64, cpu_ms: f64, throttled: f64) -> Usage {
        Usage { at, cpu_ms, throttled: Some(Throttled::one(throttled)) }
    }

    #[test]
    fn read_while_idle_before_it_a_stall_is_measured_whole() {
        let mut t = RanTracker::default();
        assert!(t.wants_idle(90.0, 3, 25.0));
        t.idle(usage(90.0, 40.0, 5.0), 3);
        assert!(!t.wants_idle(100.0, 3, 25.0), "read 10 ms ago, nothing ran since");
        assert!(t.wants_idle(115.0, 3, 25.0), "the cgroup's count goes on: read again");
        assert!(t.wants_idle(100.0, 4, 25.0), "a stretch ended");
        t.follow();
        assert!(!t.wants_head(3), "the idle reading is this stretch's start");
        let s = t.stall(100.0, 3, true, Some(usage(410.0, 130.0, 215.0))).unwrap();
        assert_eq!(s, StallRan { from_ms: 0.0, ran: Ran { cpu_ms: 90.0, throttled_ms: Some(210.0) } }, "from the wake, not the reading");
        assert!(t.stall(100.0, 3, true, None).is_none(), "no end reading: unknown");
    }

    #[test]
    fn after_stretches_the_idle_reading_missed_from_the_first_look() {
        let mut t = RanTracker::default();
        t.idle(usage(90.0, 40.0, 0.0), 3);
        t.follow();
        assert!(t.wants_head(5), "two stretches ran since the idle reading");
        t.head(usage(130.0, 70.0, 0.0));
        assert!(!t.wants_head(5), "read once");
        let s = t.stall(100.0, 5, true, Some(usage(400.0, 340.0, 0.0))).unwrap();
        assert_eq!((s.from_ms, s.ran.cpu_ms), (30.0, 270.0));
        assert!(t.stall(100.0, 5, false, Some(usage(400.0, 340.0, 0.0))).is_none(), "the first look was of another stretch");
        t.follow();
        assert!(t.stall(500.0, 6, true, Some(usage(600.0, 400.0, 0.0))).is_none(), "never looked at, nor read idle before: unknown");
    }
}
