//! The stack sampler without a worker: the lookout thread asks V8 to interrupt the monitored
//! thread (`v8::Isolate::RequestInterrupt`, public V8 API, callable from any thread), and the
//! interrupt calls the JS function `take` (js/stalls/stack-expression.js) on top of the blocking
//! code, as the inspector's `Runtime.evaluate` does for the worker sampler
//! (js/stalls/sampler-worker.js). No worker, port or handle: nothing an app's async hooks could
//! see, so it is armed at start and a process's first stall gets its stack too.
//!
//! The two V8 functions are looked up in the host process, not linked: where they are missing
//! (another ABI, a runtime that is not Node) `interruptStalls` says so and JS keeps the worker,
//! started after the first stall.

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use napi::bindgen_prelude::FromNapiValue;
use napi::sys;
use serde_json::Value;

use super::listeners;
use crate::runtime::clock::monotonic_ms;
use crate::runtime::registry;
use crate::runtime::shared::Shared;

type Isolate = *mut c_void;
type InterruptCallback = unsafe extern "C" fn(Isolate, *mut c_void);
type GetCurrent = unsafe extern "C" fn() -> Isolate;
type RequestInterrupt = unsafe extern "C" fn(Isolate, InterruptCallback, *mut c_void);

struct V8 {
    get_current: GetCurrent,
    request_interrupt: RequestInterrupt,
}

#[cfg(unix)]
const NAMES: [&[u8]; 2] = [b"_ZN2v87Isolate10GetCurrentEv\0", b"_ZN2v87Isolate16RequestInterruptEPFvPS0_PvES2_\0"];
#[cfg(windows)]
const NAMES: [&[u8]; 2] = [b"?GetCurrent@Isolate@v8@@SAPEAV12@XZ\0", b"?RequestInterrupt@Isolate@v8@@QEAAXP6AXPEAV12@PEAX@Z1@Z\0"];

/// # Safety
/// `name` is NUL-terminated.
#[cfg(unix)]
unsafe fn find(name: &[u8]) -> Option<*mut c_void> {
    let f = libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr().cast());
    (!f.is_null()).then_some(f)
}

/// # Safety
/// `name` is NUL-terminated.
#[cfg(windows)]
unsafe fn find(name: &[u8]) -> Option<*mut c_void> {
    use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
    GetProcAddress(GetModuleHandleW(ptr::null()), name.as_ptr()).map(|f| f as *mut c_void)
}

fn v8() -> Option<&'static V8> {
    static V8: OnceLock<Option<V8>> = OnceLock::new();
    V8.get_or_init(|| unsafe {
        // SAFETY: the exports are these V8 functions (Isolate::RequestInterrupt is a member: the
        // isolate is its first argument).
        let (get_current, request_interrupt) = (find(NAMES[0])?, find(NAMES[1])?);
        Some(V8 { get_current: std::mem::transmute::<*mut c_void, GetCurrent>(get_current), request_interrupt: std::mem::transmute::<*mut c_void, RequestInterrupt>(request_interrupt) })
    })
    .as_ref()
}

/// A thread armed for interrupts. `env` and `take` are used on that thread only (in `on_interrupt`
/// and `on_env_cleanup`); other threads only pass the pointer on to V8.
struct Armed {
    isolate: Isolate,
    env: sys::napi_env,
    take: sys::napi_ref,
    /// Cleared as the environment goes: an interrupt still pending then does nothing.
    alive: AtomicBool,
}

// SAFETY: see `Armed`: `isolate` is only handed to V8's thread-safe RequestInterrupt; `env` and
// `take` are touched on the owning thread.
unsafe impl Send for Armed {}
unsafe impl Sync for Armed {}

/// One stall's question, owned by the interrupt that answers it.
struct Question {
    armed: Arc<Armed>,
    monitor: Arc<Shared>,
    wake: f64,
    /// Epoch ms on the monitored thread's time base, and that thread's CPU ms then.
    asked: f64,
    cpu: Option<f64>,
}

