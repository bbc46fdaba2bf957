//! Every thread's monitor, readable from any thread, and the watch thread that closes windows
//! on time and watches for stalls, whether or not the monitored loop is blocked.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use crate::clock::monotonic_ms;
use crate::shared::Shared;

/// Windows (and closes' scratch, see `lasting`) freed since malloc last gave pages back.
static FREED: AtomicUsize = AtomicUsize::new(0);

/// glibc's malloc keeps what the watch thread frees in that thread's arena, for good: once the
/// windows it freed add up to a full history's bound, give the pages back.
pub(crate) fn give_back_in_time(freed: usize) {
    if add_up(&FREED, freed) {
        give_back_freed();
    }
}

/// What of a close's scratch (`Pending::scratch_bytes`) counts as freed for good: a close of
/// a few thousand slots leaves blocks the next close reuses, but one of tens of thousands (a
/// key ring churning) leaves megabytes that malloc keeps between closes (bench/memory.md).
pub(crate) fn lasting(scratch: usize) -> usize {
    if scratch >= SCRATCH_KEPT { scratch } else { 0 }
}
const SCRATCH_KEPT: usize = 1 << 20;

/// Adds `freed` to `since`; true (and `since` starts again) once it reaches `HISTORY_BYTES`.
fn add_up(since: &AtomicUsize, freed: usize) -> bool {
    let due = since.fetch_add(freed, Relaxed) + freed >= crate::aggregator::HISTORY_BYTES;
    if due {
        since.store(0, Relaxed);
    }
    due
}

/// Returns the pages glibc's malloc keeps after frees to the system. True if some were.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn give_back_freed() -> bool {
    extern "C" {
        fn malloc_trim(pad: usize) -> std::os::raw::c_int;
    }
    // SAFETY: malloc_trim takes no pointers and is thread-safe.
    unsafe { malloc_trim(0) != 0 }
}

/// Other allocators (musl's, Windows', macOS's) give freed pages back on their own: nothing
/// to ask, nothing released here.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn give_back_freed() -> bool {
    false
}

/// Called with the `wake` of a stall on the thread it watches, while the stall goes on.
pub type StallListener = Box<dyn Fn(f64) + Send + Sync>;

static MONITORS: Mutex<Vec<Arc<Shared>>> = Mutex::new(Vec::new());
static STALL_LISTENERS: Mutex<Option<HashMap<u32, StallListener>>> = Mutex::new(None);
static WAKE: Condvar = Condvar::new();
/// Set when the watch thread must look again before it waits (a monitor is new):
/// a notification sent while it was busy, not waiting, would otherwise be lost.
static NUDGED: AtomicBool = AtomicBool::new(false);

fn nudge() {
    NUDGED.store(true, Relaxed);
    let _waiting = MONITORS.lock(); // the watch thread checks NUDGED under this lock, then waits
    WAKE.notify_one();
}

pub fn register(shared: Arc<Shared>) {
    static WATCHER: OnceLock<()> = OnceLock::new();
    WATCHER.get_or_init(|| {
        std::thread::Builder::new().name("rloop-watch".into()).spawn(watch_loop).expect("spawn the rloop watch thread");
    });
    MONITORS.lock().push(shared);
    nudge();
}

pub fn unregister(shared: &Arc<Shared>) {
    MONITORS.lock().retain(|s| !Arc::ptr_eq(s, shared));
}

pub fn monitors() -> Vec<Arc<Shared>> {
    MONITORS.lock().clone()
}

pub fn find(thread_id: u32) -> Option<Arc<Shared>> {
    MONITORS.lock().iter().find(|s| s.thread_id == thread_id).cloned()
}

/// Whether thread `thread_id`'s loop has been busy without a break for `ms` or more.
/// Only signal reports ask, and Windows has none.
#[cfg(unix)]
pub fn blocked_for(thread_id: u32, ms: f64) -> bool {
    find(thread_id).and_then(|m| m.busy_for_ms()).is_some_and(|b| b >= ms)
}

pub(crate) fn has_stall_listener(thread_id: u32) -> bool {
    STALL_LISTENERS.lock().as_ref().is_some_and(|l| l.contains_key(&thread_id))
}

/// Sets (or with `None` removes) who is told of stalls on `thread_id`.
pub fn listen_for_stalls(thread_id: u32, listener: Option<StallListener>) {
    let mut all = STALL_LISTENERS.lock();
    let map = all.get_or_insert_with(HashMap::new);
    match listener {
        Some(l) => map.insert(thread_id, l),
        None => map.remove(&thread_id),
    };
}

