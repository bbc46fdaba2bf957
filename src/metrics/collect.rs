//! What a scrape reads: each monitored thread's figures, copied in one short hold of its lock
//! (the lock the loop's idle mark, keyed scopes and the window close take) and summed and
//! ranked outside it, then turned into metric families. The cardinality guard is the reader's
//! `Exposure`, one per thread.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use crate::attribution::aggregator::{Aggregator, RawTotals, Window, RLOOP};
use crate::attribution::ledger::Ledger;
use crate::runtime::shared::Shared;
use crate::stalls::lag::{Lag, StallTotals, STALL_BUCKETS};

use super::exposure::Exposure;
use super::family::{Family, Kind, Sample};
use super::gc::{KindTotals, BUCKETS as GC_BUCKETS, KINDS as GC_KINDS};
use super::slow_io::IoTotal;

const FOLDED: &str = "(other)";

/// One scope as exposed (or everything folded into `(other)`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScopeFigures {
    pub name: String,
    pub busy_ms: f64,
    pub calls: f64,
    /// Busy ms in the last complete window.
    pub last_ms: f64,
    /// p50, p99 and max ms of its keys in the last complete window.
    pub keys: Option<[f64; 3]>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThreadFigures {
    pub thread: u32,
    /// The app's busy time since start; rloop's own work is `rloop_ms`, apart.
    pub busy_ms: f64,
    pub rloop_ms: f64,
    pub elapsed_ms: f64,
    /// Thread busy ms and duration of the last complete window.
    pub last: Option<(f64, f64)>,
    /// The top scopes, busiest first, then `(other)` if anything was folded.
    pub scopes: Vec<ScopeFigures>,
    /// Scopes whose time has gone into `(other)`, each counted once.
    pub folded: u64,
    pub stalls: Option<StallTotals>,
    /// Lengths (ms) of the stalls that ended since this reader's last read.
    pub ended_ms: Vec<f64>,
    /// The scope running in a stall that goes on now, and for how long it has (ms).
    pub stalled: Option<(String, f64)>,
    pub slow_io: Vec<(String, IoTotal)>,
    /// Garbage collections by kind (`GC_KINDS`) since start, and those since this reader's
    /// last read: (kind, seconds).
    pub gc: [KindTotals; GC_KINDS.len()],
    pub gc_ended: Vec<(usize, f64)>,
}

/// A scrape's consumer (the endpoint, each adapter), with the series it has exposed so far.
pub struct Reader {
    top: usize,
    threads: Mutex<HashMap<u32, (Weak<Shared>, Exposure)>>,
}

impl Reader {
    /// Names the `top` busiest scopes of each thread.
    pub fn new(top: usize) -> Self {
        Reader { top, threads: Mutex::new(HashMap::new()) }
    }

    /// Every monitored thread's families.
    pub fn families(&self) -> Vec<Family> {
        let monitors = crate::runtime::registry::monitors();
        let mut threads = self.threads.lock();
        // A monitor started again on a thread starts its series again.
        threads.retain(|id, (m, _)| monitors.iter().any(|n| n.thread_id == *id && Weak::ptr_eq(m, &Arc::downgrade(n))));
        let figures: Vec<ThreadFigures> = monitors
            .iter()
            .filter_map(|m| {
                let (_, exposure) = threads.entry(m.thread_id).or_insert_with(|| (Arc::downgrade(m), Exposure::default()));
                figures(m, exposure, self.top)
            })
            .collect();
        families(&figures)
    }
}

/// What a scrape copies under the lock.
pub(super) struct Copied {
    totals: RawTotals,
    last: Option<Arc<Window>>,
    stalls: Option<StallTotals>,
    /// The scope index running in a stall that goes on, and ms it has lasted.
    stalled: Option<(usize, f64)>,
    overflowed: u64,
}

pub(super) fn copy(agg: &Aggregator, ledger: &Ledger, lag: Option<&Lag>, now: f64) -> Copied {
    let stalled = lag.and_then(|lag| {
        let (slot, _) = ledger.running()?;
        let lasted = now - ledger.wake();
        (lasted >= lag.threshold_ms()).then(|| (agg.scope_of(slot), lasted))
    });
    Copied { totals: agg.raw_totals(ledger, now), last: agg.last(), stalls: lag.map(|l| l.totals().clone()), stalled, overflowed: agg.scopes_overflowed() }
}

