//! Who is told of a stall while it lasts, by monitored thread: its stack sampler
//! (js/stalls/sampler-worker.js, through `listenForStalls`). The lookout thread tells them; a thread
//! with none asks its JS for a sampler after a stall (`Shared::idle`).

use std::collections::HashMap;

use parking_lot::Mutex;

/// Called with the `wake` of a stall on the thread it listens to, while the stall goes on.
pub type StallListener = Box<dyn Fn(f64) + Send + Sync>;

static STALL_LISTENERS: Mutex<Option<HashMap<u32, StallListener>>> = Mutex::new(None);

pub fn has_stall_listener(thread_id: u32) -> bool {
    STALL_LISTENERS.lock().as_ref().is_some_and(|l| l.contains_key(&thread_id))
}

/// Sets (or with `None` removes) who is told of stalls on `thread_id`.
pub fn listen_for_stalls(thread_id: u32, listener: Option<StallListener>) {
    let mut all = STALL_LISTENERS.lock();
    let map = all.get_or_insert_with(HashMap::new);
    match listener {
        Some(l) => map.insert(thread_id, l),
        None => map.remove(&thread_id),
    };
}

/// Tells `thread_id`'s listener, if any, of the stall that woke at `wake`. Under this module's
/// lock: a listener never runs after `listen_for_stalls` replaced it.
pub fn noticed(thread_id: u32, wake: f64) {
    if let Some(listener) = STALL_LISTENERS.lock().as_ref().and_then(|l| l.get(&thread_id)) {
        listener(wake);
    }
}
