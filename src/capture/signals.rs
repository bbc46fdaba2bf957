//! Signals keep their meaning. A JS listener for SIGINT/SIGTERM would replace the default action
//! and run only when the loop turns: an app stuck in a loop would no longer die on Ctrl-C. So
//! while captures run on any thread, rloop listens natively, and only for signals the app does
//! not listen to: the handler wakes a thread of ours, which has each capturing thread's JS write
//! its reports (except on a thread whose loop is blocked: nothing is waited for there, and the
//! addon writes them from what it recorded, src/capture/report.rs) and lets the signal do what
//! it would have done, with the action that was in place before (Node's own, which resets the
//! terminal).

use std::io::Read;
use std::os::fd::{AsRawFd, IntoRawFd};
use std::os::unix::net::UnixStream;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicI32, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

/// Asks one thread's JS to write its reports for this signal; calls `done` once it has.
pub type Finisher = Arc<dyn Fn(&'static str, Box<dyn FnOnce() + Send>) + Send + Sync>;

pub const SIGNALS: [(c_int, &str); 2] = [(libc::SIGINT, "SIGINT"), (libc::SIGTERM, "SIGTERM")];
/// How long a responsive loop may take to write the reports (a profile's analysis on a loaded
/// machine can take a second) before the signal takes effect anyway.
const FINISH_WITHIN: Duration = Duration::from_millis(3000);
/// A main loop busy all this time since the signal is blocked: the addon writes the reports.
const BLOCKED: Duration = Duration::from_millis(50);
/// How often the signal thread looks whether JS finished or the loop is blocked.
const LOOK_EVERY: Duration = Duration::from_millis(5);
/// How often our thread checks that an app listener removed since has not left SIG_DFL behind.
const REARM_EVERY: Duration = Duration::from_millis(250);

static WAKE_W: AtomicI32 = AtomicI32::new(-1);

struct Armed {
    /// Per capturing thread (by thread id), who writes its reports.
    finishers: Vec<(u32, Finisher)>,
    /// Per armed signal: the action ours replaced, put back before the signal is raised again.
    previous: Vec<(c_int, libc::sigaction)>,
    /// Signals the caller asked for, re-armed when an app listener's removal leaves SIG_DFL.
    wanted: Vec<c_int>,
}

// SAFETY: `libc::sigaction` is plain data; it is only read and written under the mutex.
unsafe impl Send for Armed {}

static ARMED: Mutex<Option<Armed>> = Mutex::new(None);

extern "C" fn on_signal(sig: c_int) {
    // Async-signal-safe: one write(2) of the signal number to our thread's socket.
    let fd = WAKE_W.load(Relaxed);
    if fd >= 0 {
        let byte = sig as u8;
        // SAFETY: writes one byte from a live stack variable.
        unsafe { libc::write(fd, (&byte as *const u8).cast(), 1) };
    }
}

fn current(sig: c_int) -> libc::sigaction {
    // SAFETY: reads the action into a zeroed struct.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old);
        old
    }
}

fn install(sig: c_int) -> libc::sigaction {
    // SAFETY: `on_signal` is async-signal-safe; the old action is returned to be put back.
    unsafe {
        let mut new: libc::sigaction = std::mem::zeroed();
        new.sa_sigaction = on_signal as extern "C" fn(c_int) as usize;
        new.sa_flags = libc::SA_RESTART | libc::SA_ONSTACK;
        libc::sigemptyset(&mut new.sa_mask);
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, &new, &mut old);
        old
    }
}

fn ours(action: &libc::sigaction) -> bool {
    action.sa_sigaction == on_signal as extern "C" fn(c_int) as usize
}

/// Whether `action` is the app's: ignored, or a JS listener's (libuv installs its handler with
/// SA_RESTART; Node's default action, SignalExit, has SA_RESETHAND alone). A worker cannot count
/// the main thread's listeners: this says it for every thread.
fn apps(action: &libc::sigaction) -> bool {
    action.sa_sigaction == libc::SIG_IGN || (!ours(action) && action.sa_sigaction != libc::SIG_DFL && action.sa_flags & libc::SA_RESTART != 0)
}

/// Listens for `signals` (a subset of SIGNALS) natively, but for those the app listens to (until
/// its last listener goes: `rearm`), with `finisher` writing the reports of thread `thread_id`
/// (replacing the one it had).
pub fn arm(thread_id: u32, signals: &[c_int], finisher: Finisher) -> std::io::Result<()> {
    start_thread()?;
    let mut armed = ARMED.lock();
    let a = armed.get_or_insert_with(|| Armed { finishers: Vec::new(), previous: Vec::new(), wanted: Vec::new() });
    a.finishers.retain(|(t, _)| *t != thread_id);
    a.finishers.push((thread_id, finisher));
    for &sig in signals {
        if a.wanted.contains(&sig) {
            continue;
        }
        // One the app listens to now is its own; wanted all the same, for when its last listener goes.
        a.wanted.push(sig);
        if !apps(&current(sig)) {
            a.previous.push((sig, install(sig)));
        }
    }
    on_signal(0); // wakes our thread, which idles without a timeout while nothing is armed
    Ok(())
}

