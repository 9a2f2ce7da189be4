//! A small HTTP/1.1 file server on 127.0.0.1 for reading stores over HTTP in
//! tests and examples: `GET` and `HEAD`, single byte ranges (`bytes=a-b`,
//! `bytes=a-`, `bytes=-n`) answered with `206 Partial Content`, and a count
//! of the body bytes served for each path.
//!
//! Bounded: connections time out after a few seconds of silence, the server
//! stops when dropped, and it never serves anything outside its root.
//! A request for several ranges at once gets the whole file (`200`), which
//! RFC 9110 allows and which shows up in the byte counts.
//!
//! [`HttpServer::serve_misbehaving`] starts one that answers requests for
//! chunk keys (paths holding `/c/`) wrongly, in one of the ways of
//! [`Misbehaviour`], for the bad-input tests of remote reads.
#![allow(dead_code)] // each user needs a part

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a connection may stay silent before the server closes it.
const IDLE_TIMEOUT: Duration = Duration::from_secs(5);

/// Body bytes served, per request path.
type Counts = Arc<Mutex<BTreeMap<String, u64>>>;

/// Paths answered once already (for [`Misbehaviour::BusyFirst`]).
type Seen = Arc<Mutex<std::collections::BTreeSet<String>>>;

/// A wrong way of answering requests for chunk keys.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Misbehaviour {
    /// Answer with this status line and no body (e.g. `"403 Forbidden"`).
    Status(&'static str),
    /// Answer `200` with the whole file, whatever the `Range` header asks.
    IgnoreRange,
    /// Send the headers of the right answer and half its body, then close
    /// the connection.
    DropMidBody,
    /// Answer a range with the right `Content-Range` and half its bytes,
    /// `Content-Length` saying so: a body shorter than the range it claims.
    ShortBody,
    /// Answer a range that covers the whole file with `200` and the file,
    /// as RFC 9110 allows (actix-files does so).
    WholeAs200,
    /// Send the right status and body (in two pieces), with
    /// `Content-Length: 2^50`, then close the connection: a length no
    /// buffer can be sized by.
    LyingLength,
    /// Answer a range with its `Content-Range` and a body far longer (1 GiB
    /// announced, sent until the client stops reading).
    LongBody,
    /// Answer `403` with a 1 GiB body, sent until the client stops reading.
    HugeErrorBody,
    /// Answer `200` with a body that never ends (chunked, no length).
    EndlessBody,
    /// Answer `307` to the same path at this port of 127.0.0.1 (another
    /// origin).
    RedirectTo(u16),
    /// Answer `403` as S3 refuses a signature (`SignatureDoesNotMatch`),
    /// echoing the request's `x-amz-security-token` in the canonical
    /// request, as text and as space-separated hex bytes, and once more
    /// in the message, where no header name stands before it (only a
    /// registered secret is hidden there).
    EchoSignature,
    /// Answer the first request for each path with this status line and
    /// `Retry-After: <the second field>` (seconds or an HTTP date), as a
    /// busy server does; serve the later ones right.
    BusyFirst(&'static str, &'static str),
}

