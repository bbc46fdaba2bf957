//! The idle mark and teardown, the addon's only libuv code.
//!
//! A prepare handle runs just before the loop blocks for I/O: it charges the running interval
//! and marks the ledger idle, so waiting is never charged to the last scope (the JS hooks
//! leave an interval open between callbacks of one scope to save clock reads), and it ends the
//! loop's busy stretch, reporting a stall. An async cleanup hook closes the handle when a
//! worker's environment goes away without `stop()`, and finishes the captures its JS could not.

use std::ffi::c_void;
use std::os::raw::c_int;
use std::ptr;
use std::sync::Arc;

use napi::sys;
use serde_json::Value;

use super::gc_hooks::GcHooks;
use super::registry;
use super::shared::Shared;

pub type StallSink = Box<dyn Fn(&Value)>;

/// Room for a `uv_prepare_t` (120 bytes on x86-64 in every libuv Node ships).
#[repr(C, align(8))]
struct UvPrepare([u64; 32]);

// Exported by the node binary; resolved by the dynamic loader when the addon is loaded.
#[cfg(unix)]
extern "C" {
    fn uv_prepare_init(event_loop: *mut sys::uv_loop_s, handle: *mut UvPrepare) -> c_int;
    fn uv_prepare_start(handle: *mut UvPrepare, cb: unsafe extern "C" fn(*mut UvPrepare)) -> c_int;
    fn uv_prepare_stop(handle: *mut UvPrepare) -> c_int;
    fn uv_unref(handle: *mut UvPrepare);
    fn uv_close(handle: *mut UvPrepare, cb: unsafe extern "C" fn(*mut UvPrepare));
}

#[cfg(windows)]
use host_uv::*;

/// node.exe exports libuv too, but no import library names node.exe for a GNU-built addon:
/// the functions are looked up in the host process on first use. Missing ones fail
/// `uv_prepare_init`, so the others are only called once all were found.
#[cfg(windows)]
mod host_uv {
    use super::UvPrepare;
    use napi::sys;
    use std::mem::transmute_copy;
    use std::os::raw::c_int;
    use std::sync::OnceLock;
    use windows_sys::Win32::Foundation::HMODULE;
    use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};

    type Callback = unsafe extern "C" fn(*mut UvPrepare);
    struct Uv {
        prepare_init: unsafe extern "C" fn(*mut sys::uv_loop_s, *mut UvPrepare) -> c_int,
        prepare_start: unsafe extern "C" fn(*mut UvPrepare, Callback) -> c_int,
        prepare_stop: unsafe extern "C" fn(*mut UvPrepare) -> c_int,
        unref: unsafe extern "C" fn(*mut UvPrepare),
        close: unsafe extern "C" fn(*mut UvPrepare, Callback),
    }

    /// # Safety
    /// `F` is the function pointer type of the export `name` (NUL-terminated).
    unsafe fn find<F>(host: HMODULE, name: &[u8]) -> Option<F> {
        let f = GetProcAddress(host, name.as_ptr())?;
        Some(transmute_copy(&f))
    }

    fn uv() -> Option<&'static Uv> {
        static UV: OnceLock<Option<Uv>> = OnceLock::new();
        UV.get_or_init(|| unsafe {
            let host = GetModuleHandleW(std::ptr::null());
            Some(Uv {
                prepare_init: find(host, b"uv_prepare_init\0")?,
                prepare_start: find(host, b"uv_prepare_start\0")?,
                prepare_stop: find(host, b"uv_prepare_stop\0")?,
                unref: find(host, b"uv_unref\0")?,
                close: find(host, b"uv_close\0")?,
            })
        })
        .as_ref()
    }

    pub unsafe fn uv_prepare_init(event_loop: *mut sys::uv_loop_s, handle: *mut UvPrepare) -> c_int {
        uv().map_or(-1, |uv| (uv.prepare_init)(event_loop, handle))
    }
    pub unsafe fn uv_prepare_start(handle: *mut UvPrepare, cb: Callback) -> c_int {
        (uv().unwrap().prepare_start)(handle, cb)
    }
    pub unsafe fn uv_prepare_stop(handle: *mut UvPrepare) -> c_int {
        (uv().unwrap().prepare_stop)(handle)
    }
    pub unsafe fn uv_unref(handle: *mut UvPrepare) {
        (uv().unwrap().unref)(handle)
    }
    pub unsafe fn uv_close(handle: *mut UvPrepare, cb: Callback) {
        (uv().unwrap().close)(handle, cb)
    }
}

/// A monitor's hold on its thread: the prepare handle, the ledger buffer, the cleanup hook.
/// Lives on the heap from `attach` until libuv has closed the handle.
#[repr(C)]
pub struct Attachment {
    // First field, so a handle pointer is an attachment pointer.
    handle: UvPrepare,
    env: sys::napi_env,
    shared: Arc<Shared>,
    /// Told of each stall as the loop leaves it.
    on_stall: Option<StallSink>,
    buffer: sys::napi_ref,
    /// V8's GC callbacks that read the ledger: removed before the buffer is released.
    gc: Option<GcHooks>,
    cleanup: sys::napi_async_cleanup_hook_handle,
    closing: bool,
}

