//! Whether a stall's stack shows the code that blocked, and what else can be said of it.
//!
//! The stack sampler's stack is taken at V8's next interrupt check after it asks: at once in
//! JS (function entries, loop back-edges, irregexp's backtracking), but only after a builtin
//! such as JSON.parse or a C++ call returns. A late answer then shows whatever ran next — in a
//! real app, often a different function. A stack is the blocker's only when it came promptly,
//! while the slot the stall is charged to ran; or when it came late but still inside Node's
//! own wrapper of native work (crypto, zlib, sync fs), whose caller is the blocker's.

use serde_json::Value;

use super::lag::Taken;

/// An answer for which the thread ran at most this long (CPU) was served inside the blocking
/// code itself: in JS it comes within microseconds of running. CPU, not wall time, so that a
/// thread descheduled on a busy machine is not taken for one in native work.
pub const PROMPT_MS: f64 = 5.0;

/// Node's JS wrappers of synchronous native work, by frame URL prefix.
const NATIVE: [(&str, &str); 8] = [
    ("node:internal/crypto/", "crypto"),
    ("node:crypto", "crypto"),
    ("node:zlib", "zlib"),
    ("node:internal/fs/", "fs"),
    ("node:fs", "fs"),
    ("node:child_process", "child_process"),
    ("node:internal/child_process", "child_process"),
    ("node:internal/modules/", "module loading"),
];

/// What a stall's event says of the code that blocked.
#[derive(Debug, Default, PartialEq)]
pub struct Blame {
    /// The blocker's frames, only when known to be.
    pub stack: Option<Value>,
    /// Frames taken during the stall that are not known to be the blocker's.
    pub seen: Option<Value>,
    /// Why `seen` is not the blocker's stack.
    pub note: Option<String>,
    /// Native work the blocker was doing, when its frames say.
    pub native: Option<&'static str>,
    /// When the stack was taken, ms after the stall began.
    pub taken_after_ms: Option<f64>,
}

/// `other`: the scope that ran when the stack was asked for, if not the one charged.
pub fn blame(start: f64, taken: Option<Taken>, other: Option<&str>) -> Blame {
    let Some(Taken { asked, answered, ran_ms, frames, .. }) = taken else { return Blame::default() };
    let native = native_of(&frames);
    // Both: a thread descheduled waits without running; one that ran on while the answer
    // travelled back to the sampler answered promptly all the same.
    let late = ran_ms > PROMPT_MS && answered - asked > PROMPT_MS;
    let note = match other {
        Some(scope) => Some(format!("taken while {scope} ran, not the scope the stall is charged to")),
        None if late && native.is_none() => Some(format!(
            "the loop was in code V8 cannot interrupt (a builtin such as JSON.parse or RegExp, or C++) for {:.0} ms more: these frames ran after it",
            answered - asked
        )),
        None => None,
    };
    let (stack, seen) = if note.is_none() { (Some(frames), None) } else { (None, Some(frames)) };
    Blame { stack, seen, note, native, taken_after_ms: Some(answered - start) }
}

/// The native work named by Node's own frames on top of the stack (the wrapper may have called
/// a helper such as `Buffer.from` after the C++ call returned).
fn native_of(frames: &Value) -> Option<&'static str> {
    let urls = frames.as_array()?.iter().map_while(|f| f.get("url")?.as_str().filter(|u| u.starts_with("node:")));
    urls.into_iter().find_map(|url| NATIVE.iter().find(|(prefix, _)| url.starts_with(prefix)).map(|(_, kind)| *kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn taken(asked: f64, answered: f64, url: &str) -> Option<Taken> {
        // As if the thread ran all along (a loaded machine's waits are tested in the JS tests).
        Some(Taken { asked, answered, ran_ms: answered - asked, frames: json!([{ "functionName": "f", "url": url, "line": 1, "column": 1 }]), trace: Value::Null })
    }

    #[test]
    fn a_prompt_stack_in_the_charged_scope_is_the_blockers() {
        let b = blame(100.0, taken(150.0, 151.0, "file:///app.js"), None);
        assert!(b.stack.is_some() && b.seen.is_none() && b.note.is_none(), "{b:?}");
        assert_eq!(b.taken_after_ms, Some(51.0));
    }

    #[test]
    fn a_late_stack_shows_what_ran_after_the_blocker_and_is_not_blamed() {
        let b = blame(100.0, taken(150.0, 400.0, "file:///app.js"), None);
        assert!(b.stack.is_none() && b.seen.is_some(), "{b:?}");
        assert!(b.note.unwrap().contains("250 ms"));
    }

    #[test]
    fn a_late_stack_inside_nodes_wrapper_of_native_work_names_it() {
        let b = blame(100.0, taken(150.0, 400.0, "node:internal/crypto/pbkdf2"), None);
        assert_eq!((b.stack.is_some(), b.native), (true, Some("crypto")));
        assert_eq!(blame(0.0, taken(1.0, 300.0, "node:zlib"), None).native, Some("zlib"));
        let frames = json!([{ "url": "node:buffer" }, { "url": "node:internal/crypto/pbkdf2" }, { "url": "file:///app.js" }]);
        assert_eq!(native_of(&frames), Some("crypto"), "below a helper it called on the way out");
        assert_eq!(native_of(&json!([{ "url": "file:///app.js" }, { "url": "node:fs" }])), None, "only Node's frames on top count");
    }

    #[test]
    fn a_stack_taken_in_another_scope_is_not_the_blockers() {
        let b = blame(100.0, taken(150.0, 151.0, "file:///app.js"), Some("job:import"));
        assert!(b.stack.is_none() && b.seen.is_some());
        assert!(b.note.unwrap().contains("job:import"));
        assert_eq!(blame(0.0, None, None), Blame::default());
    }
}
