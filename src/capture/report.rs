//! Reports the addon finishes itself, when the capture's thread cannot run JS any more: its
//! loop blocked when a signal ends the process (src/capture/signals.rs), or a worker terminated
//! mid-capture (src/runtime/uv.rs). At capture start JS hands over a draft — the report as far
//! as it is known then (meta, options, output path, redacted already) and the totals it starts
//! from; here it is completed from the recording: windows, stalls, the stall going on, busy
//! time per scope up to now, the slow I/O events JS pushed as they came. What only JS holds
//! (I/O aggregates, heap, the CPU profile) is listed as missing. The JSON is written beside,
//! and atomically (tmp + rename): a process dying by signal leaves either the whole report or
//! none.

use std::collections::HashMap;
use std::io::Write;

use serde_json::{json, Value};

use crate::attribution::aggregator::Totals;
use crate::runtime::shared::Shared;
use crate::stalls::event::stall_event;
use super::recording::Recording;

/// A running recording that came with a report draft, with what is needed to finish its report.
pub struct Unfinished {
    /// `{ report, totalsBefore, path, missing, say }` from js/report/build.js's reportDraft.
    pub draft: Value,
    /// `{ windows, lag: { events, dropped } }`, as `Recording::to_json` gives it.
    pub recorded: Value,
    /// `{ events, dropped }`, the slow I/O events: `Recording::io_json`.
    pub io: Value,
    /// The thread's totals now (`totals_json`), `None` once its monitor was detached.
    pub totals: Option<Value>,
    /// The stall going on, as its lag event marked `ongoing`.
    pub ongoing: Option<Value>,
    /// Now, epoch ms.
    pub end: f64,
}

/// Finishes and writes the reports of `shared`'s drafted recordings. Never panics; a report that
/// cannot be written is said on stderr when its capture asked for that (`say`).
pub fn finish_thread(shared: &Shared, reason: &str, why: &str) {
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        for u in drafted(shared) {
            if let Some((path, report, say)) = complete(u, reason, why) {
                if let Err(e) = write(&path, &report) {
                    if say {
                        // One write(2), as register's own lines; nothing else of ours reaches stderr.
                        let _ = std::io::stderr().write_all(format!("rloop: report not written: {e}, open '{path}'\n").as_bytes());
                    }
                }
            }
        }
    }));
}

/// Every running recording of `shared` that came with a report draft, each with the totals now
/// and the stall going on, as its lag event. The recordings go on: should the process live
/// on, their captures end as usual (and their JS writes over what is written here).
fn drafted(shared: &Shared) -> Vec<Unfinished> {
    shared.view(|v| {
        if !v.recordings.iter().any(|(_, r)| r.draft.is_some()) {
            return Vec::new();
        }
        let now = shared.clock.now();
        let origin = v.agg.config().time_origin;
        let totals = v.ledger.map(|l| serde_json::to_value(Totals::read(v.agg, l, now)).unwrap_or_default());
        let running = v.ledger.and_then(|l| l.running().map(|(slot, _)| (l.wake(), slot)));
        let ongoing = v.lag.zip(running).and_then(|(lag, (wake, slot))| lag.ongoing(wake, slot, now, || shared.meter.read(now)).map(|mut stall| {
            stall.gc = shared.gc_record.of(wake);
            stall
        })).map(|stall| {
            let mut event = stall_event(shared.thread_id, v.agg, stall);
            event["ongoing"] = json!(true);
            event
        });
        let unfinished = |r: &Recording| Some(Unfinished { draft: r.draft.clone()?, recorded: serde_json::from_str(&r.to_json_string(origin)).unwrap_or_default(), io: r.io_json(), totals: totals.clone(), ongoing: ongoing.clone(), end: origin + now });
        v.recordings.iter().filter_map(|(_, r)| unfinished(r)).collect()
    })
}

