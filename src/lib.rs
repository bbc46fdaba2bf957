//! rloop: live per-scope event-loop busy time for Node.js.
//!
//! The JS async hooks (js/attribution/hooks.js) charge busy time to slots in the ledger, a
//! Float64Array over memory this addon reads from any thread; [`attribution`] turns its
//! cumulative counters into rolling windows. [`runtime`] holds every monitored thread's state
//! and the thread that closes windows on time, even while a loop is blocked; [`stalls`] names
//! stalls and the code behind them, [`capture`] keeps what a capture records and finishes its
//! report when JS cannot, and [`metrics`] serves every thread's figures to Prometheus and
//! OpenTelemetry.
//! Each folder owns its N-API functions (its `napi.rs`); `monitor` is the `NativeMonitor` class
//! and `boundary` what the N-API code shares. They need a Node process to link against, so unit
//! tests leave them out.

mod attribution;
mod capture;
mod metrics;
mod runtime;
mod stalls;

#[cfg(not(test))]
mod boundary;
#[cfg(not(test))]
mod monitor;
