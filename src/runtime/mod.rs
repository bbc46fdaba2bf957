//! The threads: one monitored thread's state (`shared`) on its clock (`clock`), attached to
//! its loop (`uv`) and to V8's collections (`gc_hooks`); every thread's, and the lookout thread
//! that closes windows on time (`registry`); the pages the lookout thread frees, given back
//! (`malloc`); what CPU a thread got (`cpu`), throttled by its cgroup's quota (`cgroup`); the
//! heap after its GCs (`heap_after_gc`).

pub mod cgroup;
pub mod clock;
pub mod cpu;
#[cfg(not(test))]
pub mod gc_hooks;
pub mod heap_after_gc;
pub mod malloc;
#[cfg(not(test))]
pub mod napi;
pub mod registry;
pub mod shared;
#[cfg(not(test))]
pub mod uv;
