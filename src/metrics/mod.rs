//! Metrics for Prometheus and OpenTelemetry: every monitored thread's busy time, scopes, stalls
//! and slow I/O as metric families (`collect`), rendered in the Prometheus text format (`text`)
//! by an HTTP thread of our own (`server`), so a scrape is answered while the loop is blocked;
//! the same thread serves CPU profiles pulled in Go's convention (`pull`).
//! The JS adapters (js/metrics/) take the same families as JSON.

mod collect;
mod exposure;
mod family;
mod gc;
#[cfg(test)]
mod hold_bench;
mod http;
#[cfg(not(test))]
mod napi;
mod poll;
mod pull;
mod server;
mod slow_io;
mod text;

pub use gc::{Gc, KINDS as GC_KINDS};
pub use slow_io::SlowIo;
