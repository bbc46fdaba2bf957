//! What the N-API surfaces share: bulk data as JSON, callbacks any thread may call, and the raw
//! N-API a few calls need (functions that carry a thread's `Shared`, status checks). Everything
//! here runs off the hot path, which is js/attribution/hooks.js writing the ledger.

use std::ptr;
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::sys;
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;
use smol_str::SmolStr;

use crate::runtime::shared::Shared;

/// A JS callback any thread may call; weak, so it never keeps a process alive.
pub type Callback<T> = ThreadsafeFunction<T, Unknown<'static>, T, Status, false, true>;

/// Bulk data crosses N-API as one JSON string (js/native.js parses it): napi-rs's conversion
/// of a `Value` into JS objects stops at a million values, which a few hundred keyed scopes
/// over a default history reach.
pub fn to_json(v: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string(v).map_err(|e| Error::new(Status::GenericFailure, format!("rloop: {e}")))
}

/// Panics, so tests can show a Rust panic reaches JS as an exception.
#[napi(js_name = "_panicForTests", catch_unwind)]
pub fn panic_for_tests() {
    panic!("rloop test panic");
}

/// The signature of a raw N-API callback.
pub type RawCallback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// A JS function `name` calling `cb` with `shared` as its data, freed with the function.
pub fn raw_function(env: Env, name: &str, cb: RawCallback, shared: &Arc<Shared>) -> Result<Unknown<'static>> {
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
///
/// # Safety
/// Call from a function `raw_function` made, with the `env` and `info` it was called with.
pub unsafe fn raw_call<const N: usize>(
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

/// A status inside `raw_call`: an error says `what` failed.
pub fn ok(status: sys::napi_status, what: &str) -> std::result::Result<(), String> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(what.to_owned())
    }
}

/// A string argument of at most `MAX_TEXT_BYTES` in UTF-8; one of up to 23 bytes (a key, mostly)
/// is held inline, allocating nothing.
///
/// # Safety
/// `env` and `value` come from the call being served.
pub unsafe fn text(env: sys::napi_env, value: sys::napi_value, what: &str) -> std::result::Result<SmolStr, String> {
    // Not zeroed: N-API writes the `len` bytes read back (and a NUL), per call on the hot path.
    let mut buf = std::mem::MaybeUninit::<[u8; MAX_TEXT_BYTES + 1]>::uninit();
    let mut len = 0usize;
    ok(sys::napi_get_value_string_utf8(env, value, buf.as_mut_ptr().cast(), MAX_TEXT_BYTES + 1, &mut len), what)?;
    Ok(SmolStr::new(String::from_utf8_lossy(std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), len))))
}

unsafe extern "C" fn drop_shared(_env: sys::napi_env, data: *mut std::ffi::c_void, _hint: *mut std::ffi::c_void) {
    drop(Box::from_raw(data as *mut Arc<Shared>));
}

/// A status outside `raw_call`: an error says `what` failed.
pub fn check(status: sys::napi_status, what: &str) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error::new(Status::InvalidArg, what.to_owned()))
    }
}
