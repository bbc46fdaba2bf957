//! The N-API surface of captures beyond `NativeMonitor`'s recordings: native signal handling
//! while captures run (js/capture/exit-guard.js).

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;

use crate::boundary::Callback;

use super::signals;

/// Has `finish(signal)` run on thread `thread_id` (the caller) when one of `signals` (SIGINT,
/// SIGTERM) arrives, with no JS listener; then the signal takes effect as it would have
/// (src/capture/signals.rs).
#[napi(catch_unwind)]
pub fn arm_signals(thread_id: u32, signals: Vec<String>, finish: Callback<String>) -> Result<()> {
    let wanted: Vec<_> = signals.iter().filter_map(|n| signals::SIGNALS.iter().find(|(_, s)| s == n).map(|(sig, _)| *sig)).collect();
    let finisher: signals::Finisher = Arc::new(move |name: &'static str, done: Box<dyn FnOnce() + Send>| {
        finish.call_with_return_value(name.to_owned(), ThreadsafeFunctionCallMode::NonBlocking, move |_, _| {
            done();
            Ok(())
        });
    });
    signals::arm(thread_id, &wanted, finisher).map_err(|e| Error::from_reason(format!("rloop: cannot listen for signals: {e}")))
}

/// Stops thread `thread_id`'s listening for signals: with the last thread's, the actions
/// `armSignals` replaced are back.
#[napi(catch_unwind)]
pub fn disarm_signals(thread_id: u32) {
    signals::disarm(thread_id);
}

/// Listens again, at once, for the armed signals whose last app listener is gone (libuv left
/// SIG_DFL): an app listener that removes itself and raises the signal again (`process.once`,
/// signal-exit) must find rloop listening, not the default action.
#[napi(catch_unwind)]
pub fn rearm_signals() {
    signals::rearm();
}
