//! The Prometheus text exposition format (version 0.0.4) of metric families.

use std::fmt::Write;

use super::family::{Family, Kind};

pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// `families` as one exposition; a family without samples is left out.
pub fn render(families: &[Family]) -> String {
    let mut out = String::with_capacity(4096);
    for f in families.iter().filter(|f| !f.samples.is_empty()) {
        // A counter's TYPE line names it without `_total` (the format's metric family name).
        let family = if f.kind == Kind::Counter { f.name.trim_end_matches("_total") } else { f.name };
        let kind = match f.kind {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
            Kind::Histogram => "histogram",
        };
        let _ = writeln!(out, "# HELP {family} {}", f.help.replace('\\', "\\\\").replace('\n', "\\n"));
        let _ = writeln!(out, "# TYPE {family} {kind}");
        for s in &f.samples {
            out.push_str(f.name);
            out.push_str(s.suffix);
            if !s.labels.is_empty() {
                out.push('{');
                for (i, (k, v)) in s.labels.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{k}=\"{}\"", escape(v));
                }
                out.push('}');
            }
            let _ = writeln!(out, " {}", number(s.value));
        }
    }
    out
}

/// A label value: backslash, double quote and line feed escaped, as the format requires.
fn escape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::super::collect::{families, ScopeFigures, ThreadFigures};
    use super::*;
    use crate::stalls::lag::StallTotals;

    #[test]
    fn exposition_names_units_labels_and_escapes() {
        let t = ThreadFigures {
            thread: 0,
            busy_ms: 1500.0,
            rloop_ms: 500.0,
            elapsed_ms: 4000.0,
            last: Some((250.0, 1000.0)),
            scopes: vec![ScopeFigures { name: "GET /a\"b\\\n".into(), busy_ms: 1000.0, calls: 7.0, last_ms: 200.0, keys: Some([1.0, 2.0, 3.0]) }],
            folded: 0,
            stalls: Some(StallTotals { count: 2, sum_ms: 300.0, le: [0, 1, 1, 2, 2, 2, 2, 2, 2, 2], ..Default::default() }),
            ended_ms: vec![120.0],
            stalled: Some(("spin".into(), 1234.0)),
            slow_io: vec![("http".into(), super::super::slow_io::IoTotal { count: 3, seconds: 2.5, errors: 1 })],
            gc: [Default::default(), super::super::gc::KindTotals { count: 4, seconds: 0.012, le: [1, 4, 4, 4, 4, 4] }, Default::default(), Default::default()],
            gc_ended: vec![(1, 0.003)],
        };
        let text = render(&families(&[t]));
        for line in [
            "# TYPE nodejs_eventloop_utilization gauge",
            "nodejs_eventloop_utilization{thread=\"0\"} 0.25",
            "# TYPE nodejs_eventloop_time_seconds counter",
            "nodejs_eventloop_time_seconds_total{thread=\"0\",nodejs_eventloop_state=\"active\"} 1.5",
            "nodejs_eventloop_time_seconds_total{thread=\"0\",nodejs_eventloop_state=\"idle\"} 2",
            "nodejs_eventloop_time_seconds_total{thread=\"0\",nodejs_eventloop_state=\"rloop\"} 0.5",
            "rloop_scope_busy_seconds_total{thread=\"0\",scope=\"GET /a\\\"b\\\\\\n\"} 1",
            "rloop_scope_utilization{thread=\"0\",scope=\"GET /a\\\"b\\\\\\n\"} 0.2",
            "rloop_scope_key_busy_seconds{thread=\"0\",scope=\"GET /a\\\"b\\\\\\n\",quantile=\"0.99\"} 0.002",
            "rloop_stall_seconds_bucket{thread=\"0\",le=\"0.1\"} 1",
            "rloop_stall_seconds_bucket{thread=\"0\",le=\"+Inf\"} 2",
            "rloop_stall_seconds_sum{thread=\"0\"} 0.3",
            "rloop_stall_in_progress_seconds{thread=\"0\",scope=\"spin\"} 1.234",
            "rloop_slow_io_seconds_total{thread=\"0\",type=\"http\"} 2.5",
            "rloop_slow_io_errors_total{thread=\"0\",type=\"http\"} 1",
            "# TYPE nodejs_gc_duration_seconds histogram",
            "nodejs_gc_duration_seconds_bucket{thread=\"0\",kind=\"minor\",le=\"0.001\"} 1",
            "nodejs_gc_duration_seconds_bucket{thread=\"0\",kind=\"minor\",le=\"+Inf\"} 4",
            "nodejs_gc_duration_seconds_sum{thread=\"0\",kind=\"minor\"} 0.012",
            "nodejs_gc_duration_seconds_count{thread=\"0\",kind=\"minor\"} 4",
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
        }
        assert!(!text.contains("kind=\"major\""), "a kind never seen has no series");
    }
}
