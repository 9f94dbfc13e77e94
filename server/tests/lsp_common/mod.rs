//! An in-process language-server client for the tests: framing, answering server
//! requests with `null`, waiting for a notification among those seen.

#![allow(dead_code)]

use serde_json::{json, Value};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

pub struct Client {
    pub read: BufReader<ReadHalf<DuplexStream>>,
    pub write: WriteHalf<DuplexStream>,
    pub server: tokio::task::JoinHandle<bool>,
    pub next_id: i64,
    /// Notifications and server requests seen, in order.
    pub seen: Vec<Value>,
    /// Answers to server requests by method (the others are answered with `null`).
    pub answers: Vec<(String, Value)>,
}

impl Client {
    pub fn start() -> Client {
        Client::start_with_pipe(1 << 20)
    }

    /// A client whose pipes to and from the server hold `capacity` bytes each (a Linux
    /// pipe holds 64 KiB): writes wait once the other side stops reading.
    pub fn start_with_pipe(capacity: usize) -> Client {
        let (client_io, server_io) = tokio::io::duplex(capacity);
        let (server_read, server_write) = tokio::io::split(server_io);
        let server = tokio::spawn(fevlint_lsp::serve(server_read, server_write, None));
        let (read, write) = tokio::io::split(client_io);
        Client { read: BufReader::new(read), write, server, next_id: 1, seen: Vec::new(), answers: Vec::new() }
    }

    pub async fn send(&mut self, v: Value) {
        let body = v.to_string();
        let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        out.extend_from_slice(body.as_bytes());
        self.write.write_all(&out).await.expect("write");
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params})).await;
    }

    /// Reads one message; server requests are answered (from `answers`, else with
    /// `null`) and recorded.
    pub async fn read(&mut self) -> Value {
        let mut len = 0;
        loop {
            let mut line = String::new();
            self.read.read_line(&mut line).await.expect("read");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(v) = line.strip_prefix("Content-Length: ") {
                len = v.parse().expect("length");
            }
        }
        let mut body = vec![0; len];
        self.read.read_exact(&mut body).await.expect("body");
        let v: Value = serde_json::from_slice(&body).expect("json");
        if v.get("method").is_some() && v.get("id").is_some() {
            let id = v["id"].clone();
            let answer = self.answers.iter().find(|(m, _)| v["method"] == m.as_str()).map(|(_, a)| a.clone());
            self.send(json!({"jsonrpc": "2.0", "id": id, "result": answer.unwrap_or(Value::Null)})).await;
        }
        v
    }

    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        loop {
            let v = tokio::time::timeout(Duration::from_secs(20), self.read()).await.expect("answer in time");
            if v["id"] == json!(id) && v.get("method").is_none() {
                return v["result"].clone();
            }
            self.seen.push(v);
        }
    }

    /// Waits for a message matching `pred` (from those seen, then new ones).
    pub async fn wait(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.seen.iter().position(&pred) {
            return self.seen.remove(i);
        }
        loop {
            let v = tokio::time::timeout(Duration::from_secs(20), self.read())
                .await
                .unwrap_or_else(|_| panic!("no {what} within 20 s; seen: {:#?}", self.seen));
            if pred(&v) {
                return v;
            }
            self.seen.push(v);
        }
    }

    pub async fn initialize(&mut self, capabilities: Value, options: Value) {
        self.request("initialize", json!({"capabilities": capabilities, "initializationOptions": options})).await;
        self.notify("initialized", json!({})).await;
    }

    pub async fn finish(mut self) {
        self.request("shutdown", Value::Null).await;
        self.notify("exit", Value::Null).await;
        let clean = tokio::time::timeout(Duration::from_secs(5), self.server).await.expect("exit").expect("join");
        assert!(clean, "clean exit");
    }
}
