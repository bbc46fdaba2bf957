//! Every thread's monitor, readable from any thread, and the ticker thread that closes
//! windows on time whether or not the monitored loop is blocked.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use serde_json::{json, Value};

use crate::aggregator::{Aggregator, Config};
use crate::clock::{monotonic_ms, Clock};
use crate::ledger::Ledger;

/// What one monitored thread shares with the others.
pub struct Shared {
    pub thread_id: u32,
    pub clock: Clock,
    /// Loop iterations seen by the idle mark (the prepare handle); the monitored thread counts.
    pub loops: AtomicU64,
    state: Mutex<State>,
}

struct State {
    /// `None` once detached: the memory behind it may be gone.
    ledger: Option<Ledger>,
    agg: Aggregator,
}

impl Shared {
    pub fn new(thread_id: u32, clock: Clock, cfg: Config, ledger: Ledger) -> Arc<Self> {
        let agg = Aggregator::new(cfg, clock.now());
        Arc::new(Shared { thread_id, clock, loops: AtomicU64::new(0), state: Mutex::new(State { ledger: Some(ledger), agg }) })
    }

    /// Runs `f` on the aggregator and ledger at this thread's `now`; `None` once detached.
    pub fn with<R>(&self, f: impl FnOnce(&mut Aggregator, &Ledger, f64) -> R) -> Option<R> {
        let mut st = self.state.lock();
        let State { ledger, agg } = &mut *st;
        let ledger = ledger.as_ref()?;
        Some(f(agg, ledger, self.clock.now()))
    }

    /// Stops every read of the ledger; after this its memory may be freed.
    pub fn detach(&self) {
        self.state.lock().ledger = None;
    }

    /// Closes the window if it is due; returns when the next one is due (monotonic ms).
    fn tick(&self) -> Option<f64> {
        self.with(|agg, ledger, now| {
            if now >= agg.due() {
                agg.close(ledger, now);
            }
            agg.due() - now + monotonic_ms()
        })
    }

    /// `{ threadId, windowMs, current, last }`, the current window read live.
    pub fn describe(&self) -> Option<Value> {
        self.with(|agg, ledger, now| {
            let origin = agg.config().time_origin;
            json!({
                "threadId": self.thread_id,
                "windowMs": agg.config().window_ms,
                "current": agg.measure(ledger, now).to_json(origin),
                "last": agg.last().map(|w| w.to_json(origin)),
            })
        })
    }
}

static MONITORS: Mutex<Vec<Arc<Shared>>> = Mutex::new(Vec::new());
static WAKE: Condvar = Condvar::new();

pub fn register(shared: Arc<Shared>) {
    static TICKER: OnceLock<()> = OnceLock::new();
    TICKER.get_or_init(|| {
        std::thread::Builder::new().name("rloop-windows".into()).spawn(ticker).expect("spawn the rloop window thread");
    });
    MONITORS.lock().push(shared);
    WAKE.notify_one();
}

pub fn unregister(shared: &Arc<Shared>) {
    MONITORS.lock().retain(|s| !Arc::ptr_eq(s, shared));
}

pub fn monitors() -> Vec<Arc<Shared>> {
    MONITORS.lock().clone()
}

fn ticker() {
    loop {
        let mut next = monotonic_ms() + 250.0;
        for m in monitors() {
            // A panic here must not end window closing for every thread.
            if let Ok(Some(due)) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.tick())) {
                next = next.min(due);
            }
        }
        let wait = (next - monotonic_ms()).clamp(0.0, 250.0);
        let mut list = MONITORS.lock();
        WAKE.wait_for(&mut list, Duration::from_secs_f64(wait / 1e3));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::test_support::Memory;

    #[test]
    fn ticker_closes_windows_while_nobody_calls_in() {
        let cfg = Config { window_ms: 20.0, history: 10, max_scopes: 4, key_slots: 4, max_keys: 4, worst_keys: 2, time_origin: 0.0 };
        let mem = Memory::new(cfg.slots());
        let clock = Clock::new(0.0);
        let shared = Shared::new(7, clock, cfg, mem.ledger());
        let x = shared.with(|agg, _, _| agg.add_scope("x")).unwrap();
        mem.switch_to(x, clock.now()); // "blocked" in x from now on
        register(shared.clone());
        std::thread::sleep(Duration::from_millis(120));
        let d = shared.describe().unwrap();
        unregister(&shared);
        let last = &d["last"];
        assert!(last["seq"].as_u64().unwrap() >= 3, "{d}");
        assert_eq!(last["scopes"][0]["name"], "x");
        assert!(last["scopes"][0]["elu"].as_f64().unwrap() > 0.99, "{d}");
        assert!(d["current"]["scopes"][0]["elu"].as_f64().unwrap() > 0.99, "{d}");
        shared.detach();
        assert!(shared.describe().is_none());
    }
}
