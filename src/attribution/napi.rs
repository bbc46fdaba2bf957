//! The N-API surface of attribution: the ledger's layout and size, every thread's windows, and
//! the raw functions that register scope names, bind keys and move them to another scope
//! (`NativeMonitor::scope_adder`, `key_binder`, `key_rescoper`), which run on the monitored
//! thread for every new name or key.

use std::ptr;

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

use crate::boundary::{ok, raw_call, text, to_json};
use crate::runtime::registry;

use super::aggregator::{Config, FIRST_SCOPE, OTHER, RLOOP, UNATTRIBUTED};
use super::ledger;

/// Where the hooks write what this addon reads: the ledger's header cells, the switch count's
/// i32 in the `RUNNING` cell, and the slots every ledger has (see src/attribution/ledger.rs).
/// js/attribution/ledger.js takes it once, as it loads.
#[napi(object)]
pub struct Layout {
    pub running: u32,
    pub since: u32,
    pub wake: u32,
    pub want: u32,
    pub window: u32,
    pub header: u32,
    pub seq: u32,
    pub unattributed: u32,
    pub other: u32,
    pub rloop: u32,
    pub first_scope: u32,
}

/// The ledger's layout, as this addon reads it.
#[napi(catch_unwind)]
pub fn layout() -> Layout {
    let n = |i: usize| i as u32;
    Layout {
        running: n(ledger::RUNNING),
        since: n(ledger::SINCE),
        wake: n(ledger::WAKE),
        want: n(ledger::WANT),
        window: n(ledger::WINDOW),
        header: n(ledger::HEADER),
        seq: n(ledger::SEQ),
        unattributed: n(UNATTRIBUTED),
        other: n(OTHER),
        rloop: n(RLOOP),
        first_scope: n(FIRST_SCOPE),
    }
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

const STOPPED: &str = "monitor is stopped";

/// `addScope(name)`: registers a scope name and returns its slot (see `Aggregator::add_scope`).
pub unsafe extern "C" fn add_scope(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    raw_call::<1>(env, info, "addScope", |argv, shared| {
        let name = text(env, argv[0], "name must be a string")?;
        let slot = shared.with_ledger(|agg, _| agg.add_scope(&name)).ok_or(STOPPED)?;
        let mut value = ptr::null_mut();
        ok(sys::napi_create_uint32(env, slot as u32, &mut value), "result")?;
        Ok(value)
    })
}

/// `bindKey(slot, scope, key)`: binds key slot `slot` to `key` of the scope in slot `scope`
/// (see `Aggregator::bind_key`).
pub unsafe extern "C" fn bind_key(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    raw_call::<3>(env, info, "bindKey", |argv, shared| {
        let (mut slot, mut scope) = (0u32, 0u32);
        ok(sys::napi_get_value_uint32(env, argv[0], &mut slot), "slot must be a number")?;
        ok(sys::napi_get_value_uint32(env, argv[1], &mut scope), "scope must be a number")?;
        let key = text(env, argv[2], "key must be a string")?;
        shared.with_ledger(|agg, ledger| agg.bind_key(ledger, slot as usize, scope as usize, key)).ok_or(STOPPED)??;
        Ok(ptr::null_mut()) // undefined
    })
}

/// `rescopeKey(slot, scope)`: moves the key bound to key slot `slot` to the scope in slot `scope`
/// (see `Aggregator::rescope_key`).
pub unsafe extern "C" fn rescope_key(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    raw_call::<2>(env, info, "rescopeKey", |argv, shared| {
        let (mut slot, mut scope) = (0u32, 0u32);
        ok(sys::napi_get_value_uint32(env, argv[0], &mut slot), "slot must be a number")?;
        ok(sys::napi_get_value_uint32(env, argv[1], &mut scope), "scope must be a number")?;
        shared.with_ledger(|agg, _| agg.rescope_key(slot as usize, scope as usize)).ok_or(STOPPED)??;
        Ok(ptr::null_mut()) // undefined
    })
}
