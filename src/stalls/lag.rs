//! Stalls: stretches of busy loop between two polls for I/O.
//!
//! A stretch runs from the first callback after the loop wakes (the ledger's `WAKE`) to the
//! idle mark before the next poll. Every stretch goes into the window's histogram; one at or
//! above the threshold is a stall and becomes a lag event. While a stretch is running, the
//! lookout thread samples which slot is charged, so a stall is attributed to the slot that held
//! the loop most, and is noticed while it is still going on (for a stack to be taken then).
//! The lookout thread's looks also read the thread's usage where a stall's start needs it
//! (src/stalls/ran.rs).

use std::collections::VecDeque;

use hdrhistogram::Histogram;
use serde_json::Value;

use crate::runtime::cpu::Usage;
use super::gc::GcKind;
use super::ran::{RanTracker, StallRan};

/// Lag of one window: every stretch's length, and how many were stalls.
#[derive(Clone, Debug, PartialEq)]
pub struct LagStats {
    pub stretches: u64,
    pub stalls: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// A stack the stack sampler took while a stall went on (times on the monitored thread's clock).
#[derive(Clone, Debug, PartialEq)]
pub struct Taken {
    /// When the sampler asked for it, and when the monitored thread answered: V8 answers at its
    /// next interrupt check, at once in JS, only after it returns from most builtins and C++.
    pub asked: f64,
    pub answered: f64,
    /// CPU the monitored thread used from the question until the answer arrived: what it spent
    /// running code that did not check for interrupts (the rest of a late answer is waiting).
    pub ran_ms: f64,
    pub frames: Value,
    /// The OpenTelemetry span active where the stack was taken (`{ traceId, spanId, traceFlags }`), or null.
    pub trace: Value,
}

/// A stall that has ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Stall {
    /// When the loop woke into it (monitored thread's clock, ms).
    pub start: f64,
    pub lag_ms: f64,
    /// The slot that held the loop for most of the stall.
    pub slot: usize,
    /// How long after `start` the lookout thread noticed it, if it did, and the slot charged then.
    pub noticed_after_ms: Option<f64>,
    pub noticed_slot: Option<usize>,
    /// Watch-thread samples per slot while it lasted (from half the threshold on).
    pub samples: Vec<(usize, u32)>,
    /// A stack taken while it blocked, if the stack sampler delivered one in time.
    pub stack: Option<Taken>,
    /// The stretch that was running when the monitor started (with `-r rloop/register`, the
    /// app's own start-up): begun before rloop could look at it.
    pub at_start: bool,
    /// How much of it the thread ran; `None`: unknown.
    pub ran: Option<StallRan>,
    /// Its garbage collections by kind (set by `Shared`, which holds the tally); `None`: unknown.
    pub gc: Option<Vec<GcKind>>,
}

/// Stall-length buckets of the metrics' histogram, seconds (Prometheus `le`; +Inf implied).
pub const STALL_BUCKETS: [f64; 10] = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];

/// Every stall since the monitor started, for metrics: cumulative, so a scraper loses nothing
/// between two scrapes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StallTotals {
    pub count: u64,
    pub sum_ms: f64,
    /// Stalls at most each `STALL_BUCKETS` bound long (cumulative, as Prometheus wants them).
    pub le: [u64; STALL_BUCKETS.len()],
    /// Lengths (ms) of the last `RECENT_STALLS` stalls, newest last: an OpenTelemetry histogram
    /// records each once, a reader taking those past the count it saw.
    pub recent_ms: VecDeque<f64>,
}

/// Stall lengths kept for readers: at 50 ms or more each, 1 024 take 51 s of blocked loop or
/// more, longer than OpenTelemetry's default export interval (60 s) only on a loop stalled
/// most of the time.
pub const RECENT_STALLS: usize = 1024;

pub struct Lag {
    threshold_ms: f64,
    totals: StallTotals,
    /// `WAKE` of the stretch being looked; NaN before the first.
    wake: f64,
    /// Samples per slot in the stretch being looked.
    looks: Vec<(usize, u32)>,
    noticed_at: Option<(f64, usize)>,
    stack: Option<Taken>,
    stretches: Histogram<u32>,
    stalls: u64,
    max_ms: f64,
    /// Stretches ended since the monitor started.
    ended: u64,
    ran: RanTracker,
}

fn histogram() -> Histogram<u32> {
    // Microseconds from 1 µs to an hour at 1 %: ~13 KB.
    Histogram::new_with_bounds(1, 3_600_000_000, 2).expect("valid histogram bounds")
}

impl Lag {
    pub fn new(threshold_ms: f64) -> Self {
        Lag {
            threshold_ms,
            totals: StallTotals::default(),
            wake: f64::NAN,
            looks: Vec::new(),
            noticed_at: None,
            stack: None,
            stretches: histogram(),
            stalls: 0,
            max_ms: 0.0,
            ended: 0,
            ran: RanTracker::default(),
        }
    }

    /// Ms from `now` until the lookout thread must look at this loop, `wake` being when its running
    /// stretch began (`None`: idle). A stretch younger than half the threshold cannot be noticed
    /// as a stall sooner, so a loop that never stalls is looked at a few times per threshold,
    /// not every `every` ms: each look wakes a thread, which costs CPU even on an idle process.
    pub fn look_in(&self, wake: Option<f64>, now: f64, every: f64) -> f64 {
        let quiet = self.quiet_ms();
        match wake {
            Some(w) if now - w >= quiet => every,
            Some(w) => quiet - (now - w),
            None => quiet,
        }
    }

    /// How long a stretch runs before it can be noticed as a stall sooner: half the threshold.
    fn quiet_ms(&self) -> f64 {
        (self.threshold_ms / 2.0).max(1.0)
    }