/// Arms thread `thread_id` (the calling thread, owner of `env`): each stall noticed there from now
/// on interrupts it for `take()`, which returns `[answered, frames, trace]` or null. `origin_ms`:
/// epoch ms at `monotonic_ms()` 0 on this thread's time base. False when V8 cannot be asked.
///
/// # Safety
/// Call on the thread that owns `env`; `take` is a function.
pub unsafe fn arm(env: sys::napi_env, thread_id: u32, origin_ms: f64, take: sys::napi_value) -> bool {
    let Some(v8) = v8() else { return false };
    let isolate = (v8.get_current)();
    let mut take_ref = ptr::null_mut();
    if isolate.is_null() || sys::napi_create_reference(env, take, 1, &mut take_ref) != sys::Status::napi_ok {
        return false;
    }
    let armed = Arc::new(Armed { isolate, env, take: take_ref, alive: AtomicBool::new(true) });
    let hook = Box::into_raw(Box::new((armed.clone(), thread_id)));
    if sys::napi_add_env_cleanup_hook(env, Some(on_env_cleanup), hook.cast()) != sys::Status::napi_ok {
        drop(Box::from_raw(hook));
        sys::napi_delete_reference(env, take_ref);
        return false;
    }
    listeners::listen_for_stalls(
        thread_id,
        Some(Box::new(move |wake| {
            // The lookout thread, while the stall goes on.
            let Some(monitor) = registry::find(thread_id) else { return };
            let cpu = monitor.meter.cpu().and_then(|c| c.ms());
            let q = Box::new(Question { armed: armed.clone(), monitor, wake, asked: origin_ms + monotonic_ms(), cpu });
            // SAFETY: the isolate lives until the environment's cleanup, which removes this
            // listener first (under the listeners' lock this runs under).
            (v8.request_interrupt)(armed.isolate, on_interrupt, Box::into_raw(q).cast());
        })),
    );
    true
}

unsafe extern "C" fn on_env_cleanup(arg: *mut c_void) {
    let (armed, thread_id) = *Box::from_raw(arg as *mut (Arc<Armed>, u32));
    listeners::listen_for_stalls(thread_id, None);
    armed.alive.store(false, SeqCst);
    sys::napi_delete_reference(armed.env, armed.take);
}

unsafe extern "C" fn on_interrupt(_isolate: Isolate, data: *mut c_void) {
    let q = Box::from_raw(data as *mut Question);
    // A panic must not unwind into V8; a stall without its stack is all that is lost.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if q.armed.alive.load(SeqCst) {
            answer(&q);
        }
    }));
}

/// On the monitored thread, on top of the code it interrupted.
unsafe fn answer(q: &Question) {
    let env = q.armed.env;
    let mut scope = ptr::null_mut();
    if sys::napi_open_handle_scope(env, &mut scope) != sys::Status::napi_ok {
        return;
    }
    let (mut take, mut global, mut result) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
    let called = sys::napi_get_reference_value(env, q.armed.take, &mut take) == sys::Status::napi_ok
        && sys::napi_get_global(env, &mut global) == sys::Status::napi_ok
        && sys::napi_call_function(env, global, take, 0, ptr::null(), &mut result) == sys::Status::napi_ok;
    if !called {
        // Left pending, it would be thrown into the app by the addon's next call.
        let mut thrown = ptr::null_mut();
        sys::napi_get_and_clear_last_exception(env, &mut thrown);
    } else if let Ok(Value::Array(a)) = Value::from_napi_value(env, result) {
        let ran = q.cpu.zip(q.monitor.meter.cpu().and_then(|c| c.ms())).map(|(before, now)| now - before);
        if let [Value::Number(answered), frames, trace] = a.as_slice() {
            let answered = answered.as_f64().unwrap_or(f64::NAN);
            // Never waits on the state lock for long: this thread may be the one holding it.
            q.monitor.attach_stack_within(Duration::from_millis(20), q.wake, q.asked, answered, ran.unwrap_or(answered - q.asked), frames.clone(), trace.clone());
        }
    }
    sys::napi_close_handle_scope(env, scope);
}
