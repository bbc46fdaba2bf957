//! Profiles pulled over the metrics endpoint, in Go's convention (`GET
//! /debug/pprof/profile?seconds=N` for CPU, `/debug/pprof/heap?seconds=N` for allocations: what
//! `go tool pprof`, Grafana Alloy and Parca fetch): the server thread asks the monitored
//! thread's JS to take one and holds the connection until JS gives the response (`Answers`) or
//! the wait ends. One profile at a time, of either kind.

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::poll::{self, Stream};

/// The paths, by kind: the index is the kind JS is asked for.
pub const PATHS: [&str; 2] = ["/debug/pprof/profile", "/debug/pprof/heap"];
pub const DEFAULT_SECONDS: u32 = 30;
pub const MAX_SECONDS: u32 = 300;
/// Beyond the profile's seconds, how long the response may take: the loop must be free to
/// start the profile and, after it, to encode it.
pub const SLACK: Duration = Duration::from_secs(15);

/// How profiles are taken: `ask(id, kind, seconds)` asks the monitored thread for one (`kind`:
/// the index of its path in `PATHS`), whose answer comes through `Answers::give` with the same
/// id, or a 503 once `slack` past its seconds.
pub struct Pull {
    pub ask: Box<dyn Fn(u32, u32, u32) + Send>,
    pub slack: Duration,
}

/// Responses from JS to the server thread, which `woken` wakes.
pub struct Answers {
    queue: Mutex<Vec<(u32, Arc<Vec<u8>>)>>,
    wake: Mutex<Stream>,
}

impl Answers {
    /// The answers and the end of the pair the server thread waits on.
    pub fn new() -> std::io::Result<(Arc<Answers>, Stream)> {
        let (wake, woken) = poll::pair()?;
        woken.set_nonblocking(true)?;
        wake.set_nonblocking(true)?;
        Ok((Arc::new(Answers { queue: Mutex::new(Vec::new()), wake: Mutex::new(wake) }), woken))
    }

    /// Hands the response to request `id` to the server thread.
    pub fn give(&self, id: u32, response: Arc<Vec<u8>>) {
        self.queue.lock().push((id, response));
        let _ = self.wake.lock().write(&[1]); // a full buffer has a wake pending already
    }

    /// The responses given since the last call; `woken` is drained.
    pub fn take(&self, woken: &mut Stream) -> Vec<(u32, Arc<Vec<u8>>)> {
        let mut buf = [0u8; 64];
        while matches!(woken.read(&mut buf), Ok(n) if n > 0) {}
        std::mem::take(&mut *self.queue.lock())
    }
}

/// The seconds a query asks for: `seconds=N`, 1 to MAX_SECONDS, DEFAULT_SECONDS if absent.
pub fn seconds(query: &str) -> Result<u32, String> {
    match super::http::param(query, "seconds") {
        None => Ok(DEFAULT_SECONDS),
        Some(s) => s.parse::<u32>().ok().filter(|n| (1..=MAX_SECONDS).contains(n)).ok_or_else(|| format!("rloop: seconds must be a whole number from 1 to {MAX_SECONDS}, got '{s}'")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_bounded() {
        assert_eq!(seconds(""), Ok(DEFAULT_SECONDS));
        assert_eq!(seconds("seconds=5"), Ok(5));
        assert!(seconds("seconds=0").is_err());
        assert!(seconds("seconds=301").is_err());
        assert!(seconds("seconds=-1").unwrap_err().contains("'-1'"));
        assert!(seconds("seconds=1.5").is_err());
    }
}