fn check(what: &str, status: c_int) -> napi::Result<()> {
    if status == 0 {
        Ok(())
    } else {
        Err(napi::Error::from_reason(format!("rloop: {what} failed ({status})")))
    }
}

/// Starts the idle mark on `env`'s loop, registers the monitor for other threads and arranges
/// teardown with the environment. Takes `buffer`, a strong reference to the ledger's
/// ArrayBuffer, released on detach, and `gc`, removed then.
///
/// # Safety
/// Call on the thread that owns `env`; `shared`'s ledger (and `gc`'s) must view the memory
/// `buffer` keeps alive.
pub unsafe fn attach(env: sys::napi_env, shared: Arc<Shared>, buffer: sys::napi_ref, gc: Option<GcHooks>) -> napi::Result<*mut Attachment> {
    let mut event_loop = ptr::null_mut();
    if let Err(e) = check("napi_get_uv_event_loop", sys::napi_get_uv_event_loop(env, &mut event_loop)) {
        if let Some(gc) = gc {
            gc.remove();
        }
        return Err(e);
    }
    let a = Box::into_raw(Box::new(Attachment {
        handle: UvPrepare([0; 32]),
        env,
        shared,
        on_stall: None,
        buffer,
        gc,
        cleanup: ptr::null_mut(),
        closing: false,
    }));
    let h = ptr::addr_of_mut!((*a).handle);
    if let Err(e) = check("uv_prepare_init", uv_prepare_init(event_loop, h)) {
        let a = Box::from_raw(a); // never initialised: libuv does not know it
        if let Some(gc) = a.gc {
            gc.remove();
        }
        return Err(e);
    }
    uv_prepare_start(h, on_prepare);
    uv_unref(h); // the mark must not keep the process alive
    let status = sys::napi_add_async_cleanup_hook(env, Some(on_env_teardown), a.cast(), &mut (*a).cleanup);
    if status != sys::Status::napi_ok {
        detach(a);
        return Err(napi::Error::from_reason("rloop: napi_add_async_cleanup_hook failed"));
    }
    registry::register((*a).shared.clone());
    Ok(a)
}

/// Sets or clears who is told of each stall; the old sink is dropped here.
///
/// # Safety
/// `a` comes from `attach` and is not yet detached; call on the owning thread.
pub unsafe fn set_stall_sink(a: *mut Attachment, sink: Option<StallSink>) {
    if !(*a).closing {
        (*a).on_stall = sink;
    }
}

/// Stops all reads of the ledger, releases the buffer and closes the handle. Idempotent
/// until libuv frees the attachment in `on_closed`.
///
/// # Safety
/// `a` comes from `attach` and the close has not completed; call on the owning thread.
pub unsafe fn detach(a: *mut Attachment) {
    let at = &mut *a;
    if at.closing {
        return;
    }
    at.closing = true;
    registry::unregister(&at.shared);
    at.shared.detach();
    if let Some(gc) = at.gc.take() {
        gc.remove();
    }
    sys::napi_delete_reference(at.env, at.buffer);
    let h = ptr::addr_of_mut!(at.handle);
    uv_prepare_stop(h);
    uv_close(h, on_closed);
}

unsafe extern "C" fn on_prepare(h: *mut UvPrepare) {
    let a = &*(h as *const Attachment);
    // A panic must not unwind into libuv; losing one idle mark only blurs one interval.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if let (Some(stall), Some(sink)) = (a.shared.idle_mark(), &a.on_stall) {
            sink(&stall);
        }
    }));
}

unsafe extern "C" fn on_closed(h: *mut UvPrepare) {
    let a = Box::from_raw(h as *mut Attachment);
    if !a.cleanup.is_null() {
        // Tells Node this environment's teardown may go on (or unregisters, after stop()).
        sys::napi_remove_async_cleanup_hook(a.cleanup);
    }
}

unsafe extern "C" fn on_env_teardown(_handle: sys::napi_async_cleanup_hook_handle, arg: *mut c_void) {
    let a: *mut Attachment = arg.cast();
    // Its JS is gone: a capture still running (a worker terminated mid-capture) is finished here.
    // The main thread's captures end in its 'exit' listener, before teardown.
    // SAFETY: from `attach`; libuv frees it only after the close `detach` starts.
    let at = &*a;
    if !at.closing {
        let (reason, why) = if at.shared.thread_id == 0 { ("exit", "the thread ended before its JS finished the report") } else { ("terminated", "worker terminated mid-capture") };
        crate::capture::report::finish_thread(&at.shared, reason, why);
    }
    crate::capture::signals::disarm(at.shared.thread_id);
    detach(a);
}
