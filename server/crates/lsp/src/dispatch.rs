//! The one reader and the order of everything: each message is read, parsed once
//! (`transport`) and given to tower-lsp-server's service by this loop, in the order the
//! client sent it, and the loop polls the handler's future once before it reads the next
//! message. A handler still waiting after that poll (on a kernel, a core, the client)
//! goes on in a task of its own, and the loop reads on.
//!
//! Invariant: handler `n`'s first poll happens before message `n + 1` is read. The
//! handlers that change what a request reads (`didOpen`, `didChange`, `didClose`,
//! configuration and watched files) do so in synchronous code before their first
//! `.await`, and publish the edit's diagnostics there too, so an edit is applied, and its
//! publish queued, before the next message exists for the server; a request reads the
//! documents at its first poll, so it sees exactly the edits the client sent before it.
//! This is the loop's doing, not the scheduler's: tower-lsp-server's own `Server` polls
//! up to four handlers at a time in a `buffer_unordered` (whose order is an open question
//! upstream, tower-lsp-community/tower-lsp-server#36), and four requests that wait kept
//! every later message, edits included, unread.
//!
//! `initialize` runs to its end before anything else is read (the protocol forbids
//! anything else meanwhile); `exit` ends the loop, as does the end of input.

use crate::transport::{self, Frame, Incoming, Out, Raw};
use futures::{SinkExt, StreamExt};
use std::future::Future;
use std::task::Poll;
use tokio::io::{AsyncRead, BufReader};
use tokio::sync::mpsc::UnboundedSender;
use tower_lsp_server::jsonrpc::{Request, Response};
use tower_lsp_server::ClientSocket;
use tower_service::Service;

/// Serves the messages of `input` with `service` until `exit` or the end of input:
/// answers and the server's own requests and notifications (from `socket`) go to
/// `frames`, large results resolved through `raw`.
pub async fn serve<I, S>(input: I, mut service: S, socket: ClientSocket, frames: UnboundedSender<Out>, raw: Raw)
where
    I: AsyncRead + Unpin,
    S: Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
    S::Error: std::fmt::Display,
{
    let (mut to_client, mut from_client) = socket.split();
    // What the server asks or tells the client, in the order it does.
    let out = frames.clone();
    let forward = tokio::spawn(async move {
        while let Some(request) = to_client.next().await {
            match serde_json::to_vec(&request) {
                Ok(body) => {
                    if out.send(Out::new(transport::frame(&body))).is_err() {
                        break;
                    }
                }
                Err(e) => eprintln!("fevlint lsp: cannot serialize a message to the client: {e}"),
            }
        }
    });
    let mut input = BufReader::with_capacity(1 << 16, input);
    loop {
        let body = match transport::read_frame(&mut input).await {
            Ok(Frame::Body(body)) => body,
            Ok(Frame::BadHeader(why)) => {
                eprintln!("fevlint lsp: {why}; skipping to the next message");
                let _ = frames.send(Out::new(transport::error_reply(serde_json::Value::Null, -32700, &why)));
                continue;
            }
            Ok(Frame::Eof) | Err(_) => break,
        };
        let request = match transport::parse(&body) {
            Ok(Incoming::Request(request)) => request,
            Ok(Incoming::Response(response)) => {
                if from_client.send(response).await.is_err() {
                    break;
                }
                continue;
            }
            Err(reply) => {
                eprintln!("fevlint lsp: dropped a malformed message ({} bytes)", body.len());
                let _ = frames.send(Out::new(reply));
                continue;
            }
        };
        drop(body);
        let (initialize, exit) = (request.method() == "initialize", request.method() == "exit");
        if std::future::poll_fn(|cx| service.poll_ready(cx)).await.is_err() {
            break; // the server has exited
        }
        let mut answer = Box::pin(service.call(request));
        if initialize {
            answer_with(&frames, &raw, answer.await);
            continue;
        }
        // The handler's first poll, before the next message is read.
        match std::future::poll_fn(|cx| Poll::Ready(answer.as_mut().poll(cx))).await {
            Poll::Ready(result) => answer_with(&frames, &raw, result),
            Poll::Pending => {
                let (frames, raw) = (frames.clone(), raw.clone());
                tokio::spawn(async move { answer_with(&frames, &raw, answer.await) });
            }
        }
        if exit {
            break;
        }
    }
    // As tower-lsp-server's `Server`: the server's own messages stop with the input;
    // answers of handlers still running are written when they end.
    forward.abort();
}

