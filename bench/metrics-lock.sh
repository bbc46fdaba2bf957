#!/usr/bin/env bash
# How long a metrics scrape holds a monitor's lock (the lock the loop's idle mark, keyed scopes
# and the window close take) with 10 000 and 100 000 scopes: src/metrics/hold_bench.rs.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release --lib bench_lock_hold -- --ignored --nocapture 2>/dev/null | grep -E '^(scrape|window close)'
