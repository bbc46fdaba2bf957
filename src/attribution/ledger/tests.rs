use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::Arc;

use super::test_support::Memory;
use super::{as_i32, Reading, RUNNING, SEQ, SINCE};

#[test]
fn a_snapshot_mid_switch_leaves_the_running_interval_out() {
    let m = Memory::new(4);
    let l = m.ledger();
    m.switch_to(2, 10.0);
    m.switch_to(3, 30.0);
    let busy = |ms| Reading { busy_ms: ms, calls: 0.0 };
    assert_eq!(l.snapshot(50.0, |_| vec![2, 3]), (50.0, vec![(2, busy(20.0)), (3, busy(20.0))]));
    as_i32(&m.cells[RUNNING], SEQ).fetch_add(1, Relaxed); // a writer paused inside a switch
    assert_eq!(l.snapshot(50.0, |_| vec![2, 3]), (50.0, vec![(2, busy(20.0)), (3, busy(0.0))]));
}

#[test]
fn running_interval_counts_live_and_closes_once() {
    let m = Memory::new(4);
    let l = m.ledger();
    m.switch_to(2, 10.0);
    let r = l.running();
    assert_eq!(r, Some((2, 10.0)));
    assert_eq!(l.read(2, r, 25.0).busy_ms, 15.0);
    m.switch_to(3, 30.0);
    assert_eq!(l.read(2, l.running(), 40.0).busy_ms, 20.0);
    l.close_running(35.0);
    assert_eq!(l.running(), None);
    assert_eq!(m.get(SINCE), 35.0, "idle since the mark");
    assert_eq!(l.read(3, None, 99.0).busy_ms, 5.0);
    l.close_running(50.0); // idle: nothing more is charged
    assert_eq!(l.read(3, None, 99.0).busy_ms, 5.0);
}

/// One thread switches slots as fast as it can, as JS does off x64, on a fake clock it
/// stamps after each switch: stretches of 16 one-ms intervals, then an idle gap. Another
/// takes snapshots half a ms past the stamp it saw: the running interval it sees began at
/// that stamp or later (a torn pair would give an earlier start: the last interval or the
/// idle gap charged again), and the busy time it reads is no more than the timeline has by
/// the stamp after it, give or take the switch in flight.
#[test]
fn a_reader_racing_switches_never_overcounts() {
    const SLOTS: usize = 3;
    const RUN: u32 = 16; // switches per stretch, 1 ms apart
    const PERIOD: f64 = 1000.0; // ms from one stretch's wake to the next
    let m = Arc::new(Memory::new(SLOTS));
    let clock = Arc::new(AtomicU64::new(f64::NAN.to_bits()));
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (m, clock, done) = (m.clone(), clock.clone(), done.clone());
        std::thread::spawn(move || {
            let l = m.ledger();
            for j in 0..8_000u32 {
                let wake = f64::from(j) * PERIOD;
                for k in 0..RUN {
                    m.switch_to(((j * RUN + k) % SLOTS as u32) as usize, wake + f64::from(k));
                    clock.store((wake + f64::from(k)).to_bits(), Release);
                    (0..100).for_each(|_| std::hint::spin_loop()); // for the reader to catch up now and then
                }
                l.close_running(wake + f64::from(RUN));
            }
            done.store(true, Release);
        })
    };
    let l = m.ledger();
    let (mut reads, mut live) = (0u64, 0u64);
    let busy_at = |stamp: f64| f64::from(RUN) * (stamp / PERIOD).floor() + stamp % PERIOD;
    while !done.load(Acquire) {
        let stamp = f64::from_bits(clock.load(Acquire));
        if stamp.is_nan() {
            continue;
        }
        let now = stamp + 0.5;
        let running = l.running();
        let (_, readings) = l.snapshot(now, |_| (0..SLOTS as u32).collect());
        let total: f64 = readings.iter().map(|(_, r)| r.busy_ms).sum();
        let after = f64::from_bits(clock.load(Acquire));
        if let Some((_, since)) = running {
            assert!(since >= stamp, "the slot switched to after {stamp} ms runs since {since}");
            live += u64::from(now > since);
        }
        assert!(total <= busy_at(after) + 1.5, "read {total} ms busy by {after}, the timeline has {}", busy_at(after));
        reads += 1;
    }
    writer.join().unwrap();
    assert!(reads > 1000 && live > 0, "{reads} reads, {live} with a live interval");
}