/// The figures of monitor `m`; `None` once it is detached.
fn figures(m: &Shared, exposure: &mut Exposure, top: usize) -> Option<ThreadFigures> {
    let copied = m.with_lag(|agg, ledger, lag, now| copy(agg, ledger, lag, now))?;
    // Names are only appended, so a second short hold finds the same scope at each index.
    let names = |indices: &[usize]| m.with_lag(|agg, _, _, _| indices.iter().map(|&i| agg.describe_slot(i).0.to_string()).collect()).unwrap_or_default();
    let mut f = finish(copied, exposure, top, names)?;
    f.thread = m.thread_id;
    f.elapsed_ms = m.clock.now() - m.started;
    f.slow_io = m.slow_io.read();
    let gc = m.gc.read();
    let new = gc.count.saturating_sub(exposure.gc_seen).min(gc.recent.len() as u64) as usize;
    exposure.gc_seen = gc.count;
    f.gc_ended = gc.recent.iter().skip(gc.recent.len() - new).copied().collect();
    f.gc = gc.by_kind;
    Some(f)
}

/// Sums, ranks and names what was copied; `None` if the names could not be read (detached).
pub(super) fn finish(c: Copied, exposure: &mut Exposure, top: usize, names: impl Fn(&[usize]) -> Vec<String>) -> Option<ThreadFigures> {
    let mut totals = c.totals.sum();
    // rloop's own work: no scope's, not the app's busy time (a series of its own).
    let rloop_ms = std::mem::take(&mut totals[RLOOP]).busy_ms;
    let busy_ms = totals.iter().map(|r| r.busy_ms).sum();
    let exposed = exposure.read(&totals, top);
    let mut indices: Vec<usize> = exposed.shown.iter().map(|s| s.0).collect();
    indices.extend(c.stalled.map(|s| s.0));
    let mut named = names(&indices);
    if named.len() != indices.len() {
        return None;
    }
    let stalled = c.stalled.map(|(_, ms)| (named.pop().unwrap_or_default(), ms));
    let position: HashMap<usize, usize> = exposed.shown.iter().enumerate().map(|(p, s)| (s.0, p)).collect();
    let mut scopes: Vec<ScopeFigures> =
        exposed.shown.iter().zip(named).map(|((_, r), name)| ScopeFigures { name, busy_ms: r.busy_ms, calls: r.calls, ..Default::default() }).collect();
    let mut other = exposed.other.map(|r| ScopeFigures { name: FOLDED.to_owned(), busy_ms: r.busy_ms, calls: r.calls, ..Default::default() });
    if let Some(w) = &c.last {
        for s in std::iter::once(&w.unattributed).chain(&w.scopes) {
            match position.get(&s.index) {
                Some(&p) => {
                    scopes[p].last_ms = s.busy_ms;
                    scopes[p].keys = w.keys_of(s).map(|k| [k.stats.p50_ms, k.stats.p99_ms, k.stats.max_ms]);
                }
                None => other.get_or_insert_with(|| ScopeFigures { name: FOLDED.to_owned(), ..Default::default() }).last_ms += s.busy_ms,
            }
        }
    }
    scopes.extend(other);
    let ended_ms = c.stalls.as_ref().map_or_else(Vec::new, |st| {
        let new = st.count.saturating_sub(exposure.stalls_seen).min(st.recent_ms.len() as u64) as usize;
        exposure.stalls_seen = st.count;
        st.recent_ms.iter().skip(st.recent_ms.len() - new).copied().collect()
    });
    Some(ThreadFigures {
        busy_ms,
        rloop_ms,
        last: c.last.map(|w| (w.busy_ms, w.end - w.start)),
        scopes,
        folded: exposed.folded + c.overflowed,
        stalls: c.stalls,
        ended_ms,
        stalled,
        ..Default::default()
    })
}

