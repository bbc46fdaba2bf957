use super::*;
use crate::attribution::ledger::test_support::Memory;

fn cfg() -> Config {
    Config { window_ms: 1000.0, history: 3, max_scopes: 2, key_slots: 2, max_keys: 2, worst_keys: 1, time_origin: 0.0 }
}

fn scope<'a>(w: &'a Window, name: &str) -> &'a ScopeWindow {
    w.scopes.iter().find(|s| &*s.name == name).unwrap_or_else(|| panic!("no scope {name} in {w:?}"))
}

#[test]
fn window_sums_scopes_and_unattributed_and_includes_running_time() {
    let m = Memory::new(cfg().slots());
    let l = m.ledger();
    let mut a = Aggregator::new(cfg(), 0.0);
    let x = a.add_scope("x");
    m.switch_to(UNATTRIBUTED, 0.0);
    m.switch_to(x, 100.0);
    m.call(x);
    // x still running at 400: a live read charges it 300 ms so far.
    let w = a.measure(&l, 400.0);
    assert_eq!(w.unattributed.busy_ms, 100.0);
    assert_eq!(scope(&w, "x").busy_ms, 300.0);
    assert_eq!(scope(&w, "x").calls, 1.0);
    assert_eq!(w.busy_ms, 400.0);

    let closed = a.close(&l, 500.0, None);
    assert_eq!(scope(&closed, "x").busy_ms, 400.0);
    l.close_running(700.0);
    let next = a.measure(&l, 1000.0);
    assert_eq!(scope(&next, "x").busy_ms, 200.0, "the next window starts where the last ended");
    assert_eq!(next.busy_ms, 200.0);
    let totals = a.totals(&l, 1000.0);
    assert_eq!(totals.iter().find(|t| &*t.0 == "x").unwrap().1.busy_ms, 600.0);
}

#[test]
fn rloops_own_work_is_apart_no_scope_and_not_the_apps_busy_time() {
    let m = Memory::new(cfg().slots());
    let l = m.ledger();
    let mut a = Aggregator::new(cfg(), 0.0);
    let x = a.add_scope("x");
    m.switch_to(UNATTRIBUTED, 0.0);
    m.switch_to(RLOOP, 10.0); // a profile starting
    m.switch_to(x, 40.0);
    l.close_running(50.0);
    let w = a.close(&l, 100.0, None);
    assert_eq!((w.busy_ms, w.rloop_ms, w.unattributed.busy_ms), (20.0, 30.0, 10.0));
    assert_eq!(w.scopes.iter().map(|s| &*s.name).collect::<Vec<_>>(), ["x"]);
    assert_eq!(a.scope_of(RLOOP), UNATTRIBUTED, "a stall in it is in no scope");
    let totals = serde_json::to_value(Totals::read(&a, &l, 100.0)).unwrap();
    assert_eq!(totals["thread"], serde_json::json!({ "busyMs": 20.0, "rloopMs": 30.0 }));
    assert_eq!(totals["scopes"].as_array().unwrap().len(), 1);
}

#[test]
fn binding_and_a_close_under_the_lock_wait_on_no_name() {
    // The lookout thread names a window's scopes outside the monitor's lock, reading the name
    // table a chunk at a time; what runs under the lock must not wait on that table.
    let c = cfg();
    let m = Memory::new(c.slots());
    let l = m.ledger();
    let mut a = Aggregator::new(c.clone(), 0.0);
    let x = a.add_scope("x");
    let names = a.names.clone();
    m.switch_to(x, 0.0);
    m.call(x);
    m.switch_to(UNATTRIBUTED, 10.0);
    let (done, got) = std::sync::mpsc::channel();
    let pending = std::thread::scope(|s| {
        let held = names.hold();
        s.spawn(|| {
            a.bind_key(&l, FIRST_SCOPE + c.max_scopes, x, "k".into()).unwrap();
            let _ = done.send(a.close_begin(&l, 20.0));
        });
        let pending = got.recv_timeout(std::time::Duration::from_secs(20));
        drop(held);
        pending.expect("close_begin waited on the name table")
    });
    assert_eq!(scope(&pending.finish(None), "x").busy_ms, 10.0);
}

