//! The metrics endpoint: one thread, non-blocking sockets and poll (`poll`), HTTP/1.1 with
//! `Connection: close`. Hand-written rather than a server crate: those grow a thread pool per
//! load (tiny_http spawns a thread per busy connection), and the limits here are the point —
//! one thread whatever the clients do, at most `MAX_CONNECTIONS` open (once full, a new one
//! evicts the oldest that has been sending its request for `GRACE` or more, slow senders first: slowloris clients
//! lose their place, scrapers do not wait; with none to evict, new ones wait in the backlog),
//! requests cut at `MAX_REQUEST` bytes, every connection closed `DEADLINE` after it opened.
//! The body is rendered at most once per turn of the loop, however many scrapes are ready.
//! Where a token is set, every request needs it (`Authorization: Bearer`). A pulled profile
//! (`pull`) holds its connection for the profile's seconds and its slack, not `DEADLINE`.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::http;
use super::poll::{self, Stream};
use super::pull::{self, Answers};

pub const MAX_CONNECTIONS: usize = 512;
const MAX_REQUEST: usize = 8192;
const DEADLINE: Duration = Duration::from_secs(5);
const GRACE: Duration = Duration::from_secs(1);

/// Renders the body of a scrape; a panic in it is answered with a 500.
pub type Render = Box<dyn Fn() -> String + Send>;

/// What the endpoint answers: scrapes at `path`, and pulled profiles where `pull` is given.
pub struct Routes {
    pub path: String,
    pub render: Render,
    /// Where set, every request must carry it as `Authorization: Bearer <token>`.
    pub token: Option<String>,
    pub pull: Option<pull::Pull>,
}

/// A running endpoint; dropping it (or `close`) stops the thread and closes the port.
pub struct Server {
    addr: SocketAddr,
    wake: Option<Stream>,
    answers: Arc<Answers>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    pub fn bind(addr: SocketAddr, routes: Routes) -> io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let (wake, stop) = poll::pair()?;
        let (answers, woken) = Answers::new()?;
        let given = Arc::clone(&answers);
        let thread = std::thread::Builder::new().name("rloop-metrics".into()).spawn(move || serve(listener, stop, woken, &routes, &given))?;
        Ok(Server { addr, wake: Some(wake), answers, thread: Some(thread) })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The response to pulled profile `id` (see `pull`); ignored once its wait is over.
    pub fn answer(&self, id: u32, response: Arc<Vec<u8>>) {
        self.answers.give(id, response);
    }

    /// Stops serving; the port is closed when this returns. Idempotent.
    pub fn close(&mut self) {
        drop(self.wake.take()); // the thread sees the pair's other end hang up
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.close();
    }
}

struct Connection {
    stream: TcpStream,
    opened: Instant,
    /// Closed at this time, answered or not.
    until: Instant,
    request: Vec<u8>,
    /// The pulled profile this connection waits for.
    waiting: Option<u32>,
    /// The response and how much of it is sent, once there is one.
    response: Option<(Arc<Vec<u8>>, usize)>,
}

/// What a request gets: more of it read, a response, or a profile to wait for.
enum Reply {
    More,
    Now(Arc<Vec<u8>>),
    /// Of this kind (an index into `pull::PATHS`), over these seconds.
    Profile(u32, u32),
}

/// The server thread's state between turns.
struct State<'a> {
    routes: &'a Routes,
    conns: Vec<Connection>,
    /// The profile being taken and when its wait ends: one at a time.
    pulling: Option<(u32, Instant)>,
    pulls: u32,
}

fn serve(listener: TcpListener, stop: Stream, mut woken: Stream, routes: &Routes, answers: &Answers) {
    let mut st = State { routes, conns: Vec::new(), pulling: None, pulls: 0 };
    loop {
        let now = Instant::now();
        // Full with nobody to evict: new connections wait in the backlog until someone is.
        let room = st.conns.len() < MAX_CONNECTIONS || evictable(&st.conns, now).is_some();
        let listen = if room { poll::IN } else { 0 };
        let mut fds = vec![poll::fd(&stop, poll::IN), poll::fd(&woken, poll::IN), poll::fd(&listener, listen)];
        fds.extend(st.conns.iter().map(|c| {
            let events = if c.response.is_some() { poll::OUT } else if c.waiting.is_some() { 0 } else { poll::IN };
            poll::fd(&c.stream, events)
        }));
        let deadlines = st.conns.iter().map(|c| c.until);
        let graces = st.conns.iter().filter(|c| !room && c.response.is_none() && c.waiting.is_none()).map(|c| c.opened + GRACE);
        let timeout = deadlines.chain(graces).map(|t| t.saturating_duration_since(now)).min().map_or(-1, |d| d.as_millis() as i32 + 1);
        if poll::wait(&mut fds, timeout).is_err() {
            return;
        }
        if fds[0].revents() != 0 {
            return; // close(): the other end of `stop` is gone
        }
        if fds[1].revents() != 0 {
            for (id, response) in answers.take(&mut woken) {
                st.answered(id, response);
            }
        }
        let mut body: Option<Arc<Vec<u8>>> = None; // rendered once per turn, for every ready scrape
        let mut keep = Vec::with_capacity(st.conns.len());
        let now = Instant::now();
        for (c, fd) in std::mem::take(&mut st.conns).into_iter().zip(&fds[3..]) {
            if let Some(mut c) = st.step(c, fd.revents(), &mut body) {
                if now < c.until {
                    keep.push(c);
                } else if c.waiting.is_some() {
                    // Best effort, once: a short response fits the socket's buffer.
                    let _ = c.stream.write_all(&http::refusal("503 Service Unavailable", "rloop: no profile in time: the event loop was blocked"));
                }
            }
        }
        st.conns = keep;
        if st.pulling.is_some_and(|(_, until)| now >= until) {
            st.pulling = None;
        }
        if fds[2].revents() != 0 {
            accept(&listener, &mut st.conns);
        }
    }
}

