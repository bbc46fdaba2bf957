//! Every thread's monitor, readable from any thread, and the lookout thread that closes windows
//! on time and looks for stalls, whether or not the monitored loop is blocked.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use crate::stalls::listeners;
use super::clock::monotonic_ms;
use super::shared::Shared;

static MONITORS: Mutex<Vec<Arc<Shared>>> = Mutex::new(Vec::new());
static LOOKOUT_WAKE: Condvar = Condvar::new();
/// Set when the lookout thread must look again before it waits (a monitor is new):
/// a notification sent while it was busy, not waiting, would otherwise be lost.
static NUDGED: AtomicBool = AtomicBool::new(false);

fn nudge() {
    NUDGED.store(true, Relaxed);
    let _waiting = MONITORS.lock(); // the lookout thread checks NUDGED under this lock, then waits
    LOOKOUT_WAKE.notify_one();
}

pub fn register(shared: Arc<Shared>) {
    static LOOKOUT: OnceLock<()> = OnceLock::new();
    LOOKOUT.get_or_init(|| {
        std::thread::Builder::new().name("rloop-lookout".into()).spawn(lookout_loop).expect("spawn the rloop lookout thread");
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

fn lookout_loop() {
    loop {
        let now = monotonic_ms();
        let mut next = now + 250.0;
        for m in monitors() {
            // A panic here must not end window closing and looking for every thread.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                if let Some(due) = m.tick() {
                    next = next.min(due);
                }
                if let Some(after) = m.look_in() {
                    next = next.min(now + after);
                    if let Some(wake) = m.look() {
                        listeners::noticed(m.thread_id, wake);
                    }
                }
            }));
        }
        let wait = (next - monotonic_ms()).clamp(0.0, 250.0);
        let mut list = MONITORS.lock();
        if !NUDGED.swap(false, Relaxed) {
            LOOKOUT_WAKE.wait_for(&mut list, Duration::from_secs_f64(wait / 1e3));
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::aggregator::Config;
    use crate::runtime::clock::Clock;
    use serde_json::{json, Value};
    use crate::attribution::ledger::test_support::Memory;
    use std::sync::atomic::{AtomicU64, Ordering::SeqCst};

    fn cfg(window_ms: f64) -> Config {
        Config { window_ms, history: 10, max_scopes: 4, key_slots: 4, max_keys: 4, worst_keys: 2, time_origin: 0.0 }
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
        if cfg!(target_os = "linux") {
            // This thread slept while "blocked": of x's busy time it ran next to nothing.
            let (busy, cpu) = (last["scopes"][0]["busyMs"].as_f64().unwrap(), last["scopes"][0]["cpuMs"].as_f64().unwrap());
            assert!(cpu <= 0.2 * busy && cpu <= last["thread"]["cpuMs"].as_f64().unwrap() + 1e-9, "{d}");
        }
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
        listeners::listen_for_stalls(8, Some(Box::new(move |wake| {
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
        let event = shared.idle_mark().expect("a stall");
        unregister(&shared);
        listeners::listen_for_stalls(8, None);
        assert_eq!(event["scope"], "blocker");
        assert_eq!(event["thread"], 8);
        assert_eq!(event["stack"][0]["functionName"], "spin");
        let lag = event["lagMs"].as_f64().unwrap();
        assert!((80.0..200.0).contains(&lag), "{event}");
        let after = event["noticedAfterMs"].as_f64().unwrap();
        // At the threshold, plus what a loaded machine delays the lookout thread (within the 80 ms).
        assert!((30.0..80.0).contains(&after), "{event}");
        // The thread slept through it: it ran next to nothing of it, measured from the wake or
        // from the lookout thread's first look at the latest.
        if cfg!(target_os = "linux") {
            let (cpu, from) = (event["cpuMs"].as_f64().unwrap(), event["cpuFromMs"].as_f64().unwrap());
            assert!(cpu < 5.0 && from <= after, "{event}");
        }
        assert_eq!(event["gc"], Value::Null, "no GC callbacks here: unknown");
        assert!(shared.idle_mark().is_none(), "idle now: nothing more to report");
        let r: Value = serde_json::from_str(&shared.take_recording(recording).unwrap()).unwrap();
        assert_eq!(r["lag"]["events"][0], event, "the recording has the stall");
    }
}