/// A running server; dropping it stops it.
pub struct HttpServer {
    address: SocketAddr,
    counts: Counts,
    requests: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl HttpServer {
    /// Serve the files under `root` on a free port of 127.0.0.1.
    pub fn serve(root: &Path) -> std::io::Result<Self> {
        Self::start(root, None, false)
    }

    /// Serve the files under `root`, answering requests for chunk keys
    /// (paths holding `/c/`) as `misbehaviour` says.
    pub fn serve_misbehaving(root: &Path, misbehaviour: Misbehaviour) -> std::io::Result<Self> {
        Self::start(root, Some(misbehaviour), false)
    }

    /// Serve the files under `root`, answering every request (metadata
    /// too) as `misbehaviour` says.
    pub fn serve_misbehaving_everywhere(
        root: &Path,
        misbehaviour: Misbehaviour,
    ) -> std::io::Result<Self> {
        Self::start(root, Some(misbehaviour), true)
    }

    /// Requests received so far (all paths).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    fn start(
        root: &Path,
        misbehaviour: Option<Misbehaviour>,
        everywhere: bool,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let address = listener.local_addr()?;
        let root = root.canonicalize()?;
        let counts = Counts::default();
        let seen = Seen::default();
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(AtomicU64::new(0));
        let accept = {
            let (counts, stop, requests) = (counts.clone(), stop.clone(), requests.clone());
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let (root, counts) = (root.clone(), counts.clone());
                    let (requests, seen) = (requests.clone(), seen.clone());
                    std::thread::spawn(move || {
                        let served = Served {
                            root: &root,
                            counts: &counts,
                            requests: &requests,
                            seen: &seen,
                            misbehaviour,
                            everywhere,
                        };
                        // A broken or idle connection just ends.
                        let _ = serve_connection(stream, &served);
                    });
                }
            })
        };
        Ok(Self {
            address,
            counts,
            requests,
            stop,
            accept: Some(accept),
        })
    }

    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Body bytes served so far, per request path (e.g. `/a.zarr/c/0/0`).
    pub fn bytes_served(&self) -> BTreeMap<String, u64> {
        self.counts.lock().unwrap().clone()
    }

    /// Total body bytes served so far.
    pub fn total_bytes_served(&self) -> u64 {
        self.counts.lock().unwrap().values().sum()
    }

    /// Forget the bytes served so far.
    pub fn reset_counts(&self) {
        self.counts.lock().unwrap().clear();
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so that it sees the flag.
        let _ = TcpStream::connect_timeout(&self.address, Duration::from_secs(1));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

/// What a connection serves, and how.
struct Served<'a> {
    root: &'a Path,
    counts: &'a Counts,
    requests: &'a AtomicU64,
    seen: &'a Seen,
    misbehaviour: Option<Misbehaviour>,
    /// The misbehaviour for every path, not chunk keys only.
    everywhere: bool,
}

/// Answer the requests of one keep-alive connection until it closes or
/// stays idle for [`IDLE_TIMEOUT`].
fn serve_connection(stream: TcpStream, served: &Served<'_>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(IDLE_TIMEOUT))?;
    // Responses are written whole; waiting to coalesce them only adds latency.
    stream.set_nodelay(true)?;
    stream.set_write_timeout(Some(IDLE_TIMEOUT))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line)? == 0 {
            return Ok(());
        }
        let mut range = None;
        let mut token = String::new();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header)? == 0 {
                return Ok(());
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("range") {
                    range = Some(value.trim().to_string());
                }
                if name.eq_ignore_ascii_case("x-amz-security-token") {
                    token = value.trim().to_string();
                }
            }
        }
        served.requests.fetch_add(1, Ordering::SeqCst);
        let mut parts = request_line.split_whitespace();
        let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let misbehaviour = served
            .misbehaviour
            .filter(|_| served.everywhere || target.contains("/c/"));
        if let Some(Misbehaviour::BusyFirst(status, retry_after)) = misbehaviour
            && served.seen.lock().unwrap().insert(target.to_string())
        {
            let header = format!("Retry-After: {retry_after}");
            write_response(&mut writer, status, &[header], b"", false)?;
            continue;
        }
        if misbehaviour == Some(Misbehaviour::EchoSignature) {
            let canonical = format!(
                "GET\n{target}\n\nhost:127.0.0.1\nx-amz-security-token:{token}\n\nhost;x-amz-security-token\nUNSIGNED-PAYLOAD"
            );
            let hex: Vec<String> = canonical.bytes().map(|b| format!("{b:02x}")).collect();
            let body = format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match the signature you provided (token {token}).</Message><CanonicalRequest>{canonical}</CanonicalRequest><CanonicalRequestBytes>{}</CanonicalRequestBytes></Error>",
                hex.join(" ")
            );
            write_response(&mut writer, "403 Forbidden", &[], body.as_bytes(), false)?;
            continue;
        }
        if let Some(
            hostile @ (Misbehaviour::LongBody
            | Misbehaviour::HugeErrorBody
            | Misbehaviour::EndlessBody
            | Misbehaviour::RedirectTo(_)),
        ) = misbehaviour
        {
            return respond_hostile(&mut writer, hostile, target, range.as_deref(), served.root);
        }
        respond(
            &mut writer,
            method,
            target,
            range.as_deref(),
            served.root,
            served.counts,
            misbehaviour,
        )?;
    }
}

