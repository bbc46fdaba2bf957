//! The N-API surface: everything here runs off the hot path (start, scope registration,
//! reads). The hot path itself is js/hooks.js writing the ledger.

use std::ptr;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::sys;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde_json::{json, Value};

use crate::aggregator::Config;
use crate::clock::{self, Clock};
use crate::ledger::{self, Ledger};
use crate::registry::{self, Shared};
use crate::uv::{self, Attachment};

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

/// A JS callback any thread may call; weak, so it never keeps a process alive.
type Callback<T> = ThreadsafeFunction<T, Unknown<'static>, T, Status, false, true>;

/// Milliseconds on the process-wide monotonic clock, to calibrate `performance.now()`.
#[napi(catch_unwind)]
pub fn monotonic_ms() -> f64 {
    clock::monotonic_ms()
}

/// The number of f64 cells a ledger needs for these options.
#[napi(catch_unwind)]
pub fn ledger_cells(max_scopes: u32, key_slots: u32) -> u32 {
    ledger::cells(config_slots(max_scopes, key_slots)) as u32
}

fn config_slots(max_scopes: u32, key_slots: u32) -> usize {
    Config { window_ms: 0.0, history: 0, max_scopes: max_scopes as usize, key_slots: key_slots as usize, max_keys: 0, worst_keys: 0, time_origin: 0.0 }.slots()
}

/// Every monitored thread's live window and last complete one.
#[napi(catch_unwind)]
pub fn threads() -> Value {
    Value::Array(registry::monitors().iter().filter_map(|m| m.describe()).collect())
}

/// Calls `on_stall(wake)` while a stall on thread `thread_id` goes on, from the watch thread;
/// the stack sampler (js/stack-sampler.js) answers with `stallStack`.
#[napi(catch_unwind)]
pub fn watch_stalls(thread_id: u32, on_stall: Callback<f64>) {
    registry::listen_for_stalls(
        thread_id,
        Some(Box::new(move |wake| {
            on_stall.call(wake, ThreadsafeFunctionCallMode::NonBlocking);
        })),
    );
}

#[napi(catch_unwind)]
pub fn unwatch_stalls(thread_id: u32) {
    registry::listen_for_stalls(thread_id, None);
}

/// Gives the stall of thread `thread_id` that woke at `wake` the frames that were blocking it.
/// False when that stall is over or has a stack already.
#[napi(catch_unwind)]
pub fn stall_stack(thread_id: u32, wake: f64, frames: Value) -> bool {
    registry::find(thread_id).is_some_and(|m| m.attach_stack(wake, frames))
}

/// Returns memory glibc's malloc keeps after a burst (a heap snapshot frees as much as the heap
/// again) to the system. True if some was released.
#[napi(catch_unwind)]
pub fn trim_malloc() -> bool {
    extern "C" {
        // glibc; this addon is built for linux-x64-gnu only.
        fn malloc_trim(pad: usize) -> std::os::raw::c_int;
    }
    // SAFETY: malloc_trim takes no pointers and is thread-safe.
    unsafe { malloc_trim(0) != 0 }
}

/// Panics, so tests can show a Rust panic reaches JS as an exception.
#[napi(js_name = "_panicForTests", catch_unwind)]
pub fn panic_for_tests() {
    panic!("rloop test panic");
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
    /// `on_lag` receives each lag event as the loop leaves the stall.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, ledger: Unknown, options: MonitorOptions, on_lag: Option<Callback<Value>>) -> Result<Self> {
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
        let shared = Shared::new(options.thread_id, clock, cfg, ledger, options.lag_threshold_ms);
        let on_stall = on_lag.map(|f| -> uv::StallSink {
            Box::new(move |event| {
                f.call(event, ThreadsafeFunctionCallMode::NonBlocking);
            })
        });
        let attachment = unsafe { uv::attach(raw_env, shared.clone(), buffer, on_stall)? };
        Ok(NativeMonitor { shared, attachment })
    }

    /// Registers a scope name; returns its slot (1, `(other)`, past `maxScopes`).
    #[napi(catch_unwind)]
    pub fn add_scope(&self, name: String) -> Result<u32> {
        self.live(|agg, _, _| agg.add_scope(&name) as u32)
    }

    /// Binds key slot `slot` to `key` of the scope in slot `scope`.
    #[napi(catch_unwind)]
    pub fn bind_key(&self, slot: u32, scope: u32, key: String) -> Result<()> {
        self.live(|agg, ledger, now| agg.bind_key(ledger, now, slot as usize, scope as usize, key))?
            .map_err(|e| Error::new(Status::InvalidArg, e))
    }

    /// The current window, read live, with the last complete one as `last`.
    #[napi(catch_unwind)]
    pub fn elu(&self) -> Result<Value> {
        self.live(|agg, ledger, now| {
            let cfg = agg.config();
            let mut v = agg.measure(ledger, now).to_json(cfg.time_origin);
            v["windowMs"] = json!(cfg.window_ms);
            v["scopesOverflowed"] = json!(agg.scopes_overflowed());
            v["last"] = agg.last().map_or(Value::Null, |w| w.to_json(cfg.time_origin));
            v
        })
    }

    /// Complete windows with `seq` greater than `after`, oldest first.
    #[napi(catch_unwind)]
    pub fn history(&self, after: f64) -> Result<Value> {
        self.live(|agg, _, _| {
            let origin = agg.config().time_origin;
            Value::Array(agg.history().filter(|w| w.seq as f64 > after).map(|w| w.to_json(origin)).collect())
        })
    }

    /// Busy time per scope since start, the current window included.
    #[napi(catch_unwind)]
    pub fn totals(&self) -> Result<Value> {
        self.live(|agg, ledger, now| {
            let scope = |(name, r): (&str, crate::ledger::Reading)| json!({ "name": name, "busyMs": r.busy_ms, "calls": r.calls });
            let mut all: Vec<Value> = agg.totals(ledger, now).into_iter().map(scope).collect();
            let unattributed = all.remove(0);
            let busy: f64 = unattributed["busyMs"].as_f64().unwrap_or(0.0) + all.iter().filter_map(|s| s["busyMs"].as_f64()).sum::<f64>();
            all.retain(|s| s["busyMs"].as_f64() > Some(0.0) || s["calls"].as_f64() > Some(0.0));
            all.sort_by(|a, b| b["busyMs"].as_f64().unwrap_or(0.0).total_cmp(&a["busyMs"].as_f64().unwrap_or(0.0)));
            json!({
                "thread": { "busyMs": busy },
                "unattributed": unattributed,
                "scopes": all,
                "scopesOverflowed": agg.scopes_overflowed(),
            })
        })
    }

    /// Starts recording which scope runs when, sampled every millisecond by the watch thread.
    #[napi(catch_unwind)]
    pub fn start_timeline(&self) {
        self.shared.start_timeline();
    }

    /// Stops recording: `[[performance.now() ms, scope name or null], ...]` at each change.
    #[napi(catch_unwind)]
    pub fn take_timeline(&self) -> Value {
        Value::Array(self.shared.take_timeline().into_iter().map(|(t, name)| json!([t, name])).collect())
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

    fn live<R>(&self, f: impl FnOnce(&mut crate::aggregator::Aggregator, &Ledger, f64) -> R) -> Result<R> {
        self.shared.with(f).ok_or_else(|| Error::new(Status::GenericFailure, "rloop: monitor is stopped"))
    }
}

fn check(status: sys::napi_status, what: &str) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error::new(Status::InvalidArg, what.to_owned()))
    }
}
