//! The endpoint against real sockets on 127.0.0.1: its routes, the token, a pulled profile, slow clients.

use super::*;
use std::sync::mpsc;

fn get(addr: SocketAddr, request: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

fn scrapes(path: &str, render: Render) -> Routes {
    Routes { path: path.into(), render, token: None, pull: None }
}

#[test]
fn answers_scrapes_rejects_the_rest_and_closes_the_port() {
    let mut server = Server::bind("127.0.0.1:0".parse().unwrap(), scrapes("/metrics", Box::new(|| "up 1\n".into()))).unwrap();
    let addr = server.addr();
    let ok = get(addr, b"GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(ok.starts_with("HTTP/1.1 200 OK\r\n") && ok.ends_with("\r\n\r\nup 1\n"), "{ok}");
    assert!(get(addr, b"GET /other HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
    assert!(get(addr, b"GET /debug/pprof/profile HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"), "no profiles unless asked");
    assert!(get(addr, b"POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
    assert!(get(addr, b"\x16\x03\x01garbage\r\n\r\n").starts_with("HTTP/1.1 400"));
    assert!(get(addr, &vec![b'a'; 20_000]).starts_with("HTTP/1.1 431"));
    let head = get(addr, b"HEAD /metrics HTTP/1.0\r\n\r\n");
    assert!(head.contains("Content-Length: 5\r\n") && head.ends_with("\r\n\r\n"), "{head}");
    server.close();
    assert!(TcpStream::connect(addr).is_err(), "closed: the port refuses connections");
}

#[test]
fn a_token_where_set_is_needed_everywhere() {
    let routes = Routes { token: Some("s3cret-token".into()), ..scrapes("/m", Box::new(|| "x 1\n".into())) };
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), routes).unwrap();
    let addr = server.addr();
    let refused = get(addr, b"GET /m HTTP/1.1\r\n\r\n");
    assert!(refused.starts_with("HTTP/1.1 401") && refused.contains("WWW-Authenticate: Bearer\r\n"), "{refused}");
    assert!(get(addr, b"GET /m HTTP/1.1\r\nAuthorization: Bearer s3cret-tokeN\r\n\r\n").starts_with("HTTP/1.1 401"));
    assert!(get(addr, b"GET /other HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 401"), "nothing is told without it");
    assert!(get(addr, b"GET /m HTTP/1.1\r\nAuthorization: Bearer s3cret-token\r\n\r\n").ends_with("x 1\n"));
}

/// A server whose profiles are asked on a channel (id, seconds) and answered by the test.
fn pulling(slack: Duration) -> (Arc<Server>, mpsc::Receiver<(u32, u32, u32)>) {
    let (tx, rx) = mpsc::channel();
    let tx = parking_lot::Mutex::new(tx);
    let pull = pull::Pull { ask: Box::new(move |id, kind, seconds| tx.lock().send((id, kind, seconds)).unwrap()), slack };
    let routes = Routes { pull: Some(pull), ..scrapes("/m", Box::new(|| "x 1\n".into())) };
    (Arc::new(Server::bind("127.0.0.1:0".parse().unwrap(), routes).unwrap()), rx)
}

#[test]
fn a_pulled_profile_is_asked_for_once_held_and_answered() {
    let (server, asked) = pulling(pull::SLACK);
    let addr = server.addr();
    let first = std::thread::spawn(move || get(addr, b"GET /debug/pprof/profile?seconds=2 HTTP/1.1\r\n\r\n"));
    let (id, kind, seconds) = asked.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!((kind, seconds), (0, 2));
    let busy = get(addr, b"GET /debug/pprof/heap HTTP/1.1\r\n\r\n");
    assert!(busy.starts_with("HTTP/1.1 409") && busy.contains("one at a time"), "{busy}");
    assert!(get(addr, b"GET /debug/pprof/profile?seconds=0 HTTP/1.1\r\n\r\n").contains("from 1 to 300"));
    assert!(get(addr, b"HEAD /debug/pprof/profile HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
    assert!(get(addr, b"GET /m HTTP/1.1\r\n\r\n").ends_with("x 1\n"), "scrapes go on meanwhile");
    server.answer(id + 1, http::plain("418 Not Mine"));
    server.answer(id, http::response("200 OK", "application/octet-stream", "", b"pprof", false));
    let got = first.join().unwrap();
    assert!(got.starts_with("HTTP/1.1 200") && got.ends_with("pprof"), "{got}");
    let second = std::thread::spawn(move || get(addr, b"GET /debug/pprof/heap?seconds=1 HTTP/1.1\r\n\r\n"));
    let (id, kind, _) = asked.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(kind, 1, "the heap's");
    server.answer(id, http::plain("204 No Content"));
    assert!(second.join().unwrap().starts_with("HTTP/1.1 204"), "the next one, once the first is answered");
}

#[test]
fn a_profile_that_does_not_come_is_a_503_and_frees_the_place() {
    let (server, asked) = pulling(Duration::from_millis(300));
    let addr = server.addr();
    let started = Instant::now();
    let late = get(addr, b"GET /debug/pprof/profile?seconds=1 HTTP/1.1\r\n\r\n");
    assert!(late.starts_with("HTTP/1.1 503") && late.contains("blocked"), "{late}");
    assert!(started.elapsed() >= Duration::from_millis(1300), "held for its seconds and slack: {:?}", started.elapsed());
    let (id, _, _) = asked.recv().unwrap();
    server.answer(id, http::plain("200 OK")); // too late: nobody waits
    let next = std::thread::spawn(move || get(addr, b"GET /debug/pprof/profile?seconds=1 HTTP/1.1\r\n\r\n"));
    let (id, _, _) = asked.recv_timeout(Duration::from_secs(5)).unwrap();
    server.answer(id, http::plain("204 No Content"));
    assert!(next.join().unwrap().starts_with("HTTP/1.1 204"));
}

#[test]
fn slow_clients_lose_their_place_to_scrapes() {
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), scrapes("/m", Box::new(|| "x 1\n".into()))).unwrap();
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
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), scrapes("/m", Box::new(|| panic!("render")))).unwrap();
    assert!(get(server.addr(), b"GET /m HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 500"));
    assert!(get(server.addr(), b"GET /m HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 500"));
}
