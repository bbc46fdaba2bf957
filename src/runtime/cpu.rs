//! What CPU a monitored thread got: its CPU time and its cgroup's throttling, read together
//! (`Usage`), and over a span (`Ran`). A span's wall time the thread did not run was taken
//! from it: throttled by a CPU quota, waiting for a CPU on a busy machine, or blocked in a
//! system call. Readings are syscalls (the thread's CPU clock, and a pread a cgroup level), so
//! they are taken by the lookout thread as it looks, at a window's close and as a stall ends,
//! never on the hooks' path nor at every wake.

use super::cgroup::{Throttle, Throttled};
use super::clock::ThreadCpu;

/// One reading, at `at` on the monitored thread's clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Usage {
    pub at: f64,
    pub cpu_ms: f64,
    /// `None` where the cgroup's throttling cannot be read.
    pub throttled: Option<Throttled>,
}

/// What a thread got over a span.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ran {
    /// CPU time it used.
    pub cpu_ms: f64,
    /// Of the time it did not run, what its cgroup's CPU quota throttled; `None`: unknown.
    pub throttled_ms: Option<f64>,
}

impl Ran {
    /// From reading `a` to reading `b`. Throttling is counted per CPU by the kernel (other
    /// threads of the process held back at once add to it), so it is kept within the time the
    /// thread did not run.
    pub fn between(a: &Usage, b: &Usage) -> Ran {
        let span = (b.at - a.at).max(0.0);
        let cpu_ms = (b.cpu_ms - a.cpu_ms).clamp(0.0, span);
        let throttled_ms = a.throttled.zip(b.throttled).map(|(a, b)| b.since(&a).clamp(0.0, span - cpu_ms));
        Ran { cpu_ms, throttled_ms }
    }

    /// Two neighbouring spans as one.
    pub fn plus(self, other: Ran) -> Ran {
        Ran { cpu_ms: self.cpu_ms + other.cpu_ms, throttled_ms: self.throttled_ms.zip(other.throttled_ms).map(|(a, b)| a + b) }
    }
}

/// Reads a thread's usage: its CPU clock and the process's cgroup.
#[derive(Clone, Copy)]
pub struct Meter {
    cpu: Option<ThreadCpu>,
    throttle: Option<&'static Throttle>,
}

impl Meter {
    /// For the calling thread.
    pub fn current() -> Self {
        let cpu = ThreadCpu::current();
        Meter { cpu, throttle: cpu.and_then(|_| Throttle::process()) }
    }

    /// The thread's usage now (`at`, on its clock); `None` where its CPU time cannot be read.
    pub fn read(&self, at: f64) -> Option<Usage> {
        let cpu_ms = self.cpu?.ms()?;
        Some(Usage { at, cpu_ms, throttled: self.throttle.and_then(Throttle::read) })
    }

    pub fn cpu(&self) -> Option<ThreadCpu> {
        self.cpu
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(at: f64, cpu_ms: f64, throttled: Option<f64>) -> Usage {
        Usage { at, cpu_ms, throttled: throttled.map(Throttled::one) }
    }

    #[test]
    fn a_span_ran_what_its_cpu_time_says_and_was_throttled_at_most_the_rest() {
        let r = Ran::between(&usage(100.0, 50.0, Some(10.0)), &usage(410.0, 140.0, Some(220.0)));
        assert_eq!(r, Ran { cpu_ms: 90.0, throttled_ms: Some(210.0) }, "310 ms: ran 90, throttled 210");
        let r = Ran::between(&usage(0.0, 0.0, Some(0.0)), &usage(100.0, 60.0, Some(90.0)));
        assert_eq!(r.throttled_ms, Some(40.0), "other threads held back at once count too: kept within what it did not run");
        assert_eq!(Ran::between(&usage(0.0, 0.0, None), &usage(10.0, 12.0, None)), Ran { cpu_ms: 10.0, throttled_ms: None }, "no more CPU than wall time");
        assert_eq!(Ran::between(&usage(0.0, 0.0, Some(0.0)), &usage(10.0, 5.0, None)).throttled_ms, None);
    }

    #[test]
    fn neighbouring_spans_add_up() {
        let a = Ran { cpu_ms: 5.0, throttled_ms: Some(1.0) };
        assert_eq!(a.plus(Ran { cpu_ms: 7.0, throttled_ms: Some(2.0) }), Ran { cpu_ms: 12.0, throttled_ms: Some(3.0) });
        assert_eq!(a.plus(Ran { cpu_ms: 7.0, throttled_ms: None }).throttled_ms, None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_thread_reads_its_cpu_time() {
        let m = Meter::current();
        let a = m.read(0.0).expect("Linux has thread CPU clocks");
        let t = std::time::Instant::now();
        while t.elapsed().as_millis() < 20 {}
        let b = m.read(20.0).unwrap();
        assert!(b.cpu_ms > a.cpu_ms, "{a:?} {b:?}");
    }
}
