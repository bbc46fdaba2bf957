//! One thread's monitor, as js/monitor.js holds it: attached to the thread's loop, reading its
//! ledger's windows, recording for captures. The N-API surface of each concern is its folder's
//! napi.rs; this class ties them to one thread.

use std::ptr;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::sys;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;
use serde_json::Value;

use crate::attribution::aggregator::{Aggregator, Config, Totals};
use crate::attribution::ledger::{self, Ledger};
use crate::attribution::napi::{add_scope, bind_key, rescope_key};
use crate::attribution::window::json::{JsonWindows, LiveJson};
use crate::boundary::{check, raw_function, to_json, Callback};
use crate::runtime::clock::Clock;
use crate::runtime::gc_hooks::GcHooks;
use crate::runtime::heap_after_gc::AfterGc;
use crate::runtime::shared::Shared;
use crate::runtime::uv::{self, Attachment};

/// Options as validated by js/options.js.
#[napi(object)]
pub struct MonitorOptions {
    pub thread_id: u32,
    pub window_ms: f64,
    pub history: u32,
    pub max_scopes: u32,
    pub key_slots: u32,
    pub max_keys: u32,
    pub worst_keys: u32,
    /// `performance.now() - monotonicMs()` on the calling thread.
    pub clock_offset_ms: f64,
    pub time_origin: f64,
    /// Stalls at least this long are lag events; absent: no lag tracking.
    pub lag_threshold_ms: Option<f64>,
}

#[napi(object)]
pub struct AfterGcReading {
    pub count: u32,
    pub heap_used: f64,
}

#[napi(object)]
pub struct HeapAfterGcReading {
    pub major: AfterGcReading,
    pub minor: AfterGcReading,
}

/// One thread's monitor. Created by js/monitor.js, which owns the ledger buffer.
#[napi]
pub struct NativeMonitor {
    shared: Arc<Shared>,
    /// Null once stopped; freed by libuv after the close.
    attachment: *mut Attachment,
}

