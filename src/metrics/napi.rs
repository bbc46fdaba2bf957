//! The N-API surface of metrics: the endpoint, the families as JSON for the JS adapters, and
//! slow I/O pushed from JS.

use std::net::ToSocketAddrs;

use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;

use crate::boundary::{to_json, Callback};

use super::server::{Routes, Server};
use super::{collect, http, pull, text};

/// Asked for a profile as `[id, kind, seconds, asked]`, `kind` 0 CPU or 1 heap, `asked` in
/// `monotonicMs()`.
type OnProfile = Callback<Vec<f64>>;

/// The endpoint, serving every monitored thread of the process. Closed by `close()` or when
/// collected.
#[napi]
pub struct MetricsServer {
    server: Server,
}

#[napi]
impl MetricsServer {
    /// Listens on `host`:`port` (0: any free port) and answers GET `path` with the top
    /// `top_scopes` scopes of each thread, every request needing `token` where given; with
    /// `on_profile`, GET /debug/pprof/profile and /debug/pprof/heap call it (see `OnProfile`),
    /// and `answer(id, …)` responds. Options as validated by js/metrics/options.js.
    #[napi(constructor, catch_unwind)]
    pub fn new(host: String, port: u32, path: String, top_scopes: u32, token: Option<String>, on_profile: Option<OnProfile>) -> Result<Self> {
        let fail = |e: &dyn std::fmt::Display| Error::from_reason(format!("rloop: metrics: cannot listen on {host}:{port}: {e}"));
        let addr = (host.as_str(), port as u16).to_socket_addrs().map_err(|e| fail(&e))?.next().ok_or_else(|| fail(&"no address"))?;
        let reader = collect::Reader::new(top_scopes as usize);
        let pull = on_profile.map(|f| pull::Pull {
            ask: Box::new(move |id, kind, seconds| {
                f.call(vec![f64::from(id), f64::from(kind), f64::from(seconds), crate::runtime::clock::monotonic_ms()], ThreadsafeFunctionCallMode::NonBlocking);
            }),
            slack: pull::SLACK,
        });
        let routes = Routes { path, render: Box::new(move || text::render(&reader.families())), token, pull };
        let server = Server::bind(addr, routes).map_err(|e| fail(&e))?;
        Ok(MetricsServer { server })
    }

    /// Responds to pulled profile `id`: `status` ("200 OK"), the body and its type.
    #[napi(catch_unwind)]
    pub fn answer(&self, id: u32, status: String, content_type: String, body: Buffer) {
        self.server.answer(id, http::response(&status, &content_type, "", &body, false));
    }

    /// The port listened on (the one chosen, for port 0).
    #[napi(getter, catch_unwind)]
    pub fn port(&self) -> u32 {
        u32::from(self.server.addr().port())
    }

    /// Stops the endpoint; the port is closed when this returns. Idempotent.
    #[napi(catch_unwind)]
    pub fn close(&mut self) {
        self.server.close();
    }
}

/// A reader of every monitored thread's metric families for a JS adapter, with the series it
/// has exposed (each adapter has its own, as the endpoint does: see src/metrics/exposure.rs).
#[napi]
pub struct MetricsReader {
    reader: collect::Reader,
}

#[napi]
impl MetricsReader {
    #[napi(constructor, catch_unwind)]
    pub fn new(top_scopes: u32) -> Self {
        MetricsReader { reader: collect::Reader::new(top_scopes as usize) }
    }

    /// The families (src/metrics/family.rs `to_json`) as JSON.
    #[napi(catch_unwind)]
    pub fn read(&self) -> Result<String> {
        let all: Vec<serde_json::Value> = self.reader.families().iter().map(|f| f.to_json()).collect();
        to_json(&all)
    }
}

/// Garbage collections of monitored thread `thread_id`: kinds (index into `gc::KINDS`) and seconds, pairwise.
#[napi(catch_unwind)]
pub fn record_gc(thread_id: u32, kinds: Vec<u32>, seconds: Vec<f64>) {
    if let Some(m) = crate::runtime::registry::find(thread_id) {
        for (&kind, &s) in kinds.iter().zip(&seconds) {
            m.gc.record(kind as usize, s);
        }
    }
}

/// One slow I/O operation of monitored thread `thread_id`: its type, ms taken, and whether it failed.
#[napi(catch_unwind)]
pub fn record_slow_io(thread_id: u32, kind: String, duration_ms: f64, failed: bool) {
    if let Some(m) = crate::runtime::registry::find(thread_id) {
        m.slow_io.record(&kind, duration_ms / 1e3, failed);
    }
}
