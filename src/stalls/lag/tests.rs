use super::*;
use crate::runtime::cgroup::Throttled;
use crate::runtime::cpu::Ran;
use serde_json::json;

/// No usage to read (as off Linux).
fn unread() -> Option<Usage> {
    None
}

#[test]
fn a_loop_is_looked_at_often_only_once_its_stretch_is_half_a_threshold_old() {
    let lag = Lag::new(50.0);
    assert_eq!(lag.look_in(None, 1000.0, 5.0), 25.0, "idle: no stall can be noticed within 25 ms");
    assert_eq!(lag.look_in(Some(990.0), 1000.0, 5.0), 15.0, "young stretch: look when it is 25 ms old");
    assert_eq!(lag.look_in(Some(970.0), 1000.0, 5.0), 5.0, "old stretch: every 5 ms");
    assert_eq!(Lag::new(1.0).look_in(None, 0.0, 5.0), 1.0, "never more often than every ms while idle");
}

#[test]
fn a_stall_is_noticed_while_running_and_attributed_to_the_slot_that_held_the_loop() {
    let mut lag = Lag::new(50.0);
    assert!(!lag.look(3, 100.0, 110.0, unread));
    assert!(!lag.look(7, 100.0, 120.0, unread));
    assert!(lag.look(7, 100.0, 160.0, unread), "noticed once past the threshold");
    assert!(!lag.look(7, 100.0, 170.0, unread), "and only once");
    let taken = |frames: Value| Taken { asked: 160.0, answered: 161.0, ran_ms: 1.0, frames, trace: Value::Null };
    assert!(lag.attach_stack(100.0, taken(json!(["busy"]))));
    assert!(!lag.attach_stack(100.0, taken(json!(["late"]))), "the first stack wins");
    let stall = lag.stretch_ended(100.0, 3, 400.0, unread).unwrap();
    let expected = Stall {
        start: 100.0,
        lag_ms: 300.0,
        slot: 7,
        noticed_after_ms: Some(60.0),
        noticed_slot: Some(7),
        samples: vec![(3, 1), (7, 3)],
        stack: Some(taken(json!(["busy"]))),
        at_start: true,
        ran: None,
        gc: None,
    };
    assert_eq!(stall, expected);
    assert!(!lag.attach_stack(100.0, taken(json!(["after"]))), "a stack for an ended stall is dropped");
}

#[test]
fn a_stall_going_on_reads_as_it_would_end_now() {
    let mut lag = Lag::new(50.0);
    assert_eq!(lag.ongoing(100.0, 3, 140.0, unread), None, "not a stall yet");
    assert!(!lag.look(3, 100.0, 130.0, unread));
    assert!(lag.look(7, 100.0, 160.0, unread));
    lag.look(7, 100.0, 170.0, unread);
    let s = lag.ongoing(100.0, 3, 400.0, unread).unwrap();
    assert_eq!((s.start, s.lag_ms, s.slot, s.noticed_after_ms, s.at_start), (100.0, 300.0, 7, Some(60.0), true));
    let unseen = lag.ongoing(500.0, 4, 600.0, unread).unwrap();
    assert_eq!((unseen.slot, unseen.noticed_after_ms, unseen.samples.len()), (4, None, 0), "not looked at yet: the slot charged");
    assert_eq!(lag.stretch_ended(100.0, 3, 400.0, unread).unwrap().slot, 7, "reading it changed nothing");
}

#[test]
fn short_stretches_only_feed_the_histogram() {
    let mut lag = Lag::new(50.0);
    for i in 0..99 {
        assert_eq!(lag.stretch_ended(i as f64 * 10.0, 0, i as f64 * 10.0 + 1.0, unread), None);
    }
    let stall = lag.stretch_ended(2000.0, 4, 2080.0, unread).unwrap();
    assert_eq!((stall.slot, stall.noticed_after_ms, stall.stack.is_none()), (4, None, true), "never looked at: the last slot");
    let s = lag.close_window();
    assert_eq!((s.stretches, s.stalls), (100, 1));
    let t = lag.totals();
    assert_eq!((t.count, t.sum_ms), (1, 80.0), "only the stall is in the totals");
    assert_eq!(t.le[..3], [0, 1, 1], "80 ms: above 50 ms, within 100 ms");
    assert!((s.p50_ms - 1.0).abs() < 0.02, "{s:?}");
    assert!((s.max_ms - 80.0).abs() < 1e-9);
    assert_eq!(lag.close_window().stretches, 0, "windows do not carry over");
}

#[test]
fn a_stall_after_an_idle_reading_says_how_much_of_it_the_thread_ran() {
    let usage = |at, cpu_ms, throttled| Some(Usage { at, cpu_ms, throttled: Some(Throttled::one(throttled)) });
    let mut lag = Lag::new(50.0);
    assert!(lag.stretch_ended(0.0, 2, 10.0, || panic!("a short stretch reads nothing")).is_none());
    assert!(lag.wants_idle_reading(50.0));
    lag.idle_reading(usage(50.0, 20.0, 0.0).unwrap());
    assert!(!lag.wants_idle_reading(60.0), "read 10 ms ago, half the threshold is 25");
    assert!(!lag.look(3, 100.0, 130.0, || panic!("the idle reading is its start")));
    let stall = lag.stretch_ended(100.0, 3, 410.0, || usage(410.0, 110.0, 210.0)).unwrap();
    assert_eq!(stall.ran.map(|r| (r.from_ms, r.ran)), Some((0.0, Ran { cpu_ms: 90.0, throttled_ms: Some(210.0) })), "310 ms: ran 90, throttled 210");

    // Stretches ran after the idle reading: measured from the first look at the stall.
    lag.idle_reading(usage(420.0, 111.0, 210.0).unwrap());
    lag.stretch_ended(430.0, 2, 431.0, unread);
    assert!(!lag.look(3, 500.0, 525.0, || usage(525.0, 112.0, 210.0)));
    assert!(lag.look(3, 500.0, 560.0, || panic!("read once a stretch")));
    let s = lag.ongoing(500.0, 3, 600.0, || usage(600.0, 187.0, 210.0)).unwrap();
    assert_eq!(s.ran.map(|r| (r.from_ms, r.ran.cpu_ms)), Some((25.0, 75.0)), "a stall going on, so far");
    let stall = lag.stretch_ended(500.0, 3, 700.0, || usage(700.0, 200.0, 290.0)).unwrap();
    assert_eq!(stall.ran.map(|r| (r.from_ms, r.ran)), Some((25.0, Ran { cpu_ms: 88.0, throttled_ms: Some(80.0) })));
    assert!(lag.stretch_ended(800.0, 3, 900.0, || usage(900.0, 250.0, 290.0)).unwrap().ran.is_none(), "never read before it: unknown");
}
