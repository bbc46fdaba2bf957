//! Captures: what one keeps of a monitor (`recording`), and the report the addon finishes
//! itself when the thread's JS cannot (`report`), on a signal (`signals`) or a worker's end.

#[cfg(not(test))]
pub mod napi;
pub mod recording;
pub mod report;
#[cfg(not(test))]
#[cfg_attr(windows, path = "signals_windows.rs")]
pub mod signals;
