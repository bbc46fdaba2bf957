//! The N-API surface of the runtime: the clock JS calibrates against, and memory given back.

use napi_derive::napi;

use super::{clock, malloc};

/// Milliseconds on the process-wide monotonic clock, to calibrate `performance.now()`.
#[napi(catch_unwind)]
pub fn monotonic_ms() -> f64 {
    clock::monotonic_ms()
}

/// Returns memory glibc's malloc keeps after a burst (a heap snapshot frees as much as the heap
/// again) to the system. True if some was released.
#[napi(catch_unwind)]
pub fn trim_malloc() -> bool {
    malloc::give_back_freed()
}