/// Queues a handler's answer (notifications have none).
fn answer_with<E: std::fmt::Display>(frames: &UnboundedSender<Out>, raw: &Raw, result: Result<Option<Response>, E>) {
    match result {
        Ok(Some(response)) => match raw.frame(&response) {
            Ok(frame) => {
                let _ = frames.send(Out::new(frame));
            }
            Err(e) => eprintln!("fevlint lsp: cannot serialize an answer: {e}"),
        },
        Ok(None) => {}
        Err(e) => eprintln!("fevlint lsp: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tower_lsp_server::jsonrpc::Id;
    use tower_lsp_server::ls_types::{InitializeParams, InitializeResult};
    use tower_lsp_server::{LanguageServer, LspService};

    /// A service that logs each call and each handler's first poll; `slow` handlers never
    /// end (a request waiting on a kernel load or on the client).
    struct Logged(Arc<Mutex<Vec<String>>>);

    impl Service<Request> for Logged {
        type Response = Option<Response>;
        type Error = String;
        type Future = std::pin::Pin<Box<dyn Future<Output = Result<Option<Response>, String>> + Send>>;

        fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> Poll<Result<(), String>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: Request) -> Self::Future {
            let log = Arc::clone(&self.0);
            let (method, id, _) = request.into_parts();
            log.lock().expect("log").push(format!("read {method}"));
            Box::pin(async move {
                log.lock().expect("log").push(format!("ran {method}"));
                if method.starts_with("slow") {
                    std::future::pending::<()>().await;
                }
                Ok(id.map(|id| Response::from_ok(id, serde_json::Value::String(method.into_owned()))))
            })
        }
    }

    struct Quiet;

    impl LanguageServer for Quiet {
        async fn initialize(&self, _: InitializeParams) -> tower_lsp_server::jsonrpc::Result<InitializeResult> {
            Ok(InitializeResult::default())
        }
        async fn shutdown(&self) -> tower_lsp_server::jsonrpc::Result<()> {
            Ok(())
        }
    }

    /// Eight requests that wait do not hold back the edit and the request after them, and
    /// every handler runs its first part in the order the messages came, before the next
    /// one is read. (tower-lsp-server's `Server` polls four handlers at a time: the same
    /// input left the edit unapplied behind four waiting requests.)
    #[tokio::test]
    async fn handlers_start_in_arrival_order_and_waiting_ones_hold_nothing_back() {
        let mut methods: Vec<String> = (0..8).map(|i| format!("slow{i}")).collect();
        methods.extend(["didChange".to_owned(), "hover".to_owned()]);
        let mut input = Vec::new();
        for (i, m) in methods.iter().enumerate() {
            let request = if m == "didChange" {
                Request::build(m.clone()).finish()
            } else {
                Request::build(m.clone()).id(i as i64).finish()
            };
            input.extend(transport::frame(&serde_json::to_vec(&request).expect("json")));
        }
        let log = Arc::new(Mutex::new(Vec::new()));
        let (_, socket) = LspService::new(|_| Quiet);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        serve(&input[..], Logged(Arc::clone(&log)), socket, tx, Raw::default()).await;
        let expected: Vec<String> = methods.iter().flat_map(|m| [format!("read {m}"), format!("ran {m}")]).collect();
        assert_eq!(*log.lock().expect("log"), expected);
        let answer = rx.try_recv().expect("the hover's answer");
        let mut read = BufReader::new(&answer.frame[..]);
        let Ok(Frame::Body(body)) = transport::read_frame(&mut read).await else { panic!("a frame") };
        let response: Response = serde_json::from_slice(&body).expect("a response");
        assert_eq!(response.id(), &Id::Number(9));
        assert!(rx.try_recv().is_err(), "the waiting requests have not answered");
    }
}
