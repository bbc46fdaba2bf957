//! Every thread's monitor, readable from any thread, and the watch thread that closes windows
//! on time and watches for stalls, whether or not the monitored loop is blocked.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use serde_json::{json, Value};

use crate::aggregator::{Aggregator, Config};
use crate::clock::{monotonic_ms, Clock, ThreadCpu};
use crate::blame::blame;
use crate::lag::{Lag, Stall, Taken};
use crate::metrics::SlowIo;
use crate::ledger::Ledger;
use crate::recording::Recording;

/// How often the watch thread looks at a loop busy for half the lag threshold or more: a stall
/// is noticed at most this long after it crosses the threshold.
const WATCH_EVERY_MS: f64 = 5.0;

/// What one monitored thread shares with the others.
pub struct Shared {
    pub thread_id: u32,
    pub clock: Clock,
    /// The monitored thread's CPU clock (Shared is made on that thread).
    pub cpu: Option<ThreadCpu>,
    /// When the monitor started, on `clock`: the idle time of metrics counts from here.
    pub started: f64,
    /// Slow I/O by type, pushed from JS per slow operation (rare), read by metrics scrapes.
    pub slow_io: SlowIo,
    state: Mutex<State>,
}

struct State {
    /// `None` once detached: the memory behind it may be gone.
    ledger: Option<Ledger>,
    agg: Aggregator,
    lag: Option<Lag>,
    /// Running recordings (one per capture) by id, and the id the next one gets.
    recordings: Vec<(u32, Recording)>,
    next_recording: u32,
}

impl Shared {
    /// `lag_threshold_ms`: stalls at least this long become lag events; `None` tracks no lag.
    pub fn new(thread_id: u32, clock: Clock, cfg: Config, ledger: Ledger, lag_threshold_ms: Option<f64>) -> Arc<Self> {
        let agg = Aggregator::new(cfg, clock.now());
        let lag = lag_threshold_ms.map(Lag::new);
        let (started, slow_io) = (clock.now(), SlowIo::default());
        Arc::new(Shared { thread_id, clock, cpu: ThreadCpu::current(), started, slow_io, state: Mutex::new(State { ledger: Some(ledger), agg, lag, recordings: Vec::new(), next_recording: 1 }) })
    }

    /// Runs `f` on the aggregator and ledger at this thread's `now`; `None` once detached.
    pub fn with<R>(&self, f: impl FnOnce(&mut Aggregator, &Ledger, f64) -> R) -> Option<R> {
        self.with_ledger(|agg, ledger| f(agg, ledger, self.clock.now()))
    }

    /// As `with`, read-only, with the lag tracker: what a metrics scrape reads, in one hold.
    pub fn with_lag<R>(&self, f: impl FnOnce(&Aggregator, &Ledger, Option<&Lag>, f64) -> R) -> Option<R> {
        let st = self.state.lock();
        Some(f(&st.agg, st.ledger.as_ref()?, st.lag.as_ref(), self.clock.now()))
    }

    /// As `with`, without the clock read: for what the monitored thread does between switches.
    pub fn with_ledger<R>(&self, f: impl FnOnce(&mut Aggregator, &Ledger) -> R) -> Option<R> {
        let mut st = self.state.lock();
        let State { ledger, agg, .. } = &mut *st;
        Some(f(agg, ledger.as_ref()?))
    }

    /// Stops every read of the ledger; after this its memory may be freed.
    pub fn detach(&self) {
        self.state.lock().ledger = None;
    }

    /// The idle mark, on the monitored thread just before its loop polls: ends the stretch
    /// and charges the running interval. Returns the lag event if the stretch was a stall.
    /// Recordings get the event too.
    pub fn idle(&self) -> Option<Value> {
        let event = {
            let mut st = self.state.lock();
            let State { ledger, agg, lag, recordings, .. } = &mut *st;
            let ledger = ledger.as_ref()?;
            let now = self.clock.now();
            let (slot, _) = ledger.running()?;
            let wake = ledger.wake();
            ledger.close_running(now);
            let stall = lag.as_mut()?.stretch_ended(wake, slot, now)?;
            let event = self.stall_json(agg, stall);
            for (_, r) in recordings.iter_mut() {
                r.push_stall(&event);
            }
            event
        };
        // A stall asks for the stack sampler, unless it began before rloop did (an app's own
        // start-up, which stalls in most apps): the sampler, created in the app's callbacks, is
        // seen by its hooks, so it is created only once the app's loop has stalled. Rare, and
        // outside the state lock: the watch thread takes these two the other way round.
        if event["atStart"] == false && !has_stall_listener(self.thread_id) {
            if let Some(ledger) = self.state.lock().ledger.as_ref() {
                ledger.want_stacks();
            }
        }
        Some(event)
    }

