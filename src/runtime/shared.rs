//! One monitored thread's state, shared with the lookout thread and any thread that reads it:
//! its ledger, windows, lag tracker and recordings, behind one lock held briefly.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, MutexGuard};
use serde_json::Value;

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::attribution::aggregator::{Aggregator, Config, Window};
use crate::attribution::ledger::Ledger;
use crate::attribution::scope_cpu::{self, ScopeCpu};
use crate::capture::recording::Recording;
use crate::metrics::{Gc, SlowIo};
use crate::stalls::event::stall_event;
use crate::stalls::gc::{self, GcKind, GcRecord, GcTotals};
use crate::stalls::lag::{Lag, Taken};
use crate::stalls::listeners;
use super::clock::{monotonic_ms, Clock};
use super::cpu::{Meter, Ran, Usage};
use super::heap_after_gc::HeapAfterGc;
use super::malloc;

/// How often the lookout thread looks at a loop busy for half the lag threshold or more: a stall
/// is noticed at most this long after it crosses the threshold.
const LOOK_EVERY_MS: f64 = 5.0;

/// What one monitored thread shares with the others.
pub struct Shared {
    pub thread_id: u32,
    pub clock: Clock,
    /// Reads the monitored thread's CPU time and its cgroup's throttling (Shared is made on that thread).
    pub meter: Meter,
    /// The garbage collections of the stretch running and since start, from V8's callbacks
    /// (src/runtime/gc_hooks.rs): a stall's and a window's.
    pub gc_record: GcRecord,
    /// The heap used after the newest major and minor GC, from the same callbacks.
    pub heap_after_gc: HeapAfterGc,
    /// When the monitor started, on `clock`: the idle time of metrics counts from here.
    pub started: f64,
    /// Slow I/O by type, pushed from JS per slow operation (rare), read by metrics scrapes.
    pub slow_io: SlowIo,
    /// Garbage collections by kind, pushed from JS per batch of them, read by metrics scrapes.
    pub gc: Gc,
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
    /// The thread's usage as the current window began (`None`: unknown).
    window_usage: Option<Usage>,
    /// The GC totals as the current window began (none before the callbacks are installed).
    window_gc: GcTotals,
    /// What the lookout thread's readings saw of the CPU each scope got in the current window.
    scope_cpu: ScopeCpu,
}

