//! Slow I/O by type: JS knows when an operation is slow (js/io/index.js) and pushes each one here
//! (a call per slow operation, rare by definition: 500 ms by default), where scrapes read it.

use parking_lot::Mutex;

/// Distinct types kept; js/io/index.js has six. More are counted under the last one, "(other)".
const MAX_TYPES: usize = 16;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IoTotal {
    pub count: u64,
    pub seconds: f64,
    pub errors: u64,
}

#[derive(Default)]
pub struct SlowIo {
    by_type: Mutex<Vec<(String, IoTotal)>>,
}

impl SlowIo {
    /// One slow operation of type `kind` that took `seconds`; `failed`: it ended in an error.
    pub fn record(&self, kind: &str, seconds: f64, failed: bool) {
        let mut all = self.by_type.lock();
        let i = match all.iter().position(|(k, _)| k == kind) {
            Some(i) => i,
            None if all.len() < MAX_TYPES - 1 => {
                all.push((kind.to_owned(), IoTotal::default()));
                all.len() - 1
            }
            None => match all.iter().position(|(k, _)| k == "(other)") {
                Some(i) => i,
                None => {
                    all.push(("(other)".to_owned(), IoTotal::default()));
                    all.len() - 1
                }
            },
        };
        let t = &mut all[i].1;
        t.count += 1;
        t.seconds += seconds.max(0.0);
        t.errors += u64::from(failed);
    }

    pub fn read(&self) -> Vec<(String, IoTotal)> {
        self.by_type.lock().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_by_type_and_a_bounded_number_of_types() {
        let io = SlowIo::default();
        io.record("http", 0.5, false);
        io.record("http", 1.5, true);
        for i in 0..40 {
            io.record(&format!("t{i}"), 1.0, false);
        }
        let all = io.read();
        assert_eq!(all[0], ("http".to_owned(), IoTotal { count: 2, seconds: 2.0, errors: 1 }));
        assert_eq!(all.len(), MAX_TYPES);
        let other = all.iter().find(|(k, _)| k == "(other)").unwrap();
        assert_eq!(other.1.count, 40 - (MAX_TYPES as u64 - 2), "types past the cap: counted, not named");
    }
}