/// Forgets thread `thread_id`'s finisher; with the last one, puts back every action `arm`
/// replaced that is still ours.
pub fn disarm(thread_id: u32) {
    let mut armed = ARMED.lock();
    if let Some(a) = armed.as_mut() {
        a.finishers.retain(|(t, _)| *t != thread_id);
        if a.finishers.is_empty() {
            disarm_locked(&mut armed);
        }
    }
}

fn disarm_locked(armed: &mut Option<Armed>) {
    for (sig, old) in armed.take().map(|a| a.previous).unwrap_or_default() {
        if ours(&current(sig)) {
            // SAFETY: restores an action sigaction gave us.
            unsafe { libc::sigaction(sig, &old, std::ptr::null_mut()) };
        }
    }
}

fn start_thread() -> std::io::Result<()> {
    static STARTED: OnceLock<std::io::Result<()>> = OnceLock::new();
    let started = STARTED.get_or_init(|| {
        // A socket pair rather than pipe2 (not on macOS): close-on-exec on every Unix.
        let (reader, writer) = UnixStream::pair()?;
        WAKE_W.store(writer.into_raw_fd(), Relaxed); // the handler's for the process's life
        std::thread::Builder::new().name("rloop-signal".into()).spawn(move || signal_loop(reader)).map(|_| ())
    });
    started.as_ref().map(|_| ()).map_err(|e| std::io::Error::new(e.kind(), e.to_string()))
}

fn signal_loop(mut reader: UnixStream) {
    let mut byte = [0u8; 1];
    loop {
        let timeout = if ARMED.lock().is_some() { REARM_EVERY.as_millis() as c_int } else { -1 };
        let mut poll = libc::pollfd { fd: reader.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: polls one descriptor we own.
        let ready = unsafe { libc::poll(&mut poll, 1, timeout) };
        if ready <= 0 {
            rearm();
            continue;
        }
        if reader.read(&mut byte).unwrap_or(0) == 1 && byte[0] != 0 {
            take_effect(byte[0] as c_int);
        }
    }
}

/// An app listener added after `arm` replaced ours (libuv's own); once removed, libuv leaves
/// SIG_DFL: listen again, so a later signal still writes the reports. Our thread looks every
/// REARM_EVERY; JS calls it as the app's last listener goes (the signal may follow at once).
pub fn rearm() {
    let mut armed = ARMED.lock();
    let Some(a) = armed.as_mut() else { return };
    for &sig in &a.wanted {
        if current(sig).sa_sigaction == libc::SIG_DFL {
            let old = install(sig);
            a.previous.retain(|(s, _)| *s != sig);
            a.previous.push((sig, old));
        }
    }
}

fn take_effect(sig: c_int) {
    let name = SIGNALS.iter().find(|(s, _)| *s == sig).map_or("signal", |(_, n)| *n);
    // Not under the lock while JS runs: writing a thread's last report disarms it.
    let Some((finishers, previous)) = ARMED.lock().as_ref().map(|a| (a.finishers.clone(), a.previous.iter().find(|(s, _)| *s == sig).map(|(_, old)| *old))) else {
        return;
    };
    // Every capturing thread's JS is asked to finish its reports: it does once its loop comes
    // round to the call. A loop busy all the time since the signal, from BLOCKED on, is blocked:
    // the addon writes for it, and the signal takes effect soon, as without rloop. (Busy when the
    // signal came is not blocked: the app may have raised it itself, from a callback about to return.)
    let since = Instant::now();
    let pending = Arc::new((Mutex::new(finishers.iter().map(|(t, _)| *t).collect::<Vec<u32>>()), Condvar::new()));
    for (t, finisher) in &finishers {
        let (p, t) = (pending.clone(), *t);
        finisher(
            name,
            Box::new(move || {
                p.0.lock().retain(|&x| x != t);
                p.1.notify_all();
            }),
        );
    }
    let mut blocked: Vec<u32> = Vec::new();
    let mut left = pending.0.lock();
    loop {
        let waited = since.elapsed();
        if waited >= BLOCKED {
            let ms = waited.as_secs_f64() * 1000.0;
            blocked = left.iter().copied().filter(|&t| crate::runtime::registry::blocked_for(t, ms)).collect();
        }
        // Done once every thread still writing is blocked (or none is left), or time is up.
        if left.iter().all(|t| blocked.contains(t)) || waited >= FINISH_WITHIN {
            break;
        }
        pending.1.wait_for(&mut left, LOOK_EVERY);
    }
    drop(left);
    // What JS did not finish — every capture of a blocked thread, or of one whose JS did not
    // answer in time — the addon finishes from what it recorded.
    for m in crate::runtime::registry::monitors() {
        let why = if blocked.contains(&m.thread_id) { format!("signal {name} while the loop was blocked") } else { format!("signal {name} before this thread's JS finished the report") };
        super::report::finish_thread(&m, name, &why);
    }
    // SAFETY: puts back the action ours replaced (or the default) and raises the signal again:
    // the process ends, or not, exactly as it would have without rloop.
    unsafe {
        match previous {
            Some(old) => {
                libc::sigaction(sig, &old, std::ptr::null_mut());
            }
            None => {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
        libc::kill(libc::getpid(), sig);
    }
}
