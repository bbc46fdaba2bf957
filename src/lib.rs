//! rloop: live per-scope event-loop busy time for Node.js.
//!
//! The JS async hooks (js/attribution/hooks.js) charge busy time to slots in the [`ledger`], a
//! Float64Array over memory this addon reads from any thread. The [`aggregator`] turns the
//! ledger's cumulative counters into rolling windows; [`shared`] is one thread's monitor
//! state, and the [`registry`] holds every thread's and the thread that closes windows on
//! time, even while a loop is blocked.
//! `binding` is the N-API surface and `uv` the libuv handle that marks the loop idle; both
//! need a Node process to link against, so unit tests leave them out.

mod aggregator;
mod blame;
mod clock;
mod keys;
mod lag;
mod ledger;
mod metrics;
mod names;
mod recording;
mod registry;
mod report;
#[cfg(not(test))]
#[cfg_attr(windows, path = "signals_windows.rs")]
mod signals;
mod shared;
mod slots;
mod window;

#[cfg(not(test))]
mod binding;
#[cfg(not(test))]
mod uv;
