//! The little of HTTP/1.x the metrics endpoint speaks: a request's head, and responses that
//! close the connection.

use std::sync::Arc;

/// A request line and the one header read, borrowed from the request's bytes.
pub struct Head<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub query: &'a str,
    /// The credentials of `Authorization: Bearer …`, if sent.
    pub bearer: Option<&'a str>,
}

/// Whether `request` holds a whole head.
pub fn ends_head(request: &[u8]) -> bool {
    request.windows(4).any(|w| w == b"\r\n\r\n") || request.windows(2).any(|w| w == b"\n\n")
}

/// The head of a complete request, or None when it is not HTTP/1.x.
pub fn parse(request: &[u8]) -> Option<Head<'_>> {
    let text = std::str::from_utf8(request).ok()?;
    let mut lines = text.split('\n').map(|l| l.trim_end_matches('\r'));
    let mut parts = lines.next()?.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    if !version.starts_with("HTTP/1.") || parts.next().is_some() || !target.starts_with('/') {
        return None;
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let bearer = lines.take_while(|l| !l.is_empty()).find_map(|l| {
        let (name, value) = l.split_once(':')?;
        let value = value.trim();
        let scheme = value.get(..7)?;
        (name.trim().eq_ignore_ascii_case("authorization") && scheme.eq_ignore_ascii_case("bearer ")).then(|| value[7..].trim())
    });
    Some(Head { method, path, query, bearer })
}

/// The value of `name` in a query string (no percent-decoding: the values asked for are numbers).
pub fn param<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query.split('&').find_map(|p| p.strip_prefix(name)?.strip_prefix('='))
}

/// Equal, in a time that does not tell how much of a secret a guess got right.
pub fn same_secret(given: &[u8], secret: &[u8]) -> bool {
    given.len() == secret.len() && given.iter().zip(secret).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0
}

/// A response: `status`, then the headers in `extra` (each ending in CRLF), and `body` unless `head_only`.
pub fn response(status: &str, content_type: &str, extra: &str, body: &[u8], head_only: bool) -> Arc<Vec<u8>> {
    let head = format!("HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n", body.len());
    let mut out = head.into_bytes();
    if !head_only {
        out.extend_from_slice(body);
    }
    Arc::new(out)
}

/// A response with no body.
pub fn plain(status: &str) -> Arc<Vec<u8>> {
    Arc::new(format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").into_bytes())
}

/// A response whose body says why, in one line of text.
pub fn refusal(status: &str, why: &str) -> Arc<Vec<u8>> {
    response(status, "text/plain; charset=utf-8", "", format!("{why}\n").as_bytes(), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_request_line_query_and_bearer() {
        let h = parse(b"GET /debug/pprof/profile?seconds=5&x=1 HTTP/1.1\r\nHost: a\r\nauthorization:  bearer s3cret \r\n\r\n").unwrap();
        assert_eq!((h.method, h.path, h.query, h.bearer), ("GET", "/debug/pprof/profile", "seconds=5&x=1", Some("s3cret")));
        assert_eq!(param(h.query, "seconds"), Some("5"));
        assert_eq!(param(h.query, "second"), None);
        assert!(parse(b"GET /m HTTP/1.0\n\nAuthorization: Bearer late\n").unwrap().bearer.is_none(), "headers end at the blank line");
        assert!(parse(b"GET /m HTTP/1.1\r\nAuthorization: Basic eDp5\r\n\r\n").unwrap().bearer.is_none());
        assert!(parse(b"\x16\x03\x01garbage\r\n\r\n").is_none());
        assert!(parse(b"GET m HTTP/1.1\r\n\r\n").is_none());
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abd", b"abc"));
        assert!(!same_secret(b"ab", b"abc"));
    }
}
