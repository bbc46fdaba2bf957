//! Metrics for Prometheus and OpenTelemetry: every monitored thread's busy time, scopes, stalls
//! and slow I/O as metric families (`collect`), rendered in the Prometheus text format (`text`)
//! by an HTTP thread of our own (`server`), so a scrape is answered while the loop is blocked.
//! The JS adapters (js/metrics/) take the same families as JSON.

mod collect;
mod exposure;
mod family;
#[cfg(test)]
mod hold_bench;
#[cfg(not(test))]
mod napi;
mod poll;
mod server;
mod slow_io;
mod text;

pub use slow_io::SlowIo;
