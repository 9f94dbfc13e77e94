//! stdio framing and parsing in front of tower-lsp-server's service, so that no input can
//! stop the server.
//!
//! tower-lsp-server's own `Server` ends its read loop at the first message it cannot
//! decode (a bad `Content-Length`, a body that is not JSON-RPC), which would leave the
//! editor with a dead server, and it reads nothing bounded. This layer reads stdin itself:
//! a `Content-Length` over [`MAX_CONTENT_LENGTH`] and header lines over 8 KiB are refused
//! before anything is allocated for them, what is malformed is answered with a JSON-RPC
//! error (`-32700` parse error, `-32600` invalid request) and the input resynchronises at
//! the next header. Each well-formed body is parsed once, straight into the request or
//! response tower-lsp-server takes ([`parse`]); `dispatch` hands it on. The output side
//! writes whole frames, so error replies never cut into the server's messages.
//!
//! Invariant: the output queue holds at most one `publishDiagnostics` per document. A
//! client that sends edits faster than it reads (10,000 without waiting) would otherwise
//! find a publish of every superseded version queued (1.7 GB for a 200 KB publish): a
//! newer publish replaces the queued one, in its place, while the writer waits on the
//! client.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc;

/// Larger bodies are refused (and the input resynchronised), so a corrupt header cannot
/// make the server allocate or wait for an absurd amount.
pub const MAX_CONTENT_LENGTH: usize = 64 << 20;
/// A header line longer than this is garbage.
const MAX_HEADER_LINE: usize = 8 << 10;

/// One framed message or what went wrong reading it.
#[derive(Debug)]
pub enum Frame {
    Body(Vec<u8>),
    /// Headers without a usable `Content-Length`; the message is skipped.
    BadHeader(String),
    Eof,
}

/// Reads one header line (up to `\n`), keeping at most `MAX_HEADER_LINE` bytes of it.
async fn header_line<R: AsyncBufRead + Unpin>(r: &mut R, line: &mut Vec<u8>) -> io::Result<bool> {
    line.clear();
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            return Ok(!line.is_empty());
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let room = MAX_HEADER_LINE.saturating_sub(line.len());
        line.extend_from_slice(&buf[..take.min(room)]);
        r.consume(take);
        if done {
            return Ok(true);
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle))
}

/// Reads the next frame. Garbage before a header is skipped up to `Content-Length`.
pub async fn read_frame<R: AsyncBufRead + Unpin>(r: &mut R) -> io::Result<Frame> {
    let mut line = Vec::new();
    let mut length: Option<Result<usize, String>> = None;
    let mut any_header = false;
    loop {
        if !header_line(r, &mut line).await? {
            return Ok(Frame::Eof);
        }
        let trimmed = line.strip_suffix(b"\n").unwrap_or(&line);
        let trimmed = trimmed.strip_suffix(b"\r").unwrap_or(trimmed);
        if trimmed.is_empty() {
            if !any_header {
                continue; // a stray blank line between messages
            }
            break;
        }
        any_header = true;
        // Leftovers of a message whose length was wrong may precede the next header.
        let header = match find(trimmed, b"content-length") {
            Some(i) => &trimmed[i..],
            None => trimmed,
        };
        let Some(colon) = header.iter().position(|&b| b == b':') else { continue };
        let (name, value) = (&header[..colon], &header[colon + 1..]);
        if name.eq_ignore_ascii_case(b"content-length") {
            let value = String::from_utf8_lossy(value).trim().to_owned();
            length = Some(match value.parse::<usize>() {
                Ok(n) if n <= MAX_CONTENT_LENGTH => Ok(n),
                Ok(n) => Err(format!("Content-Length {n} is over the limit of {MAX_CONTENT_LENGTH} bytes")),
                Err(_) => Err(format!("Content-Length `{value}` is not a number")),
            });
        }
    }
    match length {
        None => Ok(Frame::BadHeader("a message without Content-Length".to_owned())),
        Some(Err(e)) => Ok(Frame::BadHeader(e)),
        Some(Ok(n)) => {
            let mut body = vec![0; n];
            match r.read_exact(&mut body).await {
                Ok(_) => Ok(Frame::Body(body)),
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(Frame::Eof),
                Err(e) => Err(e),
            }
        }
    }
}

/// A frame for the writer.
#[derive(Debug)]
pub struct Out {
    pub frame: Vec<u8>,
    /// A frame with a key replaces a queued frame with the same key (the publish of a
    /// document: the newest is the only one worth sending).
    pub replaces: Option<String>,
}

impl Out {
    pub fn new(frame: Vec<u8>) -> Out {
        Out { frame, replaces: None }
    }
}