/// The families of these threads' figures, in a fixed order.
pub fn families(threads: &[ThreadFigures]) -> Vec<Family> {
    use Kind::{Counter, Gauge, Histogram};
    let mut elu = Family::new("nodejs_eventloop_utilization", "nodejs.eventloop.utilization", "1", Gauge, "Event loop utilization of the last complete window, per thread.");
    let mut time = Family::new("nodejs_eventloop_time_seconds_total", "nodejs.eventloop.time", "s", Counter, "Time the event loop spent busy (active), idle, and on rloop's own work (rloop) since rloop started.");
    let mut scope_elu = Family::new("rloop_scope_utilization", "rloop.scope.utilization", "1", Gauge, "Share of the last complete window the loop was busy in the scope.");
    let mut busy = Family::new("rloop_scope_busy_seconds_total", "rloop.scope.busy", "s", Counter, "Event loop busy time charged to the scope since rloop started.");
    let mut calls = Family::new("rloop_scope_calls_total", "rloop.scope.calls", "{call}", Counter, "Callbacks run in the scope, and entries into it, since rloop started.");
    let mut keys = Family::new("rloop_scope_key_busy_seconds", "rloop.scope.key.busy", "s", Gauge, "Busy time per key (request, message) of the scope in the last complete window: p50, p99, max (quantile 1).");
    let mut folded = Family::new("rloop_scopes_folded_total", "rloop.scopes.folded", "{scope}", Counter, "Scopes whose time has gone into scope=\"(other)\": those outside the topScopes busiest, each counted once, and every entry into a name past maxScopes.");
    let mut stalls = Family::new("rloop_stalls_total", "rloop.stalls", "{stall}", Counter, "Stalls: stretches of busy loop of the lag threshold or longer.");
    let mut stall_len = Family::new("rloop_stall_seconds", "rloop.stall.duration", "s", Histogram, "Lag of each stall (its length).").with_buckets(&STALL_BUCKETS);
    let mut stalled = Family::new("rloop_stall_in_progress_seconds", "rloop.stall.in_progress", "s", Gauge, "How long the stall going on now has lasted, with the scope running in it.");
    let mut io_count = Family::new("rloop_slow_io_total", "rloop.slow_io", "{operation}", Counter, "I/O operations that took the I/O threshold or longer.");
    let mut io_time = Family::new("rloop_slow_io_seconds_total", "rloop.slow_io.duration", "s", Counter, "Time slow I/O operations took.");
    let mut io_errors = Family::new("rloop_slow_io_errors_total", "rloop.slow_io.errors", "{operation}", Counter, "Slow I/O operations that failed.");
    let mut gc = Family::new("nodejs_gc_duration_seconds", "v8js.gc.duration", "s", Histogram, "Garbage collection duration by kind of GC.").with_buckets(&GC_BUCKETS);
    for t in threads {
        let thread = || ("thread", t.thread.to_string());
        let with_scope = |name: &str| vec![thread(), ("scope", name.to_owned())];
        if let Some((b, d)) = t.last.filter(|(_, d)| *d > 0.0) {
            elu.push(vec![thread()], (b / d).clamp(0.0, 1.0));
        }
        time.push(vec![thread(), ("nodejs_eventloop_state", "active".into())], t.busy_ms / 1e3);
        time.push(vec![thread(), ("nodejs_eventloop_state", "idle".into())], (t.elapsed_ms - t.busy_ms - t.rloop_ms).max(0.0) / 1e3);
        time.push(vec![thread(), ("nodejs_eventloop_state", "rloop".into())], t.rloop_ms / 1e3);
        for s in &t.scopes {
            if let Some((_, d)) = t.last.filter(|(_, d)| *d > 0.0) {
                scope_elu.push(with_scope(&s.name), (s.last_ms / d).clamp(0.0, 1.0));
            }
            busy.push(with_scope(&s.name), s.busy_ms / 1e3);
            calls.push(with_scope(&s.name), s.calls);
            for (q, v) in ["0.5", "0.99", "1"].iter().zip(s.keys.iter().flatten()) {
                let mut labels = with_scope(&s.name);
                labels.push(("quantile", (*q).to_owned()));
                keys.push(labels, v / 1e3);
            }
        }
        folded.push(vec![thread()], t.folded as f64);
        if let Some(st) = &t.stalls {
            stalls.push(vec![thread()], st.count as f64);
            for (bound, n) in STALL_BUCKETS.iter().zip(st.le) {
                stall_len.samples.push(Sample { suffix: "_bucket", labels: vec![thread(), ("le", bound.to_string())], value: n as f64 });
            }
            stall_len.samples.push(Sample { suffix: "_bucket", labels: vec![thread(), ("le", "+Inf".into())], value: st.count as f64 });
            stall_len.samples.push(Sample { suffix: "_sum", labels: vec![thread()], value: st.sum_ms / 1e3 });
            stall_len.samples.push(Sample { suffix: "_count", labels: vec![thread()], value: st.count as f64 });
            stall_len.events.extend(t.ended_ms.iter().map(|ms| Sample { suffix: "", labels: vec![thread()], value: ms / 1e3 }));
        }
        if let Some((scope, ms)) = &t.stalled {
            stalled.push(with_scope(scope), ms / 1e3);
        }
        for (kind, io) in &t.slow_io {
            let labels = || vec![thread(), ("type", kind.clone())];
            io_count.push(labels(), io.count as f64);
            io_time.push(labels(), io.seconds);
            io_errors.push(labels(), io.errors as f64);
        }
        for (kind, k) in GC_KINDS.iter().zip(&t.gc).filter(|(_, k)| k.count > 0) {
            let labels = |more: Option<String>| {
                let mut l = vec![thread(), ("kind", (*kind).to_owned())];
                l.extend(more.map(|le| ("le", le)));
                l
            };
            for (bound, n) in GC_BUCKETS.iter().zip(k.le) {
                gc.samples.push(Sample { suffix: "_bucket", labels: labels(Some(bound.to_string())), value: n as f64 });
            }
            gc.samples.push(Sample { suffix: "_bucket", labels: labels(Some("+Inf".into())), value: k.count as f64 });
            gc.samples.push(Sample { suffix: "_sum", labels: labels(None), value: k.seconds });
            gc.samples.push(Sample { suffix: "_count", labels: labels(None), value: k.count as f64 });
        }
        gc.events.extend(t.gc_ended.iter().map(|&(kind, s)| Sample { suffix: "", labels: vec![thread(), ("kind", GC_KINDS[kind].to_owned())], value: s }));
    }
    vec![elu, time, scope_elu, busy, calls, keys, folded, stalls, stall_len, stalled, io_count, io_time, io_errors, gc]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::aggregator::Config;
    use crate::attribution::ledger::test_support::Memory;

    fn read(a: &Aggregator, l: &Ledger, lag: Option<&Lag>, now: f64, top: usize) -> Option<ThreadFigures> {
        finish(copy(a, l, lag, now), &mut Exposure::default(), top, |ix| ix.iter().map(|&i| a.describe_slot(i).0.to_string()).collect())
    }

    #[test]
    fn the_top_scopes_keep_their_names_the_rest_fold_into_other() {
        let cfg = Config { window_ms: 1000.0, history: 2, max_scopes: 100, key_slots: 16, max_keys: 16, worst_keys: 1, time_origin: 0.0 };
        let m = Memory::new(cfg.slots());
        let l = m.ledger();
        let mut a = Aggregator::new(cfg, 0.0);
        let mut t = 0.0;
        for i in 1..=50 {
            let s = a.add_scope(&format!("s{i}"));
            m.switch_to(s, t);
            m.call(s);
            t += i as f64; // s50 busiest
        }
        l.close_running(t);
        a.close(&l, t, None);
        let lag = Lag::new(50.0);
        let f = read(&a, &l, Some(&lag), t, 3).unwrap();
        let names: Vec<&str> = f.scopes.iter().map(|s| &*s.name).collect();
        assert_eq!(names, ["s50", "s49", "s48", "(other)"]);
        assert_eq!(f.folded, 47);
        let other = &f.scopes[3];
        assert_eq!(other.calls, 47.0);
        assert_eq!(other.busy_ms, (1..=47).sum::<i32>() as f64);
        assert_eq!(other.last_ms, other.busy_ms, "one window: the last window's time folds the same way");
        assert_eq!(f.busy_ms, t);
        let fams = families(&[f]);
        let busy = fams.iter().find(|x| x.name == "rloop_scope_busy_seconds_total").unwrap();
        assert_eq!(busy.samples.len(), 4, "top 3 + (other)");
        assert!(fams.iter().find(|x| x.name == "rloop_stall_in_progress_seconds").unwrap().samples.is_empty(), "idle: no stall");
    }

    #[test]
    fn a_monitor_s_figures_carry_its_thread_uptime_and_slow_io() {
        let cfg = Config { window_ms: 1000.0, history: 2, max_scopes: 4, key_slots: 16, max_keys: 16, worst_keys: 1, time_origin: 0.0 };
        let m = Memory::new(cfg.slots());
        let shared = Shared::new(3, crate::runtime::clock::Clock::new(0.0), cfg, m.ledger(), None);
        shared.slow_io.record("dns", 0.7, true);
        std::thread::sleep(std::time::Duration::from_millis(5));
        let f = figures(&shared, &mut Exposure::default(), 5).unwrap();
        assert_eq!(f.thread, 3);
        assert!(f.elapsed_ms >= 5.0, "{f:?}");
        assert_eq!(f.slow_io[0].1.errors, 1);
        let json = families(&[f]).iter().map(Family::to_json).find(|j| j["name"] == "rloop_slow_io_errors_total").unwrap();
        assert_eq!(json["samples"][0]["labels"]["type"], "dns");
        assert_eq!(json["otel"], "rloop.slow_io.errors");
        shared.detach();
        assert!(figures(&shared, &mut Exposure::default(), 5).is_none(), "detached: nothing read");
        assert!(Reader::new(5).families().iter().all(|f| f.samples.iter().all(|s| s.labels[0].1 != "3")), "unregistered: not served");
    }

    #[test]
    fn a_stall_in_progress_names_its_scope() {
        let cfg = Config { window_ms: 1000.0, history: 2, max_scopes: 4, key_slots: 16, max_keys: 16, worst_keys: 1, time_origin: 0.0 };
        let m = Memory::new(cfg.slots());
        let l = m.ledger();
        let mut a = Aggregator::new(cfg, 0.0);
        let s = a.add_scope("blocker");
        m.switch_to(s, 100.0);
        let lag = Lag::new(50.0);
        assert_eq!(read(&a, &l, Some(&lag), 140.0, 5).unwrap().stalled, None, "under the threshold");
        assert_eq!(read(&a, &l, Some(&lag), 2100.0, 5).unwrap().stalled, Some(("blocker".into(), 2000.0)));
        assert_eq!(read(&a, &l, None, 2100.0, 5).unwrap().stalled, None, "lag off: no stalls");
    }
}