    /// Starts a recording of every window closed and every stall from now, with the report
    /// `frame` to finish without JS if need be; returns its id.
    pub fn record(&self, frame: Option<Value>) -> u32 {
        let mut st = self.state.lock();
        let id = st.next_recording;
        st.next_recording = id.wrapping_add(1).max(1);
        st.recordings.push((id, Recording::new(frame)));
        id
    }

    /// Adds a slow I/O event to recording `id`, if it has a frame (the addon may finish it).
    pub fn record_io(&self, id: u32, event: Value) {
        let mut st = self.state.lock();
        if let Some((_, r)) = st.recordings.iter_mut().find(|(r, rec)| *r == id && rec.frame.is_some()) {
            r.push_io(event);
        }
    }

    /// Runs `f` on this thread's state as it is now: for src/report.rs, under the lock.
    pub fn view<R>(&self, f: impl FnOnce(View<'_>) -> R) -> R {
        let st = self.state.lock();
        f(View { ledger: st.ledger.as_ref(), agg: &st.agg, lag: st.lag.as_ref(), recordings: &st.recordings })
    }

    /// Ends recording `id`: `{ windows, lag: { events, dropped } }` as JSON, written outside
    /// the lock; `None` if there is no such recording. Works after detach too (a capture ended
    /// by stop()).
    pub fn take_recording(&self, id: u32) -> Option<String> {
        let (r, origin) = {
            let mut st = self.state.lock();
            let i = st.recordings.iter().position(|(r, _)| *r == id)?;
            (st.recordings.swap_remove(i).1, st.agg.config().time_origin)
        };
        Some(r.to_json_string(origin))
    }

    /// The lag event of `stall`, as `idle` and the 'lag' listeners give it.
    pub fn stall_json(&self, agg: &Aggregator, stall: Stall) -> Value {
        let name = |slot: usize| (slot != crate::aggregator::UNATTRIBUTED).then(|| agg.describe_slot(slot).0);
        let (_, key) = agg.describe_slot(stall.slot);
        let other = stall.noticed_slot.filter(|&s| agg.scope_of(s) != agg.scope_of(stall.slot)).map(|s| name(s).unwrap_or("unattributed code"));
        let b = blame(stall.start, stall.stack, other);
        // Who ran inside the stall, from the watch thread's samples (every few ms from half the threshold on).
        let sampled: u32 = stall.samples.iter().map(|(_, n)| n).sum();
        let mut scopes: Vec<Value> = stall
            .samples
            .iter()
            .map(|&(slot, n)| json!({ "scope": name(slot), "key": agg.describe_slot(slot).1, "ms": stall.lag_ms * f64::from(n) / f64::from(sampled) }))
            .collect();
        // A capture with a profile may put the profile's samples in its place (js/stall-stacks.js).
        let from = b.stack.as_ref().map(|_| "sampler");
        scopes.sort_by(|a, b| b["ms"].as_f64().unwrap_or(0.0).total_cmp(&a["ms"].as_f64().unwrap_or(0.0)));
        json!({
            "lagMs": stall.lag_ms,
            "at": agg.config().time_origin + stall.start,
            "thread": self.thread_id,
            "scope": name(stall.slot),
            "key": key,
            "stack": b.stack,
            "stackFrom": from,
            "noticedAfterMs": stall.noticed_after_ms,
            "stackTakenAfterMs": b.taken_after_ms,
            "stackSeen": b.seen,
            "stackNote": b.note,
            "native": b.native,
            "scopes": scopes,
            "atStart": stall.at_start,
        })
    }

    /// How long this loop has been busy without a break, if it is busy now.
    fn busy_for_ms(&self) -> Option<f64> {
        let st = self.state.lock();
        let ledger = st.ledger.as_ref()?;
        ledger.running().map(|_| self.clock.now() - ledger.wake())
    }

    /// The watch thread's look at this loop: `Some(wake)` when a stall is first noticed.
    fn watch(&self) -> Option<f64> {
        let mut st = self.state.lock();
        let State { ledger, lag, .. } = &mut *st;
        let (ledger, lag) = (ledger.as_ref()?, lag.as_mut()?);
        let (slot, _) = ledger.running()?;
        let wake = ledger.wake();
        lag.watch(slot, wake, self.clock.now()).then_some(wake)
    }

    /// Frames of the code blocking the stall that woke at `wake`, from a stack sampler.
    /// `asked`/`answered` are epoch ms (`performance.timeOrigin + now()`, comparable across
    /// threads); `ran_ms`, the CPU the monitored thread used from the question to the answer's arrival.
    pub fn attach_stack(&self, wake: f64, asked: f64, answered: f64, ran_ms: f64, frames: Value) -> bool {
        let mut st = self.state.lock();
        let origin = st.agg.config().time_origin;
        let taken = Taken { asked: asked - origin, answered: answered - origin, ran_ms, frames };
        st.lag.as_mut().is_some_and(|lag| lag.attach_stack(wake, taken))
    }

    /// Ms until the watch thread must look at this loop again, if before its next window.
    fn look_in(&self) -> Option<f64> {
        let st = self.state.lock();
        let (lag, ledger) = (st.lag.as_ref()?, st.ledger.as_ref()?);
        let wake = ledger.running().map(|_| ledger.wake());
        Some(lag.look_in(wake, self.clock.now(), WATCH_EVERY_MS))
    }

    /// Closes the window if it is due; returns when the next one is due (monotonic ms). The
    /// window is built between two short holds of the lock, not under it.
    fn tick(&self) -> Option<f64> {
        let (begun, next) = {
            let mut st = self.state.lock();
            let State { ledger, agg, lag, .. } = &mut *st;
            let ledger = ledger.as_ref()?;
            let now = self.clock.now();
            let begun = (now >= agg.due()).then(|| (agg.close_begin(ledger, now), lag.as_mut().map(Lag::close_window)));
            (begun, agg.due() - now + monotonic_ms())
        };
        if let Some((pending, lag)) = begun {
            let window = pending.finish(lag);
            let mut st = self.state.lock();
            let (w, evicted) = st.agg.close_end(window);
            for (_, r) in st.recordings.iter_mut() {
                r.push_window(w.clone());
            }
            drop(st);
            let freed: usize = evicted.iter().filter(|w| Arc::strong_count(w) == 1).map(|w| w.heap_bytes()).sum();
            drop(evicted); // windows of many scopes take a while to free
            give_back_in_time(freed);
        }
        Some(next)
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

/// A thread's state, read by `Shared::view`; `ledger` is `None` once detached.
pub struct View<'a> {
    pub ledger: Option<&'a Ledger>,
    pub agg: &'a Aggregator,
    pub lag: Option<&'a Lag>,
    pub recordings: &'a [(u32, Recording)],
}

/// Windows freed since malloc last gave pages back.
static FREED: AtomicUsize = AtomicUsize::new(0);

/// glibc's malloc keeps what the watch thread frees in that thread's arena, for good: once the
/// windows it freed add up to a full history's bound, give the pages back.
fn give_back_in_time(freed: usize) {
    if add_up(&FREED, freed) {
        give_back_freed();
    }
}

/// Adds `freed` to `since`; true (and `since` starts again) once it reaches `HISTORY_BYTES`.
fn add_up(since: &AtomicUsize, freed: usize) -> bool {
    let due = since.fetch_add(freed, Relaxed) + freed >= crate::aggregator::HISTORY_BYTES;
    if due {
        since.store(0, Relaxed);
    }
    due
}

/// Returns the pages glibc's malloc keeps after frees to the system. True if some were.
pub fn give_back_freed() -> bool {
    extern "C" {
        // glibc: every target this addon is built for is a -gnu one.
        fn malloc_trim(pad: usize) -> std::os::raw::c_int;
    }
    // SAFETY: malloc_trim takes no pointers and is thread-safe.
    unsafe { malloc_trim(0) != 0 }
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
pub fn blocked_for(thread_id: u32, ms: f64) -> bool {
    find(thread_id).and_then(|m| m.busy_for_ms()).is_some_and(|b| b >= ms)
}

fn has_stall_listener(thread_id: u32) -> bool {
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
        let d = shared.describe().unwrap();
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
            s.attach_stack(wake, now, now + 1.0, 1.0, json!([{ "functionName": "spin" }]));
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
