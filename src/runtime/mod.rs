//! The threads: one monitored thread's state (`shared`) on its clock (`clock`), attached to
//! its loop (`uv`); every thread's, and the lookout thread that closes windows on time
//! (`registry`); the pages the lookout thread frees, given back (`malloc`).

pub mod clock;
pub mod malloc;
#[cfg(not(test))]
pub mod napi;
pub mod registry;
pub mod shared;
#[cfg(not(test))]
pub mod uv;