/// Queues `o`, replacing a queued frame with its key.
fn enqueue(queue: &mut VecDeque<Out>, o: Out) {
    if let Some(key) = &o.replaces {
        if let Some(old) = queue.iter_mut().find(|q| q.replaces.as_ref() == Some(key)) {
            *old = o;
            return;
        }
    }
    queue.push_back(o);
}

pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

pub fn error_reply(id: serde_json::Value, code: i64, message: &str) -> Vec<u8> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    frame(body.to_string().as_bytes())
}

/// A well-formed incoming message.
#[derive(Debug)]
pub enum Incoming {
    /// A request or a notification.
    Request(jsonrpc::Request),
    /// The client's answer to a request of the server's.
    Response(jsonrpc::Response),
}

/// Parses a body once, into what tower-lsp-server takes; a body that is not JSON-RPC gets
/// the error reply to send instead (`-32700` for what is not JSON, `-32600` for JSON that
/// is no request, notification or response).
pub fn parse(body: &[u8]) -> Result<Incoming, Vec<u8>> {
    // A request's `method` defaults to empty: what has none may be a response.
    match serde_json::from_slice::<jsonrpc::Request>(body) {
        Ok(request) if !request.method().is_empty() => return Ok(Incoming::Request(request)),
        Ok(_) => {}
        Err(e) if e.is_data() => {}
        Err(e) => return Err(error_reply(serde_json::Value::Null, -32700, &format!("parse error: {e}"))),
    }
    if let Ok(response) = serde_json::from_slice::<jsonrpc::Response>(body) {
        return Ok(Incoming::Response(response));
    }
    // Only a malformed message is read twice, for the id its error reply names.
    let id = match serde_json::from_slice::<serde_json::Value>(body).ok().and_then(|v| v.get("id").cloned()) {
        Some(id @ (serde_json::Value::Number(_) | serde_json::Value::String(_))) => id,
        _ => serde_json::Value::Null,
    };
    Err(error_reply(id, -32600, "invalid request: not a JSON-RPC 2.0 request, notification or response"))
}

/// Results the server wrote itself, by token: a handler whose answer is large (a pull
/// report of thousands of diagnostics) writes its JSON straight from the encoded
/// findings and answers tower-lsp-server with a placeholder naming the token (in its
/// `resultId`, [`RAW_MARK`]); [`Raw::frame`] puts the JSON in its place. tower-lsp-server
/// would otherwise build a `serde_json::Value` tree of every diagnostic and serialize it.
#[derive(Clone, Debug, Default)]
pub struct Raw(std::sync::Arc<std::sync::Mutex<std::collections::HashMap<u64, Vec<u8>>>>);

/// What a placeholder result's `resultId` starts with.
pub const RAW_MARK: &str = "fevlint-raw:";

impl Raw {
    /// Keeps `result` (a JSON value) under a new token, returned as the placeholder's
    /// `resultId`.
    pub fn put(&self, result: Vec<u8>) -> String {
        let mut map = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        map.insert(n, result);
        format!("{RAW_MARK}{n}")
    }

    /// The frame of `response`, with a placeholder's result replaced by the JSON kept for it.
    pub fn frame(&self, response: &jsonrpc::Response) -> serde_json::Result<Vec<u8>> {
        let body = serde_json::to_vec(response)?;
        if body.len() > 512 || response.result().is_none() {
            return Ok(frame(&body));
        }
        let Some(at) = find(&body, RAW_MARK.as_bytes()) else { return Ok(frame(&body)) };
        let digits: String =
            body[at + RAW_MARK.len()..].iter().take_while(|b| b.is_ascii_digit()).map(|&b| b as char).collect();
        let Some(result) = digits
            .parse()
            .ok()
            .and_then(|n: u64| self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&n))
        else {
            return Ok(frame(&body));
        };
        // Framed in one buffer of its size: the result is megabytes, copied once.
        let mut head = Vec::with_capacity(64);
        head.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        serde_json::to_writer(&mut head, response.id())?;
        head.extend_from_slice(br#","result":"#);
        let header = format!("Content-Length: {}\r\n\r\n", head.len() + result.len() + 1);
        let mut out = Vec::with_capacity(header.len() + head.len() + result.len() + 1);
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(&head);
        out.extend_from_slice(&result);
        out.push(b'}');
        Ok(out)
    }
}

/// Runs `fut` to completion while taking frames from the channel into the queue (each
/// enqueued: a newer publish replaces a queued one).
async fn receiving<T>(
    fut: impl std::future::Future<Output = T>,
    frames: &mut mpsc::UnboundedReceiver<Out>,
    queue: &mut VecDeque<Out>,
    open: &mut bool,
) -> T {
    tokio::pin!(fut);
    loop {
        tokio::select! {
            done = &mut fut => return done,
            got = frames.recv(), if *open => match got {
                Some(o) => enqueue(queue, o),
                None => *open = false,
            },
        }
    }
}

