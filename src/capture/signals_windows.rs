//! Signals on Windows: no native listening (no sigaction; Ctrl-C reaches Node as a console
//! event). `arm` says so; the caller goes on without it, and a signal ends the process as it
//! would have, without the reports (the exit code and the app's output unchanged).

use std::os::raw::c_int;
use std::sync::Arc;

/// Asks one thread's JS to write its reports for this signal; calls `done` once it has.
pub type Finisher = Arc<dyn Fn(&'static str, Box<dyn FnOnce() + Send>) + Send + Sync>;

pub const SIGNALS: [(c_int, &str); 2] = [(2, "SIGINT"), (15, "SIGTERM")];

pub fn arm(_thread_id: u32, _signals: &[c_int], _finisher: Finisher) -> std::io::Result<()> {
    Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "not on Windows"))
}

pub fn disarm(_thread_id: u32) {}

pub fn rearm() {}