fn watch_loop() {
    loop {
        let now = monotonic_ms();
        let mut next = now + 250.0;
        for m in monitors() {
            // A panic here must not end window closing and watching for every thread.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                if let Some(due) = m.tick() {
                    next = next.min(due);
                }
                if let Some(after) = m.look_in() {
                    next = next.min(now + after);
                    if let Some(wake) = m.watch() {
                        if let Some(listener) = STALL_LISTENERS.lock().as_ref().and_then(|l| l.get(&m.thread_id)) {
                            listener(wake);
                        }
                    }
                }
            }));
        }
        let wait = (next - monotonic_ms()).clamp(0.0, 250.0);
        let mut list = MONITORS.lock();
        if !NUDGED.swap(false, Relaxed) {
            WAKE.wait_for(&mut list, Duration::from_secs_f64(wait / 1e3));
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregator::Config;
    use crate::clock::Clock;
    use serde_json::{json, Value};
    use crate::ledger::test_support::Memory;
    use std::sync::atomic::{AtomicU64, Ordering::SeqCst};

    fn cfg(window_ms: f64) -> Config {
        Config { window_ms, history: 10, max_scopes: 4, key_slots: 4, max_keys: 4, worst_keys: 2, time_origin: 0.0 }
    }

    #[test]
    fn pages_are_given_back_once_a_full_history_was_freed() {
        let since = AtomicUsize::new(0);
        let bound = crate::aggregator::HISTORY_BYTES;
        assert!(!add_up(&since, bound / 2) && !add_up(&since, bound / 2 - 1));
        assert!(add_up(&since, 1));
        assert_eq!(since.load(Relaxed), 0, "counting starts again");
        assert!(add_up(&since, bound * 3), "one wide eviction is enough");
    }

    #[test]
    fn windows_close_while_nobody_calls_in() {
        let mem = Memory::new(cfg(20.0).slots());
        let clock = Clock::new(0.0);
        let shared = Shared::new(7, clock, cfg(20.0), mem.ledger(), None);
        let x = shared.with(|agg, _, _| agg.add_scope("x")).unwrap();
        mem.switch_to(x, clock.now()); // "blocked" in x from now on
        let recording = shared.record(None);
        register(shared.clone());
        std::thread::sleep(Duration::from_millis(120));
        let d = serde_json::to_value(shared.describe().unwrap()).unwrap();
        let r: Value = serde_json::from_str(&shared.take_recording(recording).expect("a recording")).unwrap();
        let seqs: Vec<u64> = r["windows"].as_array().unwrap().iter().map(|w| w["seq"].as_u64().unwrap()).collect();
        assert!(seqs.len() >= 3 && seqs.windows(2).all(|p| p[1] == p[0] + 1), "every window closed, in order: {seqs:?}");
        assert!(shared.take_recording(recording).is_none(), "taken: freed");
        unregister(&shared);
        let last = &d["last"];
        assert!(last["seq"].as_u64().unwrap() >= 3, "{d}");
        assert_eq!(last["scopes"][0]["name"], "x");
        assert!(last["scopes"][0]["elu"].as_f64().unwrap() > 0.99, "{d}");
        assert!(d["current"]["scopes"][0]["elu"].as_f64().unwrap() > 0.99, "{d}");
        shared.detach();
        assert!(shared.describe().is_none());
    }

    #[test]
    fn a_stall_is_noticed_while_it_lasts_and_reported_at_the_idle_mark() {
        let mem = Memory::new(cfg(1000.0).slots());
        let clock = Clock::new(0.0);
        let shared = Shared::new(8, clock, cfg(1000.0), mem.ledger(), Some(30.0));
        let x = shared.with(|agg, _, _| agg.add_scope("blocker")).unwrap();
        let noticed = Arc::new(AtomicU64::new(0));
        let n = noticed.clone();
        let s = shared.clone();
        listen_for_stalls(8, Some(Box::new(move |wake| {
            n.store(wake.to_bits(), SeqCst);
            let now = clock.now();
            s.attach_stack(wake, now, now + 1.0, 1.0, json!([{ "functionName": "spin" }]), serde_json::Value::Null);
        })));
        register(shared.clone());
        let recording = shared.record(None);
        mem.set_running(-1);
        let start = clock.now();
        mem.switch_to(x, start);
        std::thread::sleep(Duration::from_millis(80));
        assert_eq!(f64::from_bits(noticed.load(SeqCst)), start, "noticed while still blocked");
        let event = shared.idle().expect("a stall");
        unregister(&shared);
        listen_for_stalls(8, None);
        assert_eq!(event["scope"], "blocker");
        assert_eq!(event["thread"], 8);
        assert_eq!(event["stack"][0]["functionName"], "spin");
        let lag = event["lagMs"].as_f64().unwrap();
        assert!((80.0..200.0).contains(&lag), "{event}");
        let after = event["noticedAfterMs"].as_f64().unwrap();
        // At the threshold, plus what a loaded machine delays the watch thread (within the 80 ms).
        assert!((30.0..80.0).contains(&after), "{event}");
        assert!(shared.idle().is_none(), "idle now: nothing more to report");
        let r: Value = serde_json::from_str(&shared.take_recording(recording).unwrap()).unwrap();
        assert_eq!(r["lag"]["events"][0], event, "the recording has the stall");
    }
}
