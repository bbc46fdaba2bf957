//! The N-API surface of stalls, for the stack samplers: the interrupt (src/stalls/interrupt.rs),
//! armed by its own thread, and the worker (js/stalls/sampler-worker.js), which names the thread
//! it listens to by id.

use napi::bindgen_prelude::{JsValue, Unknown};
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi::Env;
use napi_derive::napi;
use serde_json::Value;

use crate::boundary::Callback;
use crate::runtime::registry;

use super::{interrupt, listeners};

/// Arms the calling thread `thread_id`: each stall noticed there interrupts it for `take()`
/// (js/stalls/stack-expression.js). `originMs`: epoch ms at `monotonicMs()` 0 on this thread's
/// time base. False when V8 cannot be asked: then the worker sampler is the way.
#[napi(catch_unwind)]
pub fn interrupt_stalls(env: Env, thread_id: u32, origin_ms: f64, take: Unknown) -> bool {
    // SAFETY: called from JS on the thread that owns `env`; `take` is checked a function there.
    unsafe { interrupt::arm(env.raw(), thread_id, origin_ms, take.raw()) }
}

/// Calls `on_stall(wake)` while a stall on thread `thread_id` goes on, from the lookout thread;
/// the stack sampler (js/stalls/sampler-worker.js) answers with `stallStack`.
#[napi(catch_unwind)]
pub fn listen_for_stalls(thread_id: u32, on_stall: Callback<f64>) {
    listeners::listen_for_stalls(
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
    registry::find(thread_id).and_then(|m| m.meter.cpu()?.ms())
}
