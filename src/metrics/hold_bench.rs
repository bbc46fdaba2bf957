//! How long a scrape holds a monitor's lock, against 10 000 and 100 000 scopes charged in the
//! current and the last window, and how long the window close holds it: a benchmark, run by
//! `bash bench/metrics-lock.sh` (results in bench/metrics.md), not a test.

use crate::attribution::aggregator::{Aggregator, Config};
use crate::attribution::ledger::test_support::Memory;
use crate::stalls::lag::Lag;
use super::collect::{copy, finish};
use super::exposure::Exposure;

#[test]
#[ignore]
fn bench_lock_hold() {
    for n in [10_000usize, 100_000] {
        let cfg = Config { window_ms: 1000.0, history: 2, max_scopes: n, key_slots: 16, max_keys: 16, worst_keys: 1, time_origin: 0.0 };
        let m = Memory::new(cfg.slots());
        let l = m.ledger();
        let mut a = Aggregator::new(cfg, 0.0);
        let mut t = 0.0;
        let slots: Vec<usize> = (0..n).map(|i| a.add_scope(&format!("route-{i}"))).collect();
        // Every scope charged in the closed window and in the current one: all slots are read.
        for round in 0..2 {
            for &s in &slots {
                m.switch_to(s, t);
                m.call(s);
                t += 0.001;
            }
            l.close_running(t);
            if round == 0 {
                a.close(&l, t, None);
            }
        }
        let lag = Lag::new(50.0);
        let (mut held, mut outside) = (Vec::new(), Vec::new());
        let mut e = Exposure::default();
        for _ in 0..20 {
            let s = std::time::Instant::now();
            let c = copy(&a, &l, Some(&lag), t);
            held.push(s.elapsed().as_secs_f64() * 1e3);
            let s = std::time::Instant::now();
            let f = finish(c, &mut e, 50, |ix| ix.iter().map(|&i| a.describe_slot(i).0.to_string()).collect());
            outside.push(s.elapsed().as_secs_f64() * 1e3);
            assert!(f.is_some());
        }
        held.sort_by(f64::total_cmp);
        outside.sort_by(f64::total_cmp);
        // The first close after the scopes were added grows the structures that follow the
        // slots charged (page faults); the later ones, every scope charged again, are the steady state.
        let mut closes = Vec::new();
        for _ in 0..21 {
            let s = std::time::Instant::now();
            let p = a.close_begin(&l, t + 1.0);
            closes.push(s.elapsed().as_secs_f64() * 1e3);
            drop(p);
            for &s in &slots {
                m.switch_to(s, t);
                m.call(s);
                t += 0.001;
            }
        }
        let first = closes.remove(0);
        closes.sort_by(f64::total_cmp);
        println!("window close n={n}: lock held {first:.3} ms the first time, then median {:.3} max {:.3}", closes[10], closes[19]);
        println!("scrape n={n}: lock held median {:.3} ms max {:.3}; summed, ranked, named outside: median {:.2} max {:.2}", held[10], held[19], outside[10], outside[19]);
    }
}
