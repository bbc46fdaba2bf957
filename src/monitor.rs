//! The N-API surface: everything here runs off the hot path (start, scope registration,
//! reads). The hot path itself is js/attribution/hooks.js writing the ledger.

use std::ptr;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::sys;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde_json::Value;

use crate::aggregator::Config;
use crate::clock::{self, Clock};
use crate::ledger::{self, Ledger};
use crate::registry;
use crate::shared::Shared;
use crate::signals;
use crate::uv::{self, Attachment};
use crate::window::LiveJson;

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

/// Every monitored thread's live window and last complete one, as JSON.
#[napi(catch_unwind)]
pub fn threads() -> Result<String> {
    // Each thread's windows are taken under its lock and written out after it.
    let described: Vec<_> = registry::monitors().iter().filter_map(|m| m.describe()).collect();
    to_json(&described)
}

/// Bulk data crosses N-API as one JSON string (js/native.js parses it): napi-rs's conversion
/// of a `Value` into JS objects stops at a million values, which a few hundred keyed scopes
/// over a default history reach.
fn to_json(v: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string(v).map_err(|e| Error::new(Status::GenericFailure, format!("rloop: {e}")))
}

/// Calls `on_stall(wake)` while a stall on thread `thread_id` goes on, from the watch thread;
/// the stack sampler (js/stalls/sampler-worker.js) answers with `stallStack`.
#[napi(catch_unwind)]
pub fn watch_stalls(thread_id: u32, on_stall: Callback<f64>) {
    registry::listen_for_stalls(
        thread_id,
        Some(Box::new(move |wake| {
            on_stall.call(wake, ThreadsafeFunctionCallMode::NonBlocking);
        })),
    );
}

/// Gives the stall of thread `thread_id` that woke at `wake` the frames taken while it blocked,
/// asked for and answered at these epoch ms, the thread having run `ran_ms` of CPU in between
/// (`threadCpuMs`), with the OpenTelemetry span active there or null. False when that stall is
/// over or has a stack already.
#[napi(catch_unwind)]
pub fn stall_stack(thread_id: u32, wake: f64, asked: f64, answered: f64, ran_ms: f64, frames: Value, trace: Value) -> bool {
    registry::find(thread_id).is_some_and(|m| m.attach_stack(wake, asked, answered, ran_ms, frames, trace))
}

/// Milliseconds of CPU monitored thread `thread_id` has used, or null.
#[napi(catch_unwind)]
pub fn thread_cpu_ms(thread_id: u32) -> Option<f64> {
    registry::find(thread_id).and_then(|m| m.cpu?.ms())
}

/// Has `finish(signal)` run on thread `thread_id` (the caller) when one of `signals` (SIGINT,
/// SIGTERM) arrives, with no JS listener; then the signal takes effect as it would have
/// (src/signals.rs).
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

/// Returns memory glibc's malloc keeps after a burst (a heap snapshot frees as much as the heap
/// again) to the system. True if some was released.
#[napi(catch_unwind)]
pub fn trim_malloc() -> bool {
    registry::give_back_freed()
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
        let attachment = unsafe { uv::attach(raw_env, shared.clone(), buffer)? };
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

    /// The current window, read live, with the last complete one as `last`; JSON.
    #[napi(catch_unwind)]
    pub fn elu(&self) -> Result<String> {
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
        serde_json::to_string(&crate::window::JsonWindows(&windows, origin)).map_err(|e| Error::new(Status::GenericFailure, format!("rloop: {e}")))
    }

    /// Busy time per scope since start, the current window included; JSON.
    #[napi(catch_unwind)]
    pub fn totals(&self) -> Result<String> {
        to_json(&self.live(|agg, ledger, now| crate::report::Totals::read(agg, ledger, now))?)
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
    /// bounded: see src/recording.rs); returns its id for takeRecording. `frame`, JSON: the
    /// report so far, for the addon to finish and write if the thread's JS cannot (src/report.rs).
    #[napi(catch_unwind)]
    pub fn record(&self, frame: Option<String>) -> Result<u32> {
        let frame = frame.map(|f| serde_json::from_str(&f)).transpose().map_err(|e| Error::new(Status::InvalidArg, format!("rloop: report frame: {e}")))?;
        Ok(self.shared.record(frame))
    }

    /// Adds slow I/O event `event` (JSON, redacted) to recording `id`, for the report the addon
    /// writes if the thread's JS cannot; ignored for a recording without a frame.
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

    fn live<R>(&self, f: impl FnOnce(&mut crate::aggregator::Aggregator, &Ledger, f64) -> R) -> Result<R> {
        self.shared.with(f).ok_or_else(|| Error::new(Status::GenericFailure, "rloop: monitor is stopped"))
    }
}

/// A JS function `name` calling `cb` with `shared` as its data, freed with the function.
fn raw_function(env: Env, name: &str, cb: unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value, shared: &Arc<Shared>) -> Result<Unknown<'static>> {
    let data = Box::into_raw(Box::new(shared.clone()));
    let raw = env.raw();
    // SAFETY: `data` is freed by the finalizer of the function that carries it, once.
    unsafe {
        let mut f = ptr::null_mut();
        if let Err(e) = check(sys::napi_create_function(raw, name.as_ptr().cast(), name.len() as isize, Some(cb), data.cast(), &mut f), "napi_create_function")
            .and_then(|()| check(sys::napi_add_finalizer(raw, f, data.cast(), Some(drop_shared), ptr::null_mut(), ptr::null_mut()), "napi_add_finalizer"))
        {
            drop(Box::from_raw(data));
            return Err(e);
        }
        Ok(Unknown::from_raw_unchecked(raw, f))
    }
}

