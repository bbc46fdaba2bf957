//! Time on the monitored thread's `performance.now()` scale, readable from any thread.
//!
//! The JS hot path stamps intervals with `performance.now()`; Rust must compare its own
//! readings with those stamps. Both sit on CLOCK_MONOTONIC (libuv's `uv_hrtime`, and
//! `Instant` on Linux), so one offset per thread, measured once at start, converts them.

use std::sync::OnceLock;
use std::time::Instant;

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Milliseconds since a process-wide epoch, on the monotonic clock.
pub fn monotonic_ms() -> f64 {
    epoch().elapsed().as_secs_f64() * 1e3
}

/// A thread's `performance.now()`, read from any thread.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    /// `performance.now() - monotonic_ms()` on the monitored thread.
    offset_ms: f64,
}

impl Clock {
    pub fn new(offset_ms: f64) -> Self {
        Clock { offset_ms }
    }

    pub fn now(&self) -> f64 {
        monotonic_ms() + self.offset_ms
    }
}

/// The CPU time a thread has used, readable from any thread while it lives: tells a thread that
/// ran (in code V8 could not interrupt) from one that waited to be scheduled. Linux only (a
/// thread's CPU clock, POSIX's pthread_getcpuclockid): elsewhere `current()` is `None`, and
/// what it would tell is reported as unknown.
#[derive(Clone, Copy, Debug)]
pub struct ThreadCpu(#[cfg(target_os = "linux")] libc::clockid_t);

#[cfg(not(target_os = "linux"))]
impl ThreadCpu {
    pub fn current() -> Option<Self> {
        None
    }

    pub fn ms(&self) -> Option<f64> {
        None
    }
}

#[cfg(target_os = "linux")]
impl ThreadCpu {
    /// The calling thread's CPU clock.
    pub fn current() -> Option<Self> {
        let mut id: libc::clockid_t = 0;
        // SAFETY: asks for the CPU clock of the calling thread into a local.
        (unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut id) } == 0).then_some(ThreadCpu(id))
    }

    /// Milliseconds of CPU the thread has used; `None` once it is gone.
    pub fn ms(&self) -> Option<f64> {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: reads a clock into a local; an id of a thread that has ended gives EINVAL.
        (unsafe { libc::clock_gettime(self.0, &mut ts) } == 0).then(|| ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6)
    }
}