/// Write the response to one request.
fn respond(
    writer: &mut TcpStream,
    method: &str,
    target: &str,
    range: Option<&str>,
    root: &Path,
    counts: &Counts,
    misbehaviour: Option<Misbehaviour>,
) -> std::io::Result<()> {
    let head = method == "HEAD";
    if let Some(Misbehaviour::Status(status)) = misbehaviour {
        return write_response(writer, status, &[], b"", head);
    }
    if method != "GET" && !head {
        return write_response(writer, "405 Method Not Allowed", &[], b"", head);
    }
    let Some(file) = file_under(root, target) else {
        return write_response(writer, "404 Not Found", &[], b"", head);
    };
    let Ok(bytes) = std::fs::read(&file) else {
        return write_response(writer, "404 Not Found", &[], b"", head);
    };
    let len = bytes.len() as u64;
    let range = range.filter(|_| misbehaviour != Some(Misbehaviour::IgnoreRange));
    let (status, body, content_range) = match range.map(|r| parse_range(r, len)) {
        None | Some(RangeRequest::Several) => ("200 OK", &bytes[..], None),
        Some(RangeRequest::Unsatisfiable) => {
            let header = format!("Content-Range: bytes */{len}");
            return write_response(writer, "416 Range Not Satisfiable", &[header], b"", head);
        }
        Some(RangeRequest::One(0, end))
            if end + 1 == len && misbehaviour == Some(Misbehaviour::WholeAs200) =>
        {
            ("200 OK", &bytes[..], None)
        }
        Some(RangeRequest::One(start, end)) => (
            "206 Partial Content",
            &bytes[start as usize..=end as usize],
            Some(format!("Content-Range: bytes {start}-{end}/{len}")),
        ),
    };
    if !head {
        *counts
            .lock()
            .unwrap()
            .entry(target.to_string())
            .or_default() += body.len() as u64;
    }
    let headers: Vec<String> = content_range.iter().cloned().collect();
    if misbehaviour == Some(Misbehaviour::DropMidBody) && !head {
        write_head(writer, status, &headers, body.len())?;
        writer.write_all(&body[..body.len() / 2])?;
        writer.flush()?;
        let _ = writer.shutdown(std::net::Shutdown::Both);
        return Err(std::io::Error::other("dropped mid-body on purpose"));
    }
    if misbehaviour == Some(Misbehaviour::LyingLength) && !head {
        let text = head_text(status, &headers, body.len()).replace(
            &format!("Content-Length: {}\r\n", body.len()),
            "Content-Length: 1125899906842624\r\n",
        );
        writer.write_all(text.as_bytes())?;
        // In two pieces: a client that sizes a buffer by the length does so
        // when a second piece comes.
        let half = body.len() / 2;
        writer.write_all(&body[..half])?;
        writer.flush()?;
        std::thread::sleep(Duration::from_millis(20));
        writer.write_all(&body[half..])?;
        writer.flush()?;
        let _ = writer.shutdown(std::net::Shutdown::Both);
        return Err(std::io::Error::other("a lying length on purpose"));
    }
    if misbehaviour == Some(Misbehaviour::ShortBody) && content_range.is_some() {
        return write_response(writer, status, &headers, &body[..body.len() / 2], head);
    }
    write_response(writer, status, &headers, body, head)
}