/// Longest name or key in UTF-8: js/options.js takes names of at most 256 UTF-16 units and cuts
/// keys to as many, at most 3 bytes each.
const MAX_TEXT_BYTES: usize = 1024;

/// Runs `f` with a raw function's `N` arguments and its `Shared`; its error, or a panic, is
/// thrown as `rloop: <what>: …`, and its value returned.
unsafe fn raw_call<const N: usize>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    what: &str,
    f: impl FnOnce(&[sys::napi_value; N], &Shared) -> std::result::Result<sys::napi_value, String>,
) -> sys::napi_value {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut argc = N;
        let mut argv = [ptr::null_mut(); N];
        let mut data = ptr::null_mut();
        ok(sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), &mut data), "arguments")?;
        // SAFETY: `data` is the Arc that raw_function boxed, freed only by the function's finalizer.
        f(&argv, &*(data as *const Arc<Shared>))
    }));
    let message = match result {
        Ok(Ok(value)) => return value,
        Ok(Err(e)) => format!("rloop: {what}: {e}"),
        Err(_) => format!("rloop: panic in {what}"),
    };
    let message = std::ffi::CString::new(message).unwrap_or_default();
    sys::napi_throw_error(env, ptr::null(), message.as_ptr());
    ptr::null_mut()
}

fn ok(status: sys::napi_status, what: &str) -> std::result::Result<(), String> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(what.to_owned())
    }
}

/// A string argument of at most `MAX_TEXT_BYTES` in UTF-8.
unsafe fn text(env: sys::napi_env, value: sys::napi_value, what: &str) -> std::result::Result<String, String> {
    // Not zeroed: N-API writes the `len` bytes read back (and a NUL), per call on the hot path.
    let mut buf = std::mem::MaybeUninit::<[u8; MAX_TEXT_BYTES + 1]>::uninit();
    let mut len = 0usize;
    ok(sys::napi_get_value_string_utf8(env, value, buf.as_mut_ptr().cast(), MAX_TEXT_BYTES + 1, &mut len), what)?;
    Ok(String::from_utf8_lossy(std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), len)).into_owned())
}

const STOPPED: &str = "monitor is stopped";

unsafe extern "C" fn add_scope(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    raw_call::<1>(env, info, "addScope", |argv, shared| {
        let name = text(env, argv[0], "name must be a string")?;
        let slot = shared.with_ledger(|agg, _| agg.add_scope(&name)).ok_or(STOPPED)?;
        let mut value = ptr::null_mut();
        ok(sys::napi_create_uint32(env, slot as u32, &mut value), "result")?;
        Ok(value)
    })
}

unsafe extern "C" fn bind_key(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    raw_call::<3>(env, info, "bindKey", |argv, shared| {
        let (mut slot, mut scope) = (0u32, 0u32);
        ok(sys::napi_get_value_uint32(env, argv[0], &mut slot), "slot must be a number")?;
        ok(sys::napi_get_value_uint32(env, argv[1], &mut scope), "scope must be a number")?;
        let key = text(env, argv[2], "key must be a string")?;
        shared.with_ledger(|agg, ledger| agg.bind_key(ledger, slot as usize, scope as usize, key)).ok_or(STOPPED)??;
        Ok(ptr::null_mut()) // undefined
    })
}

unsafe extern "C" fn drop_shared(_env: sys::napi_env, data: *mut std::ffi::c_void, _hint: *mut std::ffi::c_void) {
    drop(Box::from_raw(data as *mut Arc<Shared>));
}

fn check(status: sys::napi_status, what: &str) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error::new(Status::InvalidArg, what.to_owned()))
    }
}
