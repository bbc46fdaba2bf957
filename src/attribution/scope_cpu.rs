//! The CPU each scope got of its busy time in a closed window (`ScopeWindow::cpu_ms`).
//!
//! The hooks read no CPU clock (a thread's CPU clock is a syscall). The lookout thread reads the
//! monitored thread's CPU time as it looks at a busy loop and as it closes a window, with the
//! slot charged then and since when: between two such readings of one running interval (the
//! same slot since the same switch), the wall time the thread did not run was taken from that
//! interval's scope (descheduled, throttled by a CPU quota, or in a system call). From its start
//! to the first reading of it, the thread ran at most the CPU time since the reading before
//! (any reading, of the idle loop too: src/stalls/ran.rs's): the rest of that head was taken.
//! It is a sampled figure, at the looks' resolution: an interval no reading falls in counts as
//! run, unless the thread's CPU time over the window is less than the scopes' figures add up to
//! (`fit`).

use crate::runtime::cpu::Ran;
use super::aggregator::{Aggregator, UNATTRIBUTED};
use super::ledger::Ledger;
use super::window::Window;

/// What the looks saw of one scope in the window open now.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Seen {
    /// Wall time between two readings of one of its running intervals.
    pub looked_ms: f64,
    /// Of that, what the thread did not run.
    pub taken_ms: f64,
}

/// One reading: when, the thread's CPU time then, and the slot charged since when and its scope.
#[derive(Clone, Copy, Debug)]
struct Look {
    at: f64,
    cpu_ms: f64,
    running: (usize, f64),
    scope: usize,
}

/// The looks of one monitored thread since its window opened, by scope index.
#[derive(Default)]
pub struct ScopeCpu {
    last: Option<Look>,
    /// The last reading of any kind: when, and the thread's CPU time then.
    before: Option<(f64, f64)>,
    seen: Vec<Seen>,
}

impl ScopeCpu {
    /// A reading at `at` between two reads of the slot charged: `cpu` reads the thread's CPU
    /// time, told whether the loop is busy (a look at an idle loop needs none).
    pub fn read(&mut self, ledger: &Ledger, agg: &Aggregator, at: f64, cpu: impl FnOnce(bool) -> Option<f64>) {
        let before = ledger.running();
        let cpu_ms = cpu(before.is_some());
        let after = ledger.running();
        self.look(at, before, cpu_ms, after, before.map_or(UNATTRIBUTED, |(slot, _)| agg.scope_of(slot)));
    }

    /// A reading at `at` of the thread's CPU time `cpu_ms`, with the slot charged and since when
    /// read `before` and `after` it; `scope` is that slot's scope. A switch among the reads, an
    /// idle loop or an unknown CPU time leave nothing to measure the next span from.
    fn look(&mut self, at: f64, before: Option<(usize, f64)>, cpu_ms: Option<f64>, after: Option<(usize, f64)>, scope: usize) {
        let now = match (before, cpu_ms) {
            (Some(running), Some(cpu_ms)) if before == after && running.1 <= at => Some(Look { at, cpu_ms, running, scope }),
            _ => None,
        };
        if let Some(b) = now {
            // From the last reading of this interval, else from its start: run at most what the
            // thread ran since the reading before it.
            let from = match (self.last, self.before) {
                (Some(a), _) if a.running == b.running => (a.scope == b.scope).then_some((a.at, a.cpu_ms)),
                (_, Some((at, cpu_ms))) if at <= b.running.1 => Some((b.running.1, cpu_ms)),
                _ => None,
            };
            if let Some((at, cpu_ms)) = from {
                let wall = (b.at - at).max(0.0);
                let seen = self.at(b.scope);
                seen.looked_ms += wall;
                seen.taken_ms += (wall - (b.cpu_ms - cpu_ms)).clamp(0.0, wall);
            }
        }
        self.last = now;
        if let Some(cpu_ms) = cpu_ms {
            self.before = Some((at, cpu_ms));
        }
    }

    /// A reading of the thread's CPU time taken while its loop was idle (by src/stalls/ran.rs).
    pub fn idle(&mut self, at: f64, cpu_ms: f64) {
        self.before = Some((at, cpu_ms));
    }

    fn at(&mut self, scope: usize) -> &mut Seen {
        if self.seen.len() <= scope {
            self.seen.resize(scope + 1, Seen::default());
        }
        &mut self.seen[scope]
    }

    /// What the window closing saw, by scope index; the next window starts with none (the last
    /// reading stays: it is where the next window's first span starts).
    pub fn take(&mut self) -> Vec<Seen> {
        std::mem::take(&mut self.seen)
    }
}

