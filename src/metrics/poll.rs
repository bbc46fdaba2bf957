//! Readiness of the metrics server's sockets — poll(2), WSAPoll on Windows — and the pair of
//! sockets `close()` wakes the server with: hanging up one end makes the other ready.

use std::io;
use std::net::TcpListener;

#[cfg(unix)]
mod sys {
    pub use libc::{poll, pollfd as PollFd, POLLERR as ERR, POLLHUP as HUP, POLLIN as IN, POLLNVAL as NVAL, POLLOUT as OUT};
    pub type Raw = std::os::fd::RawFd;
    pub type Stream = std::os::unix::net::UnixStream;

    pub fn raw(s: &impl std::os::fd::AsRawFd) -> Raw {
        s.as_raw_fd()
    }

    pub fn ready(fds: &mut [PollFd], timeout_ms: i32) -> i32 {
        // SAFETY: `fds` is a valid array of `fds.len()` pollfd structs for the call's duration.
        unsafe { poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) }
    }

    pub fn pair() -> std::io::Result<(Stream, Stream)> {
        Stream::pair()
    }
}

#[cfg(windows)]
mod sys {
    use std::net::{Ipv4Addr, TcpListener, TcpStream};
    use windows_sys::Win32::Networking::WinSock::{WSAPoll, POLLRDNORM, POLLWRNORM, WSAPOLLFD};
    pub use windows_sys::Win32::Networking::WinSock::{POLLERR as ERR, POLLHUP as HUP, POLLNVAL as NVAL};
    pub type PollFd = WSAPOLLFD;
    pub type Raw = std::os::windows::io::RawSocket;
    pub type Stream = TcpStream;
    // WSAPoll rejects POLLPRI and the out-of-band bands that POLLIN includes elsewhere.
    pub const IN: i16 = POLLRDNORM;
    pub const OUT: i16 = POLLWRNORM;

    pub fn raw(s: &impl std::os::windows::io::AsRawSocket) -> Raw {
        s.as_raw_socket()
    }

    pub fn ready(fds: &mut [PollFd], timeout_ms: i32) -> i32 {
        // SAFETY: `fds` is a valid array of `fds.len()` WSAPOLLFD structs for the call's duration.
        unsafe { WSAPoll(fds.as_mut_ptr(), fds.len() as u32, timeout_ms) }
    }

    /// No socketpair on Windows: two ends of one loopback connection, the listener closed at once.
    pub fn pair() -> std::io::Result<(Stream, Stream)> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let a = TcpStream::connect(listener.local_addr()?)?;
        let (b, _) = listener.accept()?;
        Ok((a, b))
    }
}

pub use sys::Stream;

/// Readable (or hung up), writable, broken.
pub const IN: i16 = sys::IN;
pub const OUT: i16 = sys::OUT;
pub const BROKEN: i16 = sys::ERR | sys::NVAL;
pub const HUP: i16 = sys::HUP;

/// What to wait for on one socket, and what came.
#[repr(transparent)]
pub struct Fd(sys::PollFd);

impl Fd {
    pub fn revents(&self) -> i16 {
        self.0.revents
    }
}

/// A socket of the server's to wait on.
pub trait Socket {
    fn raw(&self) -> sys::Raw;
}

impl Socket for TcpListener {
    fn raw(&self) -> sys::Raw {
        sys::raw(self)
    }
}

#[cfg(unix)]
impl Socket for std::net::TcpStream {
    fn raw(&self) -> sys::Raw {
        sys::raw(self)
    }
}

impl Socket for Stream {
    fn raw(&self) -> sys::Raw {
        sys::raw(self)
    }
}

pub fn fd(socket: &impl Socket, events: i16) -> Fd {
    #[cfg(unix)]
    let fd = sys::PollFd { fd: socket.raw(), events, revents: 0 };
    #[cfg(windows)]
    let fd = sys::PollFd { fd: socket.raw() as usize, events, revents: 0 };
    Fd(fd)
}

/// Waits until one of `fds` is ready or `timeout_ms` passed (-1: no limit); an interrupted wait
/// is a wait that found nothing.
pub fn wait(fds: &mut [Fd], timeout_ms: i32) -> io::Result<()> {
    // SAFETY of the cast: Fd is a transparent wrapper of the platform's struct.
    let raw = unsafe { std::slice::from_raw_parts_mut(fds.as_mut_ptr().cast::<sys::PollFd>(), fds.len()) };
    if sys::ready(raw, timeout_ms) < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}

/// Two connected ends: dropping the first makes the second ready.
pub fn pair() -> io::Result<(Stream, Stream)> {
    sys::pair()
}
