//! rloop: live per-scope event-loop busy time for Node.js.
//!
//! The JS async hooks (js/attribution/hooks.js) charge busy time to slots in the [`ledger`], a
//! Float64Array over memory this addon reads from any thread. The [`aggregator`] turns the
//! ledger's cumulative counters into rolling windows; [`shared`] is one thread's monitor
//! state, and the [`registry`] holds every thread's and the thread that closes windows on
//! time, even while a loop is blocked.
//! `binding` is the N-API surface and `uv` the libuv handle that marks the loop idle; both
//! need a Node process to link against, so unit tests leave them out.

#[path = "attribution/aggregator.rs"]
mod aggregator;
#[path = "stalls/blame.rs"]
mod blame;
#[path = "runtime/clock.rs"]
mod clock;
#[path = "attribution/keys.rs"]
mod keys;
#[path = "stalls/lag.rs"]
mod lag;
#[path = "attribution/ledger.rs"]
mod ledger;
mod metrics;
#[path = "attribution/names.rs"]
mod names;
#[path = "capture/recording.rs"]
mod recording;
#[path = "runtime/registry.rs"]
mod registry;
#[path = "capture/report.rs"]
mod report;
#[cfg(not(test))]
#[cfg_attr(not(windows), path = "capture/signals.rs")]
#[cfg_attr(windows, path = "capture/signals_windows.rs")]
mod signals;
#[path = "runtime/shared.rs"]
mod shared;
#[path = "attribution/slots.rs"]
mod slots;
#[path = "attribution/window.rs"]
mod window;

#[cfg(not(test))]
#[path = "monitor.rs"]
mod binding;
#[cfg(not(test))]
#[path = "runtime/uv.rs"]
mod uv;
