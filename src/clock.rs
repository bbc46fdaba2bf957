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