/// Sets each scope's CPU time in a closed window from what the looks saw of it and the thread's
/// CPU time over the window (`ran`; none where it is unknown). A scope's CPU time is its busy time
/// less what was seen taken from it, so at most its busy time. Where these add up to more than
/// the thread's CPU time (time taken from intervals no two looks saw), they are made to fit it:
/// first the busy time no look saw, of every scope alike, then the rest.
pub fn fit(window: &mut Window, seen: &[Seen], ran: Option<Ran>) {
    let Some(ran) = ran else { return };
    let parts: Vec<(f64, f64)> = std::iter::once(&window.unattributed)
        .chain(&window.scopes)
        .map(|s| {
            let seen = seen.get(s.index).copied().unwrap_or_default();
            let looked = seen.looked_ms.min(s.busy_ms);
            (looked - seen.taken_ms.min(looked), s.busy_ms - looked)
        })
        .collect();
    let sure: f64 = parts.iter().map(|p| p.0).sum();
    let rest: f64 = parts.iter().map(|p| p.1).sum();
    let fits = |part: f64, within: f64| if part > within.max(0.0) { within.max(0.0) / part } else { 1.0 };
    let (of_sure, of_rest) = (fits(sure, ran.cpu_ms), fits(rest, ran.cpu_ms - sure));
    let scopes = std::iter::once(&mut window.unattributed).chain(&mut window.scopes);
    for (s, (sure, rest)) in scopes.zip(parts) {
        s.cpu_ms = Some((sure * of_sure + rest * of_rest).min(s.busy_ms));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::window::ScopeWindow;
    use crate::attribution::keys::KeyTable;
    use std::sync::Arc;

    #[test]
    fn a_span_between_two_looks_at_one_interval_is_charged_what_it_did_not_run() {
        let mut c = ScopeCpu::default();
        let x = Some((3, 100.0));
        c.look(110.0, x, Some(50.0), x, 3);
        assert_eq!(c.seen.get(3), None, "no reading before: its head unknown");
        c.look(140.0, x, Some(56.0), x, 3);
        assert_eq!(c.seen[3], Seen { looked_ms: 30.0, taken_ms: 24.0 }, "30 ms of wall, 6 of CPU");
        c.look(150.0, Some((3, 145.0)), Some(58.0), Some((3, 145.0)), 3);
        assert_eq!(c.seen[3], Seen { looked_ms: 35.0, taken_ms: 27.0 }, "another interval: its 5 ms head ran at most the 2 ms since the last reading");
        c.look(160.0, Some((3, 145.0)), Some(61.0), Some((4, 158.0)), 3);
        assert!(c.last.is_none(), "a switch among the reads");
        c.look(170.0, Some((4, 158.0)), Some(62.0), Some((4, 158.0)), 4);
        assert_eq!(c.seen.get(4), None, "the reading before came after its start: its head unknown");
        c.look(180.0, None, None, None, 0);
        c.idle(185.0, 70.0);
        c.look(190.0, Some((4, 158.0)), Some(72.0), Some((4, 158.0)), 4);
        assert_eq!(c.seen.get(4), None, "idle between: another interval, begun before the reading");
        c.look(200.0, Some((4, 158.0)), Some(85.0), Some((4, 158.0)), 4);
        assert_eq!(c.seen[4], Seen { looked_ms: 10.0, taken_ms: 0.0 }, "more CPU than wall time (reads a hair apart): none taken");
        assert_eq!(c.take().len(), 5);
        c.look(210.0, Some((4, 158.0)), Some(86.0), Some((4, 158.0)), 4);
        assert_eq!(c.seen[4], Seen { looked_ms: 10.0, taken_ms: 9.0 }, "the next window goes on from the close's reading");
        c.idle(220.0, 87.0);
        c.look(300.0, Some((2, 230.0)), Some(97.0), Some((2, 230.0)), 2);
        assert_eq!(c.seen[2], Seen { looked_ms: 70.0, taken_ms: 60.0 }, "throttled before the first look at it: from an idle reading, the head");
    }

    fn window(scopes: &[(usize, f64)]) -> Window {
        let s = |&(index, busy_ms): &(usize, f64)| ScopeWindow { index, name: Arc::from("s"), busy_ms, calls: 1.0, keys: None, cpu_ms: None };
        Window {
            seq: 1,
            start: 0.0,
            end: 1000.0,
            busy_ms: scopes.iter().map(|s| s.1).sum(),
            rloop_ms: 0.0,
            unattributed: s(&scopes[0]),
            scopes: scopes[1..].iter().map(s).collect(),
            lag: None,
            ran: None,
            gc: None,
            merged: 1,
            keys: KeyTable::default(),
        }
    }

    fn cpu(w: &Window) -> Vec<f64> {
        std::iter::once(&w.unattributed).chain(&w.scopes).map(|s| s.cpu_ms.unwrap()).collect()
    }

    #[test]
    fn a_scope_gets_its_busy_time_less_what_was_taken_and_all_fit_the_threads_cpu_time() {
        let seen = [Seen::default(), Seen::default(), Seen { looked_ms: 500.0, taken_ms: 400.0 }, Seen::default()];
        let mut w = window(&[(0, 20.0), (2, 600.0), (3, 100.0)]);
        fit(&mut w, &seen, None);
        assert_eq!(w.scopes[0].cpu_ms, None, "the thread's CPU time unknown: so is theirs");
        fit(&mut w, &seen, Some(Ran { cpu_ms: 320.0, throttled_ms: None }));
        assert_eq!(cpu(&w), [20.0, 200.0, 100.0], "x: 100 of what was looked, its 100 not looked counted as run");
        fit(&mut w, &seen, Some(Ran { cpu_ms: 155.0, throttled_ms: None }));
        assert_eq!(cpu(&w), [5.0, 125.0, 25.0], "the 220 ms no look saw share the 55 ms the thread ran besides");
        fit(&mut w, &seen, Some(Ran { cpu_ms: 50.0, throttled_ms: None }));
        assert_eq!(cpu(&w), [0.0, 50.0, 0.0], "less than was looked: that too fits");
        let seen = [Seen::default(), Seen::default(), Seen { looked_ms: 700.0, taken_ms: 10.0 }];
        let mut w = window(&[(0, 0.0), (2, 600.0)]);
        fit(&mut w, &seen, Some(Ran { cpu_ms: 1000.0, throttled_ms: None }));
        assert_eq!(cpu(&w), [0.0, 590.0], "never more than its busy time");
        fit(&mut w, &seen, Some(Ran { cpu_ms: 59.0, throttled_ms: None }));
        assert_eq!(cpu(&w), [0.0, 59.0], "all of it looked, and less than that: fits too");
    }
}