impl Shared {
    /// `lag_threshold_ms`: stalls at least this long become lag events; `None` tracks no lag.
    pub fn new(thread_id: u32, clock: Clock, cfg: Config, ledger: Ledger, lag_threshold_ms: Option<f64>) -> Arc<Self> {
        let agg = Aggregator::new(cfg, clock.now());
        let lag = lag_threshold_ms.map(Lag::new);
        let (started, slow_io, meter) = (clock.now(), SlowIo::default(), Meter::current());
        let state = State { ledger: Some(ledger), agg, lag, recordings: Vec::new(), next_recording: 1, window_usage: meter.read(started), window_gc: GcTotals::default(), scope_cpu: ScopeCpu::default() };
        Arc::new(Shared { thread_id, clock, meter, gc_record: GcRecord::default(), heap_after_gc: HeapAfterGc::default(), started, slow_io, gc: Gc::default(), state: Mutex::new(state) })
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
    pub fn idle_mark(&self) -> Option<Value> {
        let event = {
            let mut st = self.state.lock();
            let State { ledger, agg, lag, recordings, .. } = &mut *st;
            let ledger = ledger.as_ref()?;
            let now = self.clock.now();
            let (slot, _) = ledger.running()?;
            let wake = ledger.wake();
            ledger.close_running(now);
            let mut stall = lag.as_mut()?.stretch_ended(wake, slot, now, || self.meter.read(now))?;
            stall.gc = self.gc_record.of(wake);
            let event = stall_event(self.thread_id, agg, stall);
            for (_, r) in recordings.iter_mut() {
                r.push_stall(&event);
            }
            event
        };
        // A stall asks for the stack sampler, unless it began before rloop did (an app's own
        // start-up, which stalls in most apps): the sampler, created in the app's callbacks, is
        // seen by its hooks, so it is created only once the app's loop has stalled. Rare, and
        // outside the state lock: the lookout thread takes these two the other way round.
        if event["atStart"] == false && !listeners::has_stall_listener(self.thread_id) {
            if let Some(ledger) = self.state.lock().ledger.as_ref() {
                ledger.want_stacks();
            }
        }
        Some(event)
    }

    /// Starts a recording of every window closed and every stall from now, with the report
    /// `draft` to finish without JS if need be; returns its id.
    pub fn record(&self, draft: Option<Value>) -> u32 {
        let mut st = self.state.lock();
        let id = st.next_recording;
        st.next_recording = id.wrapping_add(1).max(1);
        st.recordings.push((id, Recording::new(draft)));
        id
    }

    /// Adds a slow I/O event to recording `id`, if it has a draft (the addon may finish it).
    pub fn record_io(&self, id: u32, event: Value) {
        let mut st = self.state.lock();
        if let Some((_, r)) = st.recordings.iter_mut().find(|(r, rec)| *r == id && rec.draft.is_some()) {
            r.push_io(event);
        }
    }

    /// Runs `f` on this thread's state as it is now: for src/capture/report.rs, under the lock.
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

    /// How long this loop has been busy without a break, if it is busy now.
    #[cfg(unix)]
    pub(crate) fn busy_for_ms(&self) -> Option<f64> {
        let st = self.state.lock();
        let ledger = st.ledger.as_ref()?;
        ledger.running().map(|_| self.clock.now() - ledger.wake())
    }

    /// The lookout thread's look at this loop: `Some(wake)` when a stall is first noticed.
    pub(crate) fn look(&self) -> Option<f64> {
        let mut st = self.state.lock();
        let State { ledger, agg, lag, scope_cpu, .. } = &mut *st;
        let (ledger, lag) = (ledger.as_ref()?, lag.as_mut()?);
        let now = self.clock.now();
        scope_cpu.read(ledger, agg, now, |busy| busy.then(|| self.meter.cpu()?.ms()).flatten());
        let Some((slot, _)) = ledger.running() else {
            // Kept only if the loop stayed idle through the reading: no stretch can end while
            // the lock is held, so one that began since is still running.
            if lag.wants_idle_reading(now) {
                if let Some(usage) = self.meter.read(now).filter(|_| ledger.running().is_none()) {
                    lag.idle_reading(usage);
                    scope_cpu.idle(now, usage.cpu_ms);
                }
            }
            return None;
        };
        let wake = ledger.wake();
        lag.look(slot, wake, now, || self.meter.read(now)).then_some(wake)
    }

    /// Frames of the code blocking the stall that woke at `wake`, from a stack sampler.
    /// `asked`/`answered` are epoch ms (`performance.timeOrigin + now()`, comparable across
    /// threads); `ran_ms`, the CPU the monitored thread used from the question to the answer's
    /// arrival; `trace`, the OpenTelemetry span active there (js/trace.js) or null.
    pub fn attach_stack(&self, wake: f64, asked: f64, answered: f64, ran_ms: f64, frames: Value, trace: Value) -> bool {
        Self::attach_locked(self.state.lock(), wake, asked, answered, ran_ms, frames, trace)
    }

    /// `attach_stack`, giving up when the state is not free `within` (the caller may be the
    /// monitored thread interrupted while it holds the lock).
    #[allow(clippy::too_many_arguments)]
    pub fn attach_stack_within(&self, within: Duration, wake: f64, asked: f64, answered: f64, ran_ms: f64, frames: Value, trace: Value) -> bool {
        self.state.try_lock_for(within).is_some_and(|st| Self::attach_locked(st, wake, asked, answered, ran_ms, frames, trace))
    }

    fn attach_locked(mut st: MutexGuard<'_, State>, wake: f64, asked: f64, answered: f64, ran_ms: f64, frames: Value, trace: Value) -> bool {
        let origin = st.agg.config().time_origin;
        let taken = Taken { asked: asked - origin, answered: answered - origin, ran_ms, frames, trace };
        st.lag.as_mut().is_some_and(|lag| lag.attach_stack(wake, taken))
    }

    /// Ms until the lookout thread must look at this loop again, if before its next window.
    pub(crate) fn look_in(&self) -> Option<f64> {
        let st = self.state.lock();
        let (lag, ledger) = (st.lag.as_ref()?, st.ledger.as_ref()?);
        let wake = ledger.running().map(|_| ledger.wake());
        Some(lag.look_in(wake, self.clock.now(), LOOK_EVERY_MS))
    }

    /// Closes the window if it is due; returns when the next one is due (monotonic ms). The
    /// window is built between two short holds of the lock, not under it.
    pub(crate) fn tick(&self) -> Option<f64> {
        let (begun, next) = {
            let mut st = self.state.lock();
            let State { ledger, agg, lag, window_usage, window_gc, scope_cpu, .. } = &mut *st;
            let ledger = ledger.as_ref()?;
            let now = self.clock.now();
            let begun = (now >= agg.due()).then(|| {
                let pending = agg.close_begin(ledger, now);
                let mut usage = None;
                scope_cpu.read(ledger, agg, pending.end, |_| {
                    usage = self.meter.read(pending.end);
                    usage.map(|u| u.cpu_ms)
                });
                let ran = window_usage.zip(usage).map(|(a, b)| Ran::between(&a, &b));
                *window_usage = usage;
                let gc = self.gc_since(window_gc, pending.end);
                (pending, lag.as_mut().map(Lag::close_window), ran, gc, scope_cpu.take())
            });
            (begun, agg.due() - now + monotonic_ms())
        };
        if let Some((pending, lag, ran, gc, seen)) = begun {
            let scratch = pending.scratch_bytes();
            let mut window = pending.finish(lag);
            window.ran = ran;
            window.gc = gc;
            scope_cpu::fit(&mut window, &seen, ran);
            let mut st = self.state.lock();
            let (w, evicted) = st.agg.close_end(window);
            for (_, r) in st.recordings.iter_mut() {
                r.push_window(w.clone());
            }
            drop(st);
            let freed: usize = evicted.iter().filter(|w| Arc::strong_count(w) == 1).map(|w| w.heap_bytes()).sum();
            drop(evicted); // windows of many scopes take a while to free
            malloc::give_back_in_time(freed + malloc::lasting(scratch));
        }
        Some(next)
    }

    /// The collections since totals `base` until `at`, whose totals become `base`; `None` without the callbacks.
    fn gc_since(&self, base: &mut GcTotals, at: f64) -> Option<Vec<GcKind>> {
        let now = self.gc_record.totals(at)?;
        let kinds = gc::between(base, &now);
        *base = now;
        Some(kinds)
    }

    /// What `rloop.threads()` says of this thread, `{ threadId, windowMs, current, last }` with
    /// the current window read live; `None` once detached. Taken under the lock, written out by
    /// the caller after it.
    pub fn describe(&self) -> Option<Described> {
        self.with(|agg, ledger, now| Described {
            thread_id: self.thread_id,
            window_ms: agg.config().window_ms,
            time_origin: agg.config().time_origin,
            current: agg.measure(ledger, now),
            last: agg.last(),
        })
    }
}

/// A thread's live window and last complete one (`rloop.threads()`).
pub struct Described {
    thread_id: u32,
    window_ms: f64,
    time_origin: f64,
    current: Window,
    last: Option<Arc<Window>>,
}

impl Serialize for Described {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(Some(4))?;
        m.serialize_entry("threadId", &self.thread_id)?;
        m.serialize_entry("windowMs", &self.window_ms)?;
        m.serialize_entry("current", &self.current.json(self.time_origin))?;
        m.serialize_entry("last", &self.last.as_ref().map(|w| w.json(self.time_origin)))?;
        m.end()
    }
}

/// A thread's state, read by `Shared::view`; `ledger` is `None` once detached.
pub struct View<'a> {
    pub ledger: Option<&'a Ledger>,
    pub agg: &'a Aggregator,
    pub lag: Option<&'a Lag>,
    pub recordings: &'a [(u32, Recording)],
}