#[test]
fn scopes_past_the_cap_go_to_other_and_are_counted() {
    let mut a = Aggregator::new(cfg(), 0.0);
    assert_eq!(a.add_scope("a"), FIRST_SCOPE);
    assert_eq!(a.add_scope("b"), FIRST_SCOPE + 1);
    assert_eq!(a.add_scope("c"), OTHER);
    assert_eq!(a.add_scope("b"), FIRST_SCOPE + 1, "a name registered before keeps its slot once full");
    assert_eq!(a.add_scope("(other)"), OTHER, "past the cap, a name is no built-in slot's");
    assert_eq!(a.add_scope("c"), OTHER);
    assert_eq!(a.scopes_overflowed(), 3, "each entry past the cap counts");
}

#[test]
fn keys_get_percentiles_worst_and_survive_rebinding() {
    let c = cfg();
    let m = Memory::new(c.slots());
    let l = m.ledger();
    let mut a = Aggregator::new(c.clone(), 0.0);
    let s = a.add_scope("route");
    let k0 = FIRST_SCOPE + c.max_scopes;
    a.bind_key(&l, k0, s, "req-1".into()).unwrap();
    m.switch_to(k0, 0.0);
    m.switch_to(UNATTRIBUTED, 10.0);
    a.bind_key(&l, k0 + 1, s, "req-2".into()).unwrap();
    m.switch_to(k0 + 1, 10.0);
    m.switch_to(UNATTRIBUTED, 40.0);
    // The ring comes round: req-1's 10 ms are retired into this window, req-3 starts at zero.
    a.bind_key(&l, k0, s, "req-3".into()).unwrap();
    m.switch_to(k0, 40.0);
    l.close_running(45.0);
    let w = a.close(&l, 50.0, None);
    let route = scope(&w, "route");
    assert_eq!(route.busy_ms, 45.0);
    let named = w.keys_of(route).unwrap();
    let keys = named.stats;
    assert_eq!(keys.count, 3, "req-1 (retired, 10 ms), req-2 (30 ms), req-3 (5 ms)");
    assert_eq!(keys.dropped, 1, "max_keys = 2: the least busy key loses its name");
    assert_eq!(named.worst().collect::<Vec<_>>(), vec![("req-2", 30.0)]);
    assert_eq!(keys.max_ms, 30.0);
    assert!((keys.p50_ms - 10.0).abs() < 0.1, "{keys:?}");
    assert!((keys.p99_ms - 30.0).abs() < 0.3, "{keys:?}");
    assert!(a.bind_key(&l, OTHER, s, "x".into()).is_err(), "(other) is not a key slot");
    m.switch_to(k0, 50.0);
    let err = a.bind_key(&l, k0, s, "req-4".into()).unwrap_err();
    assert_eq!(err, format!("slot {k0} is being charged"), "its running interval would go to the new key");
}

#[test]
fn a_rescoped_key_takes_its_window_so_far_and_leaves_earlier_windows() {
    let c = cfg();
    let m = Memory::new(c.slots());
    let l = m.ledger();
    let mut a = Aggregator::new(c.clone(), 0.0);
    let path = a.add_scope("GET /weather/paris");
    let route = a.add_scope("GET /weather/:city");
    let k0 = FIRST_SCOPE + c.max_scopes;
    a.bind_key(&l, k0, path, "req-1".into()).unwrap();
    m.switch_to(k0, 0.0);
    m.call(k0);
    let first = a.close(&l, 10.0, None); // the key ran 10 ms under its first scope
    assert_eq!(scope(&first, "GET /weather/paris").busy_ms, 10.0);
    m.switch_to(UNATTRIBUTED, 14.0);
    m.switch_to(k0, 20.0);
    a.rescope_key(k0, route).expect("the slot charged now may be rescoped");
    l.close_running(25.0);
    let w = a.close(&l, 30.0, None);
    assert!(w.scopes.iter().all(|s| &*s.name != "GET /weather/paris"), "this window's time of the key moved with it: {w:?}");
    let moved = scope(&w, "GET /weather/:city");
    assert_eq!(moved.busy_ms, 9.0, "4 ms before the move and 5 ms after");
    assert_eq!(w.keys_of(moved).unwrap().worst().collect::<Vec<_>>(), vec![("req-1", 9.0)]);
    let total = |name: &str| a.totals(&l, 30.0).iter().find(|t| &*t.0 == name).unwrap().1.busy_ms;
    assert_eq!((total("GET /weather/paris"), total("GET /weather/:city")), (10.0, 9.0), "the closed window keeps its part");
    assert!(a.rescope_key(k0 + 1, route).is_err(), "an unbound key slot has no key to move");
    assert!(a.rescope_key(k0, 99).is_err(), "to a scope registered only");
}