/// Writes frames to `out` until the channel closes, flushing after each. The channel is
/// read while a frame is written and flushed (stdout's flush is where a client that does
/// not read makes the writer wait), so a newer publish replaces a queued one (see the
/// module's invariant) instead of piling up in the channel.
pub async fn write_frames<W: AsyncWrite + Unpin>(mut out: W, mut frames: mpsc::UnboundedReceiver<Out>) {
    let mut queue: VecDeque<Out> = VecDeque::new();
    let mut open = true;
    loop {
        let Some(current) = queue.pop_front() else {
            if !open {
                break;
            }
            match frames.recv().await {
                Some(o) => enqueue(&mut queue, o),
                None => open = false,
            }
            continue;
        };
        // The futures are polled to completion, never dropped half-way.
        if receiving(out.write_all(&current.frame), &mut frames, &mut queue, &mut open).await.is_err() {
            break;
        }
        drop(current);
        if receiving(out.flush(), &mut frames, &mut queue, &mut open).await.is_err() {
            break;
        }
    }
}

/// A blocking writer (the process's standard output) for [`write_frames`], written from a
/// blocking thread as tokio's `Stdout` is, without keeping the largest frame's bytes:
/// tokio's keeps a buffer as large as its largest write (up to 2 MB) for the life of the
/// process, which after a 4,500-finding publish was 1.3 MB, about 280 bytes per finding
/// (issue 26). Each write is copied into a buffer of its size, handed to the thread and
/// freed once written; the next write or flush waits for it.
#[derive(Debug)]
pub struct Blocking<W> {
    out: std::sync::Arc<std::sync::Mutex<W>>,
    /// The write under way, if any.
    busy: Option<tokio::task::JoinHandle<io::Result<()>>>,
}

impl<W: io::Write + Send + 'static> Blocking<W> {
    pub fn new(out: W) -> Blocking<W> {
        Blocking { out: std::sync::Arc::new(std::sync::Mutex::new(out)), busy: None }
    }

    /// Waits for the write under way; its error, if it failed.
    fn poll_idle(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<io::Result<()>> {
        use std::task::Poll;
        let Some(busy) = &mut self.busy else { return Poll::Ready(Ok(())) };
        let done = std::task::ready!(std::pin::Pin::new(busy).poll(cx));
        self.busy = None;
        Poll::Ready(done.unwrap_or_else(|e| Err(io::Error::other(e))))
    }
}

