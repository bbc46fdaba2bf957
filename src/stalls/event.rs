//! A stall's event: what `Monitor`'s 'lag' listeners get and a capture records, as JSON.

use serde_json::{json, Value};

use crate::attribution::aggregator::{Aggregator, RLOOP, UNATTRIBUTED};
use super::blame::blame;
use super::lag::Stall;

/// The lag event of `stall` on thread `thread_id`, its slots named by `agg`.
pub fn stall_event(thread_id: u32, agg: &Aggregator, stall: Stall) -> Value {
    // rloop's own work is in no scope: its part of a stall is said by JS (`rloopMs`).
    let name = |slot: usize| (slot != UNATTRIBUTED && slot != RLOOP).then(|| agg.describe_slot(slot).0.to_string());
    let (_, key) = agg.describe_slot(stall.slot);
    let other = stall.noticed_slot.filter(|&s| agg.scope_of(s) != agg.scope_of(stall.slot)).map(|s| name(s).unwrap_or_else(|| "(unattributed)".into()));
    let trace = stall.stack.as_ref().map_or(Value::Null, |t| t.trace.clone());
    let ran = stall.ran;
    let b = blame(stall.start, stall.stack, other.as_deref());
    // The span of the code that blocked, only where the stack is known to be that code's.
    let trace = if b.stack.is_some() { trace } else { Value::Null };
    // Who ran inside the stall, from the lookout thread's samples (every few ms from half the threshold on).
    let sampled: u32 = stall.samples.iter().map(|(_, n)| n).sum();
    let mut scopes: Vec<Value> = stall
        .samples
        .iter()
        .map(|&(slot, n)| json!({ "scope": name(slot), "key": agg.describe_slot(slot).1, "ms": stall.lag_ms * f64::from(n) / f64::from(sampled) }))
        .collect();
    // A capture with a profile may put the profile's samples in its place (js/stalls/from-profile.js).
    let from = b.stack.as_ref().map(|_| "sampler");
    scopes.sort_by(|a, b| b["ms"].as_f64().unwrap_or(0.0).total_cmp(&a["ms"].as_f64().unwrap_or(0.0)));
    json!({
        "lagMs": stall.lag_ms,
        "at": agg.config().time_origin + stall.start,
        "thread": thread_id,
        "scope": name(stall.slot),
        "key": key,
        "stack": b.stack,
        "stackFrom": from,
        "trace": trace,
        "noticedAfterMs": stall.noticed_after_ms,
        "stackTakenAfterMs": b.taken_after_ms,
        "stackSeen": b.seen,
        "stackNote": b.note,
        "native": b.native,
        "scopes": scopes,
        "atStart": stall.at_start,
        "cpuMs": ran.map(|r| r.ran.cpu_ms),
        "throttledMs": ran.and_then(|r| r.ran.throttled_ms),
        "cpuFromMs": ran.map(|r| r.from_ms),
        "gc": stall.gc,
    })
}
