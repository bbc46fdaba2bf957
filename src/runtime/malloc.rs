//! Pages the lookout thread frees, given back to the system: glibc's malloc keeps what a thread
//! frees in that thread's arena, for good.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Windows (and closes' scratch, see `lasting`) freed since malloc last gave pages back.
static FREED: AtomicUsize = AtomicUsize::new(0);

/// Once the windows the lookout thread freed add up to a full history's bound, gives the pages back.
pub fn give_back_in_time(freed: usize) {
    if add_up(&FREED, freed) {
        give_back_freed();
    }
}

/// What of a close's scratch (`Pending::scratch_bytes`) counts as freed for good: a close of
/// a few thousand slots leaves blocks the next close reuses, but one of tens of thousands (a
/// key ring churning) leaves megabytes that malloc keeps between closes (bench/memory.md).
pub fn lasting(scratch: usize) -> usize {
    if scratch >= SCRATCH_KEPT { scratch } else { 0 }
}
const SCRATCH_KEPT: usize = 1 << 20;

/// Adds `freed` to `since`; true (and `since` starts again) once it reaches `HISTORY_BYTES`.
fn add_up(since: &AtomicUsize, freed: usize) -> bool {
    let due = since.fetch_add(freed, Relaxed) + freed >= crate::attribution::aggregator::HISTORY_BYTES;
    if due {
        since.store(0, Relaxed);
    }
    due
}

/// Returns the pages glibc's malloc keeps after frees to the system. True if some were.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn give_back_freed() -> bool {
    extern "C" {
        fn malloc_trim(pad: usize) -> std::os::raw::c_int;
    }
    // SAFETY: malloc_trim takes no pointers and is thread-safe.
    unsafe { malloc_trim(0) != 0 }
}

/// Other allocators (musl's, Windows', macOS's) give freed pages back on their own: nothing
/// to ask, nothing released here.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn give_back_freed() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_given_back_once_a_full_history_was_freed() {
        let since = AtomicUsize::new(0);
        let bound = crate::attribution::aggregator::HISTORY_BYTES;
        assert!(!add_up(&since, bound / 2) && !add_up(&since, bound / 2 - 1));
        assert!(add_up(&since, 1));
        assert_eq!(since.load(Relaxed), 0, "counting starts again");
        assert!(add_up(&since, bound * 3), "one wide eviction is enough");
    }
}