impl<W: io::Write + Send + 'static> AsyncWrite for Blocking<W> {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<io::Result<usize>> {
        let this = self.get_mut();
        std::task::ready!(this.poll_idle(cx))?;
        let (bytes, out) = (buf.to_vec(), std::sync::Arc::clone(&this.out));
        this.busy = Some(tokio::task::spawn_blocking(move || {
            let mut out = out.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            out.write_all(&bytes)?;
            out.flush()
        }));
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<io::Result<()>> {
        self.get_mut().poll_idle(cx)
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        self.get_mut().poll_idle(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    /// While the client does not read, a newer publish of a document replaces the queued
    /// one, and the other frames keep their order: whether the writer waits in a write
    /// (a pipe) or in a flush (a buffered output, as tokio's stdout is). The clock is paused:
    /// the test's sleep ends only once the writer waits with the channel empty, however
    /// loaded the machine (a 50 ms wall-clock wait failed under load).
    #[tokio::test(start_paused = true)]
    async fn a_queued_publish_is_replaced_by_a_newer_one() {
        // A pipe of 16 bytes: the writer waits on the first frame until the reader reads.
        let (client, server) = tokio::io::duplex(16);
        publishes_while_the_client_does_not_read(client, server).await;
        let (client, server) = tokio::io::duplex(16);
        publishes_while_the_client_does_not_read(client, tokio::io::BufWriter::with_capacity(1 << 20, server)).await;
    }

    async fn publishes_while_the_client_does_not_read<W: AsyncWrite + Unpin + Send + 'static>(
        client: tokio::io::DuplexStream,
        server: W,
    ) {
        let (tx, rx) = mpsc::unbounded_channel();
        let writer = tokio::spawn(write_frames(server, rx));
        let publish =
            |uri: &str, v: u32| Out { frame: frame(format!("{uri}:{v}").as_bytes()), replaces: Some(uri.to_owned()) };
        tx.send(Out::new(frame(b"first, long enough to fill the pipe"))).expect("send");
        for v in 0..1_000 {
            tx.send(publish("a", v)).expect("send");
            tx.send(publish("b", v)).expect("send");
            if v == 500 {
                tx.send(Out::new(frame(b"reply"))).expect("send");
            }
        }
        // Let the writer take everything in while it is blocked (the paused clock advances
        // only when no task can run).
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        drop(tx);
        let mut read = BufReader::new(client);
        let mut got = Vec::new();
        while let Ok(Frame::Body(b)) = read_frame(&mut read).await {
            got.push(String::from_utf8(b).expect("utf-8"));
        }
        writer.await.expect("writer");
        assert_eq!(got, ["first, long enough to fill the pipe", "a:999", "b:999", "reply"]);
    }

    /// Frames written through [`Blocking`] arrive whole and in order, however large, and
    /// a failed write ends the writer.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_blocking_writer_writes_every_frame_in_order() {
        #[derive(Clone, Default)]
        struct Sink(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
        impl io::Write for Sink {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                let mut v = self.0.lock().expect("sink");
                // Short writes, as a pipe makes them.
                let n = buf.len().min(1 << 16);
                v.extend_from_slice(&buf[..n]);
                Ok(n)
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let sink = Sink::default();
        let (tx, rx) = mpsc::unbounded_channel();
        let writer = tokio::spawn(write_frames(Blocking::new(sink.clone()), rx));
        let big: Vec<u8> = (0..3_000_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let frames = [frame(b"first"), frame(&big), frame(b"last")];
        for f in &frames {
            tx.send(Out::new(f.clone())).expect("send");
        }
        drop(tx);
        writer.await.expect("writer");
        assert_eq!(*sink.0.lock().expect("sink"), frames.concat());

        struct Broken;
        impl io::Write for Broken {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::from(io::ErrorKind::BrokenPipe))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let writer = tokio::spawn(write_frames(Blocking::new(Broken), rx));
        tx.send(Out::new(frame(b"lost"))).expect("send");
        // The writer stops at the error, with the channel still open.
        tokio::time::timeout(std::time::Duration::from_secs(60), writer).await.expect("ended").expect("writer");
    }

    #[tokio::test]
    async fn recovers_from_bad_headers_and_bodies() {
        let good = br#"{"jsonrpc":"2.0","id":1,"method":"x"}"#;
        let mut input = Vec::new();
        input.extend_from_slice(b"Content-Length: abc\r\n\r\n");
        input.extend_from_slice(b"garbage\r\nContent-Type: x\r\n\r\n");
        input.extend_from_slice(b"Content-Length: 99999999999999\r\n\r\n");
        input.extend_from_slice(b"Content-Length: 5\r\n\r\n{oops");
        input.extend_from_slice(b"Content-Length: 2\r\n\r\n{}");
        input.extend_from_slice(&frame(good));
        let mut r = BufReader::new(&input[..]);
        let mut kinds = Vec::new();
        loop {
            match read_frame(&mut r).await.expect("read") {
                Frame::Eof => break,
                Frame::BadHeader(_) => kinds.push("header".to_owned()),
                Frame::Body(b) => kinds.push(match parse(&b) {
                    Ok(_) => "ok".to_owned(),
                    Err(reply) if String::from_utf8_lossy(&reply).contains("-32700") => "parse".to_owned(),
                    Err(_) => "invalid".to_owned(),
                }),
            }
        }
        assert_eq!(kinds, ["header", "header", "header", "parse", "invalid", "ok"]);
    }

    /// Requests, notifications and the client's answers are told apart in one parse.
    #[test]
    fn requests_notifications_and_responses() {
        let kind = |body: &str| match parse(body.as_bytes()) {
            Ok(Incoming::Request(r)) => format!("request {}", r.method()),
            Ok(Incoming::Response(r)) => format!("response {}", r.id()),
            Err(reply) => String::from_utf8_lossy(&reply).into_owned(),
        };
        assert_eq!(kind(r#"{"jsonrpc":"2.0","id":1,"method":"hover","params":{}}"#), "request hover");
        assert_eq!(kind(r#"{"jsonrpc":"2.0","method":"exit"}"#), "request exit");
        assert_eq!(kind(r#"{"jsonrpc":"2.0","id":1,"result":null}"#), "response 1");
        assert_eq!(kind(r#"{"jsonrpc":"2.0","id":"a","result":{"x":[1]}}"#), "response \"a\"");
        assert_eq!(kind(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"no"}}"#), "response 2");
        assert!(kind(r#"{"jsonrpc":"2.0","id":7}"#).contains(r#""id":7"#));
    }
}