impl State<'_> {
    fn answered(&mut self, id: u32, response: Arc<Vec<u8>>) {
        if self.pulling.is_some_and(|(p, _)| p == id) {
            self.pulling = None;
        }
        if let Some(c) = self.conns.iter_mut().find(|c| c.waiting == Some(id)) {
            c.waiting = None;
            c.response = Some((response, 0));
        }
    }

    /// Advances one connection; `None` when it is done (answered or broken).
    fn step(&mut self, mut c: Connection, revents: i16, body: &mut Option<Arc<Vec<u8>>>) -> Option<Connection> {
        if revents & poll::BROKEN != 0 {
            return None;
        }
        if c.response.is_none() && revents & (poll::IN | poll::HUP) != 0 {
            let mut buf = [0u8; 2048];
            loop {
                match c.stream.read(&mut buf) {
                    Ok(0) => return None,
                    Ok(n) => c.request.extend_from_slice(&buf[..n.min(MAX_REQUEST + 1 - c.request.len().min(MAX_REQUEST))]),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => return None,
                }
                if c.request.len() > MAX_REQUEST || http::ends_head(&c.request) {
                    break;
                }
            }
            if c.waiting.is_none() {
                match self.respond(&c.request, body) {
                    Reply::More => {}
                    Reply::Now(response) => c.response = Some((response, 0)),
                    Reply::Profile(kind, seconds) => {
                        self.pulls = self.pulls.wrapping_add(1);
                        let Some(pull) = &self.routes.pull else { return None };
                        let until = c.opened + Duration::from_secs(seconds.into()) + pull.slack;
                        self.pulling = Some((self.pulls, until));
                        c.waiting = Some(self.pulls);
                        c.until = until;
                        (pull.ask)(self.pulls, kind, seconds);
                    }
                }
            }
        }
        if let Some((response, sent)) = &mut c.response {
            loop {
                match c.stream.write(&response[*sent..]) {
                    Ok(n) => *sent += n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Some(c),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => return None,
                }
                if *sent == response.len() {
                    let _ = c.stream.shutdown(std::net::Shutdown::Write);
                    return None;
                }
            }
        }
        Some(c)
    }

    /// What `request` gets once it is complete (or too long to be one).
    fn respond(&self, request: &[u8], body: &mut Option<Arc<Vec<u8>>>) -> Reply {
        if request.len() > MAX_REQUEST {
            return Reply::Now(http::plain("431 Request Header Fields Too Large"));
        }
        if !http::ends_head(request) {
            return Reply::More;
        }
        let Some(head) = http::parse(request) else { return Reply::Now(http::plain("400 Bad Request")) };
        let routes = self.routes;
        if let Some(token) = &routes.token {
            if !head.bearer.is_some_and(|b| http::same_secret(b.as_bytes(), token.as_bytes())) {
                return Reply::Now(http::response("401 Unauthorized", "text/plain; charset=utf-8", "WWW-Authenticate: Bearer\r\n", b"rloop: a token is needed\n", false));
            }
        }
        let kind = routes.pull.as_ref().and_then(|_| pull::PATHS.iter().position(|p| *p == head.path));
        let pulled = kind.is_some();
        if head.path != routes.path && !pulled {
            return Reply::Now(http::plain("404 Not Found"));
        }
        if head.method != "GET" && !(head.method == "HEAD" && !pulled) {
            return Reply::Now(http::plain("405 Method Not Allowed"));
        }
        if pulled {
            return match pull::seconds(head.query) {
                Err(why) => Reply::Now(http::refusal("400 Bad Request", &why)),
                Ok(_) if self.pulling.is_some() => Reply::Now(http::refusal("409 Conflict", "rloop: a profile is being taken; one at a time")),
                Ok(seconds) => Reply::Profile(kind.unwrap_or_default() as u32, seconds),
            };
        }
        let rendered = body.get_or_insert_with(|| {
            let text = std::panic::catch_unwind(std::panic::AssertUnwindSafe(&routes.render)).ok();
            Arc::new(text.map(String::into_bytes).unwrap_or_default())
        });
        if rendered.is_empty() {
            return Reply::Now(http::plain("500 Internal Server Error"));
        }
        Reply::Now(http::response("200 OK", super::text::CONTENT_TYPE, "", rendered, head.method == "HEAD"))
    }
}

/// The oldest connection still sending its request after `GRACE`, if any: first one that has
/// sent part of it (a slow sender), then one that has sent nothing yet (perhaps a scraper whose
/// own loop is busy).
fn evictable(conns: &[Connection], now: Instant) -> Option<usize> {
    let stale = |c: &Connection| c.response.is_none() && c.waiting.is_none() && now.duration_since(c.opened) >= GRACE;
    conns.iter().position(|c| stale(c) && !c.request.is_empty()).or_else(|| conns.iter().position(stale))
}

fn accept(listener: &TcpListener, conns: &mut Vec<Connection>) {
    loop {
        if conns.len() >= MAX_CONNECTIONS {
            match evictable(conns, Instant::now()) {
                Some(i) => drop(conns.remove(i)),
                None => return,
            }
        }
        let Ok((stream, _)) = listener.accept() else { return };
        if stream.set_nonblocking(true).is_ok() {
            let _ = stream.set_nodelay(true);
            let opened = Instant::now();
            conns.push(Connection { stream, opened, until: opened + DEADLINE, request: Vec::new(), waiting: None, response: None });
        }
    }
}

#[cfg(test)]
mod tests;
