//! A metric family: one name, its help, type and unit, and its samples. The Prometheus name
//! and the OpenTelemetry instrument name are both given, so every output uses one table.

use serde_json::{json, Value};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Gauge,
    Counter,
    /// Samples named `_bucket` (with `le`), `_sum` and `_count`; Prometheus only.
    Histogram,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Appended to the family's name: "" or, in a histogram, "_bucket", "_sum", "_count".
    pub suffix: &'static str,
    pub labels: Vec<(&'static str, String)>,
    pub value: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Family {
    /// Prometheus name, `_total` included for counters.
    pub name: &'static str,
    /// OpenTelemetry instrument name (the semantic convention's, where one exists).
    pub otel: &'static str,
    /// UCUM unit, as OpenTelemetry wants it: "s", "1", "{call}".
    pub unit: &'static str,
    pub help: &'static str,
    pub kind: Kind,
    pub samples: Vec<Sample>,
    /// Values to record once each (an OpenTelemetry histogram's): the stalls that ended since
    /// the reader's last read. Not in the Prometheus text, whose histogram is cumulative.
    pub events: Vec<Sample>,
    /// A histogram's bucket bounds, in its unit.
    pub buckets: &'static [f64],
}

impl Family {
    pub fn new(name: &'static str, otel: &'static str, unit: &'static str, kind: Kind, help: &'static str) -> Self {
        Family { name, otel, unit, help, kind, samples: Vec::new(), events: Vec::new(), buckets: &[] }
    }

    pub fn with_buckets(mut self, buckets: &'static [f64]) -> Self {
        self.buckets = buckets;
        self
    }

    pub fn push(&mut self, labels: Vec<(&'static str, String)>, value: f64) {
        self.samples.push(Sample { suffix: "", labels, value });
    }

    /// The shape js/metrics/ adapters read: `{ name, otel, unit, help, type, samples, events, buckets }`, each
    /// sample `{ suffix, labels, value }`.
    pub fn to_json(&self) -> Value {
        let kind = match self.kind {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
            Kind::Histogram => "histogram",
        };
        let samples = |all: &[Sample]| -> Vec<Value> {
            all.iter()
                .map(|s| {
                    let labels: serde_json::Map<String, Value> = s.labels.iter().map(|(k, v)| ((*k).to_owned(), json!(v))).collect();
                    json!({ "suffix": s.suffix, "labels": labels, "value": s.value })
                })
                .collect()
        };
        json!({ "name": self.name, "otel": self.otel, "unit": self.unit, "help": self.help, "type": kind, "samples": samples(&self.samples), "events": samples(&self.events), "buckets": self.buckets })
    }
}