#[test]
fn history_keeps_the_last_n_windows() {
    let m = Memory::new(cfg().slots());
    let l = m.ledger();
    let mut a = Aggregator::new(cfg(), 0.0);
    for i in 1..=5 {
        a.close(&l, i as f64 * 1000.0, None);
    }
    let seqs: Vec<u64> = a.history().map(|w| w.seq).collect();
    assert_eq!(seqs, vec![3, 4, 5]);
    assert_eq!(a.due(), 6000.0);
    assert_eq!(m.get(crate::attribution::ledger::WINDOW), 6.0, "JS reads the window open now");
}

#[test]
fn the_history_stays_within_its_bytes_dropping_the_oldest_and_counting_them() {
    let c = Config { history: 1000, max_scopes: 10_000, ..cfg() };
    let m = Memory::new(c.slots());
    let l = m.ledger();
    let mut a = Aggregator::new(c, 0.0);
    let scopes: Vec<usize> = (0..10_000).map(|i| a.add_scope(&format!("s{i}"))).collect();
    let mut t = 0.0;
    let mut widest = 0;
    for seq in 1..=40u64 {
        for &s in &scopes {
            m.call(s); // every scope charged in every window
        }
        t += 1000.0;
        let w = a.close(&l, t, None);
        widest = widest.max(w.heap_bytes());
        let kept: usize = a.history().map(|w| w.heap_bytes()).sum();
        assert!(kept <= HISTORY_BYTES, "{kept} bytes kept");
        assert_eq!(a.history().last().unwrap().seq, seq, "the newest window stays");
        assert_eq!(a.history().count() as u64 + a.history_dropped(), seq, "every window kept or counted");
    }
    assert!(widest > 10_000 * std::mem::size_of::<ScopeWindow>(), "{widest} bytes for 10 000 scopes");
    assert!(a.history_dropped() > 0 && a.history().count() > 1);
    let seqs: Vec<u64> = a.history().map(|w| w.seq).collect();
    assert!(seqs.windows(2).all(|p| p[1] == p[0] + 1), "the newest windows, in order: {seqs:?}");
}

#[test]
fn with_more_slots_in_use_than_a_sweep_late_work_of_a_quiet_key_is_found_not_lost() {
    let c = Config { window_ms: 10.0, key_slots: crate::attribution::slots::sweep_for(10.0) + 10, max_keys: 10, ..cfg() };
    let m = Memory::new(c.slots());
    let l = m.ledger();
    let mut a = Aggregator::new(c.clone(), 0.0);
    let s = a.add_scope("s");
    let k0 = FIRST_SCOPE + c.max_scopes;
    for j in 0..c.key_slots {
        a.bind_key(&l, k0 + j, s, format!("k{j}").into()).unwrap();
    }
    let mut t = 0.0;
    for _ in 0..=crate::attribution::slots::GRACE {
        t += 10.0;
        a.close(&l, t, None); // every key slot quiet: they leave the active list
    }
    m.switch_to(k0 + 7, t + 1.0); // late work of key 7, unlisted by now
    m.switch_to(UNATTRIBUTED, t + 6.0);
    let mut found = 0.0;
    for _ in 0..2 {
        t += 10.0;
        found += a.close(&l, t, None).scopes.iter().filter(|x| &*x.name == "s").map(|x| x.busy_ms).sum::<f64>();
    }
    assert_eq!(found, 5.0, "the sweep reached it within keySlots / SWEEP windows");
    assert_eq!(a.totals(&l, t).iter().find(|x| &*x.0 == "s").unwrap().1.busy_ms, 5.0);
}