    pub fn threshold_ms(&self) -> f64 {
        self.threshold_ms
    }

    pub fn totals(&self) -> &StallTotals {
        &self.totals
    }

    fn follow(&mut self, wake: f64) {
        if wake != self.wake {
            self.wake = wake;
            self.looks.clear();
            self.noticed_at = None;
            self.stack = None;
            self.ran.follow();
        }
    }

    /// Whether a look at the idle loop at `now` should read the thread's usage for `idle_reading`.
    pub fn wants_idle_reading(&self, now: f64) -> bool {
        self.ran.wants_idle(now, self.ended, self.quiet_ms())
    }

    /// The thread's usage, read while the loop was idle: where its next stall starts.
    pub fn idle_reading(&mut self, usage: Usage) {
        self.ran.idle(usage, self.ended);
    }

    /// The lookout thread's look at a busy loop: `slot` has been charged since the loop woke at
    /// `wake`; `read` reads the thread's usage, asked for at most once a stretch. Returns true
    /// the first time this stretch is seen to be a stall.
    pub fn look(&mut self, slot: usize, wake: f64, now: f64, read: impl FnOnce() -> Option<Usage>) -> bool {
        self.follow(wake);
        if self.ran.wants_head(self.ended) {
            if let Some(usage) = read() {
                self.ran.head(usage);
            }
        }
        match self.looks.iter_mut().find(|(s, _)| *s == slot) {
            Some((_, n)) => *n += 1,
            None => self.looks.push((slot, 1)),
        }
        let newly = self.noticed_at.is_none() && now - wake >= self.threshold_ms;
        if newly {
            self.noticed_at = Some((now, slot));
        }
        newly
    }

    /// A stack taken while the stretch that woke at `wake` blocked; ignored if that stretch is
    /// over or already has a stack.
    pub fn attach_stack(&mut self, wake: f64, stack: Taken) -> bool {
        let fits = wake == self.wake && self.stack.is_none();
        if fits {
            self.stack = Some(stack);
        }
        fits
    }

    /// The idle mark: the stretch that woke at `wake` ended at `now` with `last_slot` charged;
    /// `read` reads the thread's usage, asked for only if the stretch is a stall.
    pub fn stretch_ended(&mut self, wake: f64, last_slot: usize, now: f64, read: impl FnOnce() -> Option<Usage>) -> Option<Stall> {
        let lag_ms = now - wake;
        if !lag_ms.is_finite() || lag_ms < 0.0 {
            return None;
        }
        let ended = self.ended;
        self.ended += 1;
        self.stretches.saturating_record(((lag_ms * 1e3).round() as u64).max(1));
        self.max_ms = self.max_ms.max(lag_ms);
        let looked = wake == self.wake;
        self.follow(wake);
        let stall = (lag_ms >= self.threshold_ms).then(|| {
            self.stalls += 1;
            self.totals.count += 1;
            self.totals.sum_ms += lag_ms;
            for (n, &bound) in self.totals.le.iter_mut().zip(&STALL_BUCKETS) {
                *n += u64::from(lag_ms <= bound * 1e3);
            }
            if self.totals.recent_ms.len() == RECENT_STALLS {
                self.totals.recent_ms.pop_front();
            }
            self.totals.recent_ms.push_back(lag_ms);
            let held = self.looks.iter().max_by_key(|(_, n)| *n).map_or(last_slot, |(s, _)| *s);
            Stall {
                start: wake,
                lag_ms,
                slot: held,
                noticed_after_ms: self.noticed_at.map(|(t, _)| t - wake),
                noticed_slot: self.noticed_at.map(|(_, s)| s),
                samples: std::mem::take(&mut self.looks),
                stack: self.stack.take(),
                at_start: ended == 0,
                ran: self.ran.stall(wake, ended, looked, read()),
                gc: None,
            }
        });
        self.wake = f64::NAN;
        stall
    }

    /// The stall the stretch that woke at `wake` is, if it is one by `now` (`slot` charged):
    /// what `stretch_ended` would say, for a report written while it goes on.
    pub fn ongoing(&self, wake: f64, slot: usize, now: f64, read: impl FnOnce() -> Option<Usage>) -> Option<Stall> {
        let lag_ms = now - wake;
        if lag_ms.is_nan() || lag_ms < self.threshold_ms {
            return None;
        }
        let looked = wake == self.wake; // else the lookout thread has not looked at it yet
        let looks = if looked { self.looks.clone() } else { Vec::new() };
        Some(Stall {
            start: wake,
            lag_ms,
            slot: looks.iter().max_by_key(|(_, n)| *n).map_or(slot, |(s, _)| *s),
            noticed_after_ms: self.noticed_at.filter(|_| looked).map(|(t, _)| t - wake),
            noticed_slot: self.noticed_at.filter(|_| looked).map(|(_, s)| s),
            samples: looks,
            stack: self.stack.clone().filter(|_| looked),
            at_start: self.ended == 0,
            ran: self.ran.stall(wake, self.ended, looked, read()),
            gc: None,
        })
    }

    /// This window's statistics; the next window starts empty.
    pub fn close_window(&mut self) -> LagStats {
        let h = std::mem::replace(&mut self.stretches, histogram());
        let at = |q: f64| if h.is_empty() { 0.0 } else { h.value_at_quantile(q) as f64 / 1e3 };
        let stats = LagStats { stretches: h.len(), stalls: self.stalls, p50_ms: at(0.5), p99_ms: at(0.99), max_ms: self.max_ms };
        self.stalls = 0;
        self.max_ms = 0.0;
        stats
    }
}

#[cfg(test)]
mod tests;
