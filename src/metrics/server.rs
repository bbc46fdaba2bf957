//! The metrics endpoint: one thread, non-blocking sockets and poll (`poll`), HTTP/1.1 with
//! `Connection: close`. Hand-written rather than a server crate: those grow a thread pool per
//! load (tiny_http spawns a thread per busy connection), and the limits here are the point —
//! one thread whatever the clients do, at most `MAX_CONNECTIONS` open (once full, a new one
//! evicts the oldest that has been sending its request for `GRACE` or more, slow senders first: slowloris clients
//! lose their place, scrapers do not wait; with none to evict, new ones wait in the backlog),
//! requests cut at `MAX_REQUEST` bytes, every connection closed `DEADLINE` after it opened.
//! The body is rendered at most once per turn of the loop, however many scrapes are ready.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::poll::{self, Stream};

pub const MAX_CONNECTIONS: usize = 512;
const MAX_REQUEST: usize = 8192;
const DEADLINE: Duration = Duration::from_secs(5);
const GRACE: Duration = Duration::from_secs(1);

/// Renders the body of a scrape; a panic in it is answered with a 500.
pub type Render = Box<dyn Fn() -> String + Send>;

/// A running endpoint; dropping it (or `close`) stops the thread and closes the port.
pub struct Server {
    addr: SocketAddr,
    wake: Option<Stream>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    pub fn bind(addr: SocketAddr, path: String, render: Render) -> io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let (wake, stop) = poll::pair()?;
        let thread = std::thread::Builder::new().name("rloop-metrics".into()).spawn(move || serve(listener, stop, &path, &render))?;
        Ok(Server { addr, wake: Some(wake), thread: Some(thread) })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
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
    request: Vec<u8>,
    /// The response and how much of it is sent, once the request is complete.
    response: Option<(Arc<Vec<u8>>, usize)>,
}

fn serve(listener: TcpListener, stop: Stream, path: &str, render: &Render) {
    let mut conns: Vec<Connection> = Vec::new();
    loop {
        let now = Instant::now();
        // Full with nobody to evict: new connections wait in the backlog until someone is.
        let room = conns.len() < MAX_CONNECTIONS || evictable(&conns, now).is_some();
        let listen = if room { poll::IN } else { 0 };
        let mut fds = vec![poll::fd(&stop, poll::IN), poll::fd(&listener, listen)];
        fds.extend(conns.iter().map(|c| poll::fd(&c.stream, if c.response.is_some() { poll::OUT } else { poll::IN })));
        let deadlines = conns.iter().map(|c| c.opened + DEADLINE);
        let graces = conns.iter().filter(|c| !room && c.response.is_none()).map(|c| c.opened + GRACE);
        let timeout = deadlines.chain(graces).map(|t| t.saturating_duration_since(now)).min().map_or(-1, |d| d.as_millis() as i32 + 1);
        if poll::wait(&mut fds, timeout).is_err() {
            return;
        }
        if fds[0].revents() != 0 {
            return; // close(): the other end of `stop` is gone
        }
        let mut body: Option<Arc<Vec<u8>>> = None; // rendered once per turn, for every ready scrape
        let mut keep = Vec::with_capacity(conns.len());
        for (c, fd) in conns.drain(..).zip(&fds[2..]) {
            if let Some(c) = step(c, fd.revents(), path, render, &mut body) {
                if c.opened.elapsed() < DEADLINE {
                    keep.push(c);
                }
            }
        }
        conns = keep;
        if fds[1].revents() != 0 {
            accept(&listener, &mut conns);
        }
    }
}

/// The oldest connection still sending its request after `GRACE`, if any: first one that has
/// sent part of it (a slow sender), then one that has sent nothing yet (perhaps a scraper whose
/// own loop is busy).
fn evictable(conns: &[Connection], now: Instant) -> Option<usize> {
    let stale = |c: &Connection| c.response.is_none() && now.duration_since(c.opened) >= GRACE;
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
            conns.push(Connection { stream, opened: Instant::now(), request: Vec::new(), response: None });
        }
    }
}