#[test]
fn a_close_of_a_churning_key_ring_counts_its_scratch_to_be_given_back() {
    // What malloc keeps after a close of tens of thousands of charged slots is what the
    // lookout thread gives back (malloc::lasting); a close of a few slots counts nothing.
    let c = Config { key_slots: 1 << 16, max_keys: 10_000, ..cfg() };
    let m = Memory::new(c.slots());
    let l = m.ledger();
    let mut a = Aggregator::new(c.clone(), 0.0);
    let s = a.add_scope("s");
    let k0 = FIRST_SCOPE + c.max_scopes;
    let few = a.close_begin(&l, 1.0);
    assert_eq!(crate::runtime::malloc::lasting(few.scratch_bytes()), 0);
    let mut t = 1.0;
    for j in 0..c.key_slots {
        a.bind_key(&l, k0 + j, s, format!("key-{j}").into()).unwrap();
        m.switch_to(k0 + j, t);
        m.call(k0 + j);
        t += 0.001;
    }
    m.switch_to(UNATTRIBUTED, t);
    let many = a.close_begin(&l, t + 1.0);
    assert_eq!(many.charges.len(), c.key_slots + 1, "every key slot was charged, and unattributed");
    assert!(crate::runtime::malloc::lasting(many.scratch_bytes()) >= c.key_slots * 80, "{} bytes", many.scratch_bytes());
}

#[test]
fn a_close_being_built_is_due_now() {
    let c = Config { window_ms: 10.0, ..cfg() };
    let m = Memory::new(c.slots());
    let l = m.ledger();
    let mut a = Aggregator::new(c, 0.0);
    assert_eq!(a.next_kept(), 10.0);
    let pending = a.close_begin(&l, 10.5);
    assert_eq!(a.due(), 20.0);
    assert_eq!(a.next_kept(), 10.5, "the window closed at 10.5 is not in the history yet");
    a.close_end(pending.finish(None));
    assert_eq!(a.next_kept(), 20.0);
    assert_eq!(a.history().count(), 1);
}

#[test]
fn windows_keep_to_a_fixed_schedule_when_closed_late() {
    let c = Config { window_ms: 10.0, ..cfg() };
    let m = Memory::new(c.slots());
    let l = m.ledger();
    let mut a = Aggregator::new(c, 0.0);
    let mut ends = Vec::new();
    for i in 0..100 {
        let late = [0.3, 1.2, 0.05, 1.9][i % 4]; // the lookout thread wakes a little late
        let now = a.due() + late;
        ends.push(a.close(&l, now, None).end);
    }
    assert_eq!(a.due(), 1010.0, "due times stay on the 10 ms grid");
    let mean = ends.last().unwrap() / ends.len() as f64;
    assert!((mean - 10.0).abs() < 0.03, "mean window {mean} ms");
    a.close(&l, a.due() + 25.0, None); // more than a window late: the schedule restarts
    assert_eq!(a.due(), 1045.0);
}

#[test]
fn json_has_elu_and_epoch_times() {
    let m = Memory::new(cfg().slots());
    let l = m.ledger();
    let mut a = Aggregator::new(cfg(), 0.0);
    let x = a.add_scope("x");
    m.switch_to(x, 0.0);
    let v = serde_json::to_value(a.close(&l, 250.0, None).json(1_000_000.0)).unwrap();
    assert_eq!(v["start"], 1_000_000.0);
    assert_eq!(v["durationMs"], 250.0);
    assert_eq!(v["thread"]["elu"], 1.0);
    assert_eq!(v["scopes"][0]["name"], "x");
    assert_eq!(v["unattributed"]["busyMs"], 0.0);
}