/// The report of `u`, ended now for `reason`, with the path to write it to and whether a
/// failure to is said; `None` for a draft without a path or start.
pub fn complete(u: Unfinished, reason: &str, why: &str) -> Option<(String, Value, bool)> {
    let Unfinished { mut draft, recorded, io, totals, ongoing, end } = u;
    let path = draft["path"].as_str()?.to_owned();
    let mut report = draft["report"].take();
    let start = report["meta"]["start"].as_f64()?;
    let duration = (end - start).max(0.0);
    let meta = &mut report["meta"];
    meta["end"] = json!(end.max(start));
    meta["durationMs"] = json!(duration);
    meta["partial"] = json!(true);
    meta["reason"] = json!(reason);
    meta["incomplete"] = json!({ "reason": why, "missing": draft["missing"].take() });
    let before = &draft["totalsBefore"];
    let windows = recorded["windows"].as_array().cloned().unwrap_or_default();
    let elu = elu_between(before, totals.as_ref().unwrap_or(before), duration);
    for part in ["thread", "unattributed", "scopes"] {
        report["elu"][part] = elu[part].clone();
    }
    report["elu"]["windows"] = json!(windows);
    let lag = &mut report["lag"];
    let mut events = recorded["lag"]["events"].as_array().cloned().unwrap_or_default();
    if lag["enabled"] == true {
        events.extend(ongoing);
    }
    lag["events"] = json!(events);
    lag["dropped"] = recorded["lag"]["dropped"].clone();
    lag["summary"] = lag_summary(&windows);
    if report["io"]["enabled"] == true {
        report["io"]["events"] = io["events"].clone();
        report["io"]["dropped"] = io["dropped"].clone();
    }
    Some((path, report, draft["say"] == true))
}

fn num(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or(0.0)
}

/// A count read as f64, written as the integer it is.
fn count(n: f64) -> u64 {
    n.max(0.0).round() as u64
}

/// As js/report/build.js's eluBetween: busy time per scope between two totals.
fn elu_between(before: &Value, after: &Value, duration: f64) -> Value {
    let elu = |busy: f64| if duration > 0.0 { (busy / duration).min(1.0) } else { 0.0 };
    let empty = Vec::new();
    let list = |v: &Value| v["scopes"].as_array().unwrap_or(&empty).clone();
    let was: HashMap<String, Value> = list(before).into_iter().filter_map(|s| Some((s["name"].as_str()?.to_owned(), s))).collect();
    let mut scopes: Vec<Value> = list(after)
        .iter()
        .filter_map(|s| {
            let name = s["name"].as_str()?;
            let b = was.get(name);
            // Never below zero: a key moved to another scope takes its window's time with it.
            let busy = (num(s, "busyMs") - b.map_or(0.0, |b| num(b, "busyMs"))).max(0.0);
            let calls = num(s, "calls") - b.map_or(0.0, |b| num(b, "calls"));
            (busy > 0.0 || calls > 0.0).then(|| json!({ "name": name, "busyMs": busy, "elu": elu(busy), "calls": count(calls) }))
        })
        .collect();
    scopes.sort_by(|a, b| num(b, "busyMs").total_cmp(&num(a, "busyMs")).then_with(|| a["name"].as_str().cmp(&b["name"].as_str())));
    let diff = |part: &str, key: &str| num(&after[part], key) - num(&before[part], key);
    let (thread, unattributed) = (diff("thread", "busyMs"), diff("unattributed", "busyMs"));
    let mut thread = json!({ "busyMs": thread, "elu": elu(thread) });
    let rloop = diff("thread", "rloopMs");
    if rloop > 0.0 {
        thread["rloopMs"] = json!(rloop);
    }
    json!({
        "thread": thread,
        "unattributed": { "busyMs": unattributed, "elu": elu(unattributed), "calls": count(diff("unattributed", "calls")) },
        "scopes": scopes,
    })
}

/// As js/report/build.js's lagSummary: over the windows, p99 the worst window's, capped at max.
fn lag_summary(windows: &[Value]) -> Value {
    let lags: Vec<&Value> = windows.iter().map(|w| &w["lag"]).filter(|l| l.is_object()).collect();
    let max = lags.iter().map(|l| num(l, "maxMs")).fold(0.0, f64::max);
    let p99 = lags.iter().map(|l| num(l, "p99Ms").min(num(l, "maxMs"))).fold(0.0, f64::max);
    json!({
        "stalls": count(lags.iter().map(|l| num(l, "stalls")).sum()),
        "stretches": count(lags.iter().map(|l| num(l, "stretches")).sum()),
        "p99Ms": p99.min(max),
        "maxMs": max,
    })
}