/// Advances one connection; `None` when it is done (answered or broken).
fn step(mut c: Connection, revents: i16, path: &str, render: &Render, body: &mut Option<Arc<Vec<u8>>>) -> Option<Connection> {
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
            if c.request.len() > MAX_REQUEST || ends_head(&c.request) {
                break;
            }
        }
        if let Some(response) = respond(&c.request, path, render, body) {
            c.response = Some((response, 0));
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

fn ends_head(request: &[u8]) -> bool {
    request.windows(4).any(|w| w == b"\r\n\r\n") || request.windows(2).any(|w| w == b"\n\n")
}

/// The response to `request` once it is complete (or too long to be one); `None` to read more.
fn respond(request: &[u8], path: &str, render: &Render, body: &mut Option<Arc<Vec<u8>>>) -> Option<Arc<Vec<u8>>> {
    if request.len() > MAX_REQUEST {
        return Some(plain("431 Request Header Fields Too Large"));
    }
    if !ends_head(request) {
        return None;
    }
    let line = request.split(|&b| b == b'\n').next().unwrap_or_default();
    let mut parts = std::str::from_utf8(line).unwrap_or("").trim_end_matches('\r').split(' ');
    let (method, target, version) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if !version.starts_with("HTTP/1.") || parts.next().is_some() || !target.starts_with('/') {
        return Some(plain("400 Bad Request"));
    }
    if target.split('?').next() != Some(path) {
        return Some(plain("404 Not Found"));
    }
    if method != "GET" && method != "HEAD" {
        return Some(plain("405 Method Not Allowed"));
    }
    let rendered = body.get_or_insert_with(|| {
        let text = std::panic::catch_unwind(std::panic::AssertUnwindSafe(render)).ok();
        Arc::new(text.map(String::into_bytes).unwrap_or_default())
    });
    if rendered.is_empty() {
        return Some(plain("500 Internal Server Error"));
    }
    let head = format!("HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", super::text::CONTENT_TYPE, rendered.len());
    let mut out = head.into_bytes();
    if method == "GET" {
        out.extend_from_slice(rendered);
    }
    Some(Arc::new(out))
}

fn plain(status: &str) -> Arc<Vec<u8>> {
    Arc::new(format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(addr: SocketAddr, request: &[u8]) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(request).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    }

    #[test]
    fn answers_scrapes_rejects_the_rest_and_closes_the_port() {
        let mut server = Server::bind("127.0.0.1:0".parse().unwrap(), "/metrics".into(), Box::new(|| "up 1\n".into())).unwrap();
        let addr = server.addr();
        let ok = get(addr, b"GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n") && ok.ends_with("\r\n\r\nup 1\n"), "{ok}");
        assert!(get(addr, b"GET /other HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(get(addr, b"POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
        assert!(get(addr, b"\x16\x03\x01garbage\r\n\r\n").starts_with("HTTP/1.1 400"));
        assert!(get(addr, &vec![b'a'; 20_000]).starts_with("HTTP/1.1 431"));
        let head = get(addr, b"HEAD /metrics HTTP/1.0\r\n\r\n");
        assert!(head.contains("Content-Length: 5\r\n") && head.ends_with("\r\n\r\n"), "{head}");
        server.close();
        assert!(TcpStream::connect(addr).is_err(), "closed: the port refuses connections");
    }

    #[test]
    fn slow_clients_lose_their_place_to_scrapes() {
        let server = Server::bind("127.0.0.1:0".parse().unwrap(), "/m".into(), Box::new(|| "x 1\n".into())).unwrap();
        let addr = server.addr();
        let slow: Vec<TcpStream> = (0..MAX_CONNECTIONS + 100)
            .map(|_| {
                let mut s = TcpStream::connect(addr).unwrap();
                s.write_all(b"GET /m HTTP/1.1\r\n").unwrap(); // and never the end of the head
                s
            })
            .collect();
        let started = Instant::now();
        assert!(get(addr, b"GET /m HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 200"));
        // Evictions after GRACE, not a slow client's DEADLINE.
        assert!(started.elapsed() < Duration::from_secs(3), "answered before the slow clients' deadline: {:?}", started.elapsed());
        drop(slow);
    }

    #[test]
    fn a_panicking_render_is_a_500_and_the_server_goes_on() {
        let server = Server::bind("127.0.0.1:0".parse().unwrap(), "/m".into(), Box::new(|| panic!("render"))).unwrap();
        assert!(get(server.addr(), b"GET /m HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 500"));
        assert!(get(server.addr(), b"GET /m HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 500"));
    }
}