/// Answer one request the way a hostile server would (the connection is
/// closed after it; a redirect says so, as a server must, or the client
/// may send its next request on the closing connection and see a reset).
fn respond_hostile(
    writer: &mut TcpStream,
    misbehaviour: Misbehaviour,
    target: &str,
    range: Option<&str>,
    root: &Path,
) -> std::io::Result<()> {
    const GIB: u64 = 1 << 30;
    let len = file_under(root, target)
        .and_then(|f| std::fs::metadata(f).ok())
        .map_or(0, |m| m.len());
    let head = match misbehaviour {
        Misbehaviour::LongBody => {
            let (start, end) = match range.map(|r| parse_range(r, len)) {
                Some(RangeRequest::One(start, end)) => (start, end),
                _ => (0, len.saturating_sub(1)),
            };
            format!(
                "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {start}-{end}/{len}\r\nContent-Length: {GIB}\r\n\r\n"
            )
        }
        Misbehaviour::HugeErrorBody => {
            format!("HTTP/1.1 403 Forbidden\r\nContent-Length: {GIB}\r\n\r\n")
        }
        Misbehaviour::EndlessBody => {
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_string()
        }
        Misbehaviour::RedirectTo(port) => {
            let location = format!("http://127.0.0.1:{port}{target}");
            let text = format!(
                "HTTP/1.1 307 Temporary Redirect\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            writer.write_all(text.as_bytes())?;
            return writer.flush();
        }
        _ => unreachable!("not a hostile misbehaviour"),
    };
    writer.write_all(head.as_bytes())?;
    // Sent until the client stops reading (a write fails) or, at most,
    // what the head announced; bounded in time by the write timeout.
    let piece = vec![b'x'; 64 << 10];
    let chunked = misbehaviour == Misbehaviour::EndlessBody;
    let mut sent = 0u64;
    while sent < GIB * 4 {
        if chunked {
            writer.write_all(format!("{:x}\r\n", piece.len()).as_bytes())?;
            writer.write_all(&piece)?;
            writer.write_all(b"\r\n")?;
        } else {
            writer.write_all(&piece)?;
        }
        sent += piece.len() as u64;
        if !chunked && sent >= GIB {
            break;
        }
    }
    writer.flush()
}

/// The file `target` names under `root`, if it is a file there.
fn file_under(root: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next()?.trim_start_matches('/');
    if path
        .split('/')
        .any(|part| part == ".." || part.contains('\\'))
    {
        return None;
    }
    let file = root.join(path);
    file.is_file().then_some(file)
}

/// A `Range` header's meaning for a file of `len` bytes.
#[derive(Debug, PartialEq)]
enum RangeRequest {
    /// One range, first and last byte inclusive.
    One(u64, u64),
    /// Several ranges: answered with the whole file.
    Several,
    /// Not satisfiable (or not understood).
    Unsatisfiable,
}

fn parse_range(header: &str, len: u64) -> RangeRequest {
    let Some(spec) = header.strip_prefix("bytes=") else {
        return RangeRequest::Unsatisfiable;
    };
    if spec.contains(',') {
        return RangeRequest::Several;
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return RangeRequest::Unsatisfiable;
    };
    let range = match (first.parse::<u64>(), last.parse::<u64>()) {
        (Ok(start), Ok(end)) => Some((start, end.min(len.saturating_sub(1)))),
        (Ok(start), Err(_)) if last.is_empty() => Some((start, len.saturating_sub(1))),
        (Err(_), Ok(suffix)) if first.is_empty() && suffix > 0 => {
            Some((len.saturating_sub(suffix), len.saturating_sub(1)))
        }
        _ => None,
    };
    match range {
        Some((start, end)) if start <= end && end < len => RangeRequest::One(start, end),
        _ => RangeRequest::Unsatisfiable,
    }
}

/// The status line and headers of a response with a body of `len` bytes.
fn head_text(status: &str, headers: &[String], len: usize) -> String {
    let mut response = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {len}\r\nAccept-Ranges: bytes\r\n\
         Content-Type: application/octet-stream\r\n"
    );
    for header in headers {
        response.push_str(header);
        response.push_str("\r\n");
    }
    response.push_str("\r\n");
    response
}

fn write_head(
    writer: &mut TcpStream,
    status: &str,
    headers: &[String],
    len: usize,
) -> std::io::Result<()> {
    writer.write_all(head_text(status, headers, len).as_bytes())
}

fn write_response(
    writer: &mut TcpStream,
    status: &str,
    headers: &[String],
    body: &[u8],
    head: bool,
) -> std::io::Result<()> {
    let mut response = head_text(status, headers, body.len()).into_bytes();
    if !head {
        response.extend_from_slice(body);
    }
    writer.write_all(&response)?;
    writer.flush()
}

#[cfg(test)]
mod tests {
    use super::{RangeRequest, parse_range};

    #[test]
    fn ranges() {
        assert_eq!(parse_range("bytes=0-9", 100), RangeRequest::One(0, 9));
        assert_eq!(parse_range("bytes=90-", 100), RangeRequest::One(90, 99));
        assert_eq!(parse_range("bytes=-10", 100), RangeRequest::One(90, 99));
        assert_eq!(parse_range("bytes=95-200", 100), RangeRequest::One(95, 99));
        assert_eq!(parse_range("bytes=0-1, 5-6", 100), RangeRequest::Several);
        assert_eq!(parse_range("bytes=100-", 100), RangeRequest::Unsatisfiable);
        assert_eq!(parse_range("bytes=5-2", 100), RangeRequest::Unsatisfiable);
        assert_eq!(parse_range("items=0-1", 100), RangeRequest::Unsatisfiable);
    }
}