#[napi]
impl NativeMonitor {
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, ledger: Unknown, options: MonitorOptions) -> Result<Self> {
        let cfg = Config {
            window_ms: options.window_ms,
            history: options.history as usize,
            max_scopes: options.max_scopes as usize,
            key_slots: options.key_slots as usize,
            max_keys: options.max_keys as usize,
            worst_keys: options.worst_keys as usize,
            time_origin: options.time_origin,
        };
        let slots = cfg.slots();
        let raw_env = env.raw();
        let (cells, buffer) = unsafe {
            let mut data = ptr::null_mut();
            let mut len = 0usize;
            check(sys::napi_get_arraybuffer_info(raw_env, ledger.raw(), &mut data, &mut len), "ledger must be an ArrayBuffer")?;
            if len != ledger::cells(slots) * 8 || (data as usize) % 8 != 0 {
                return Err(Error::new(Status::InvalidArg, format!("ledger must hold {} f64 cells", ledger::cells(slots))));
            }
            let mut buffer = ptr::null_mut();
            check(sys::napi_create_reference(raw_env, ledger.raw(), 1, &mut buffer), "napi_create_reference")?;
            (data as *const AtomicU64, buffer)
        };
        let clock = Clock::new(options.clock_offset_ms);
        // SAFETY: `buffer` keeps the ArrayBuffer alive until `uv::detach`, which first makes
        // the view unreachable (Shared::detach, handle stopped).
        let ledger = unsafe { Ledger::from_raw(cells, slots) };
        ledger.open_window(1);
        let shared = Shared::new(options.thread_id, clock, cfg, ledger, options.lag_threshold_ms);
        // A stall's collections, only where stalls are tracked. SAFETY: this thread's isolate; the
        // view is the ledger's, read until `uv::detach` removes the hooks, before the buffer goes.
        let gc = options.lag_threshold_ms.and_then(|_| unsafe { GcHooks::install(shared.clone(), Ledger::from_raw(cells, slots)) });
        let attachment = unsafe { uv::attach(raw_env, shared.clone(), buffer, gc)? };
        Ok(NativeMonitor { shared, attachment })
    }

    /// A function `addScope(name)` that registers a scope name and returns its slot (1,
    /// `(other)`, for a new name past `maxScopes`; see `Aggregator::add_scope`). Raw N-API, as
    /// `keyBinder`: once the names are full it runs for every `scope()`.
    #[napi(catch_unwind)]
    pub fn scope_adder(&self, env: Env) -> Result<Unknown<'static>> {
        raw_function(env, "addScope", add_scope, &self.shared)
    }

    /// A function `bindKey(slot, scope, key)` that binds key slot `slot` to `key` of the scope
    /// in slot `scope`. Raw N-API rather than a `#[napi]` method: it runs once per keyed request
    /// or message, and a generated method's instance checks and borrow bookkeeping cost more
    /// than the binding itself (≈ 1.5 µs a call, measured on addScope).
    #[napi(catch_unwind)]
    pub fn key_binder(&self, env: Env) -> Result<Unknown<'static>> {
        raw_function(env, "bindKey", bind_key, &self.shared)
    }

    /// A function `rescopeKey(slot, scope)` that moves the key bound to key slot `slot` to the
    /// scope in slot `scope`, with its current window so far. Raw N-API, as `keyBinder`: it
    /// runs once per request routed after it began.
    #[napi(catch_unwind)]
    pub fn key_rescoper(&self, env: Env) -> Result<Unknown<'static>> {
        raw_function(env, "rescopeKey", rescope_key, &self.shared)
    }

    /// The heap used after the newest major and minor GC, and how many of each ran; null where
    /// V8's GC callbacks are not installed (no lag tracking, or V8's names not found).
    #[napi(catch_unwind)]
    pub fn heap_after_gc(&self) -> Option<HeapAfterGcReading> {
        let (major, minor) = self.shared.heap_after_gc.read()?;
        let of = |k: AfterGc| AfterGcReading { count: k.count, heap_used: k.heap_used as f64 };
        Some(HeapAfterGcReading { major: of(major), minor: of(minor) })
    }

    /// The live window (the one open now, read so far), with the last complete one as `last`; JSON.
    #[napi(catch_unwind)]
    pub fn live_window(&self) -> Result<String> {
        // Read under the lock, written out after it.
        let (current, last, cfg, overflowed, dropped) = self.live(|agg, ledger, now| (agg.measure(ledger, now), agg.last(), agg.config().clone(), agg.scopes_overflowed(), agg.history_dropped()))?;
        let origin = cfg.time_origin;
        to_json(&LiveJson { current: current.json(origin), window_ms: cfg.window_ms, scopes_overflowed: overflowed, history_dropped: dropped, last: last.as_ref().map(|w| w.json(origin)) })
    }

    /// Complete windows with `seq` greater than `after`, oldest first; JSON.
    #[napi(catch_unwind)]
    pub fn history(&self, after: f64) -> Result<String> {
        // The windows are shared: taken under the lock, written out after it.
        let (windows, origin) = self.live(|agg, _, _| (agg.history().filter(|w| w.seq as f64 > after).cloned().collect::<Vec<_>>(), agg.config().time_origin))?;
        to_json(&JsonWindows(&windows, origin))
    }

    /// Busy time per scope since start, the current window included; JSON.
    #[napi(catch_unwind)]
    pub fn totals(&self) -> Result<String> {
        to_json(&self.live(|agg, ledger, now| Totals::read(agg, ledger, now))?)
    }

    /// Sets (a function) or clears (null) who receives each lag event, as JSON, when the loop
    /// leaves a stall. The thread-safe function exists only while set: Monitor sets it only
    /// while someone listens for 'lag'.
    #[napi(catch_unwind)]
    pub fn on_lag(&mut self, f: Option<Callback<String>>) {
        let sink = f.map(|f| -> uv::StallSink {
            Box::new(move |event: &Value| {
                if let Ok(s) = serde_json::to_string(event) {
                    f.call(s, ThreadsafeFunctionCallMode::NonBlocking);
                }
            })
        });
        if !self.attachment.is_null() {
            // SAFETY: live until stop(); only this (the loop's) thread touches the sink.
            unsafe { uv::set_stall_sink(self.attachment, sink) };
        }
    }

    /// Starts a recording of every window closed and every stall from now (a capture's data,
    /// bounded: see src/capture/recording.rs); returns its id for takeRecording. `draft`, JSON:
    /// the report so far, for the addon to finish and write if the thread's JS cannot
    /// (src/capture/report.rs).
    #[napi(catch_unwind)]
    pub fn record(&self, draft: Option<String>) -> Result<u32> {
        let draft = draft.map(|f| serde_json::from_str(&f)).transpose().map_err(|e| Error::new(Status::InvalidArg, format!("rloop: report draft: {e}")))?;
        Ok(self.shared.record(draft))
    }

    /// Adds slow I/O event `event` (JSON, redacted) to recording `id`, for the report the addon
    /// writes if the thread's JS cannot; ignored for a recording without a draft.
    #[napi(catch_unwind)]
    pub fn record_io(&self, id: u32, event: String) -> Result<()> {
        let event = serde_json::from_str(&event).map_err(|e| Error::new(Status::InvalidArg, format!("rloop: slow I/O event: {e}")))?;
        self.shared.record_io(id, event);
        Ok(())
    }

    /// Ends recording `id`: `{ windows, lag: { events, dropped } }` as JSON, or null if unknown.
    #[napi(catch_unwind)]
    pub fn take_recording(&self, id: u32) -> Result<Option<String>> {
        Ok(self.shared.take_recording(id))
    }

    /// When the next window is in the history, in `performance.now()` ms of this thread: when the
    /// current one is due to close, or now while a close is being built.
    #[napi(catch_unwind)]
    pub fn next_due(&self) -> Result<f64> {
        self.live(|agg, _, _| agg.next_kept())
    }

    /// The `seq` of the last complete window (0 before the first).
    #[napi(catch_unwind)]
    pub fn last_seq(&self) -> Result<f64> {
        self.live(|agg, _, _| agg.last().map_or(0.0, |w| w.seq as f64))
    }

    /// Detaches from the loop: no more reads of the ledger, idle mark closed. Idempotent.
    #[napi(catch_unwind)]
    pub fn stop(&mut self) {
        let a = std::mem::replace(&mut self.attachment, ptr::null_mut());
        if !a.is_null() {
            // SAFETY: from `attach`, and only stop() or env teardown (after which no JS runs) detach it.
            unsafe { uv::detach(a) };
        }
    }

    fn live<R>(&self, f: impl FnOnce(&mut Aggregator, &Ledger, f64) -> R) -> Result<R> {
        self.shared.with(f).ok_or_else(|| Error::new(Status::GenericFailure, "rloop: monitor is stopped"))
    }
}