/// Writes `report` to `path` through a temporary file beside it, renamed over it once whole.
fn write(path: &str, report: &Value) -> std::io::Result<()> {
    let text = serde_json::to_string(report)? + "\n";
    let tmp = format!("{path}.{}.tmp", std::process::id());
    std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path)).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(busy: f64, x: f64, calls: f64) -> Value {
        json!({ "thread": { "busyMs": busy }, "unattributed": { "busyMs": busy - x, "calls": 1 }, "scopes": [{ "name": "x", "busyMs": x, "calls": calls }] })
    }

    #[test]
    fn a_draft_is_completed_from_the_recording_and_marked_incomplete() {
        let draft = json!({
            "report": { "schema": "rloop-report/1", "meta": { "start": 1000.0, "end": null, "partial": false, "reason": null }, "elu": { "windowMs": 100 }, "lag": { "enabled": true, "thresholdMs": 50 }, "io": { "enabled": true, "thresholdMs": 500, "events": [], "dropped": 0, "aggregates": [] }, "heap": null, "profile": null },
            "totalsBefore": totals(10.0, 5.0, 2.0),
            "path": "/tmp/r.json",
            "missing": ["io.aggregates", "heap"],
            "say": true,
        });
        let window = json!({ "seq": 1, "lag": { "stretches": 3, "stalls": 1, "p50Ms": 1, "p99Ms": 90, "maxMs": 80 } });
        let ongoing = json!({ "lagMs": 700, "scope": "blocker", "ongoing": true });
        let recorded = json!({ "windows": [window], "lag": { "events": [{ "lagMs": 80 }], "dropped": 0 } });
        let slow = json!({ "type": "dns", "method": "lookup", "target": "db", "durationMs": 600 });
        let io = json!({ "events": [slow.clone()], "dropped": 2 });
        let mut after = totals(810.0, 705.0, 3.0);
        after["thread"]["rloopMs"] = json!(40.0); // rloop's own work, apart (none in totalsBefore: an older shape reads as 0)
        let u = Unfinished { draft, recorded, io, totals: Some(after), ongoing: Some(ongoing.clone()), end: 2000.0 };
        let (path, r, say) = complete(u, "SIGTERM", "signal SIGTERM while the loop was blocked").unwrap();
        assert_eq!((path.as_str(), say), ("/tmp/r.json", true));
        assert_eq!(r["meta"]["durationMs"], 1000.0);
        assert_eq!((&r["meta"]["partial"], &r["meta"]["reason"]), (&json!(true), &json!("SIGTERM")));
        assert_eq!(r["meta"]["incomplete"], json!({ "reason": "signal SIGTERM while the loop was blocked", "missing": ["io.aggregates", "heap"] }));
        assert_eq!((&r["io"]["events"], &r["io"]["dropped"]), (&json!([slow]), &json!(2)));
        assert_eq!(r["elu"]["scopes"], json!([{ "name": "x", "busyMs": 700.0, "elu": 0.7, "calls": 1 }]));
        assert_eq!(r["elu"]["thread"], json!({ "busyMs": 800.0, "elu": 0.8, "rloopMs": 40.0 }));
        assert_eq!(r["elu"]["windowMs"], 100);
        assert_eq!(r["lag"]["events"][1], ongoing, "the stall going on comes last");
        assert_eq!(r["lag"]["summary"], json!({ "stalls": 1, "stretches": 3, "p99Ms": 80.0, "maxMs": 80.0 }));
    }

    #[test]
    fn a_report_is_written_whole_or_not_at_all() {
        let dir = std::env::temp_dir().join(format!("rloop-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.json").to_string_lossy().into_owned();
        write(&path, &json!({ "a": 1 })).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"a\":1}\n");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temporary file left");
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(write(&path, &json!({})).is_err(), "its folder is gone");
    }
}
