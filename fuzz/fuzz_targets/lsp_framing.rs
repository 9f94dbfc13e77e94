//! Fuzzes the language server's input stream: `Content-Length` framing, headers, JSON
//! bodies and the requests they carry, fed to the real server (`fevlint_lsp::serve`)
//! over an in-memory pipe. The stream ends after the input: the server must stop, never
//! panic or hang.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use tokio::io::AsyncWriteExt;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("runtime")
    })
}

fuzz_target!(|data: &[u8]| {
    let input = data.to_vec();
    runtime().block_on(async move {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(server);
        let serve = tokio::spawn(fevlint_lsp::serve(read, write, None));
        let (mut from_server, mut to_server) = tokio::io::split(client);
        let drain = tokio::spawn(async move {
            let _ = tokio::io::copy(&mut from_server, &mut tokio::io::sink()).await;
        });
        let _ = to_server.write_all(&input).await;
        let _ = to_server.shutdown().await;
        drop(to_server);
        // A stream that ends must end the server; a bound keeps a hang visible as a
        // timeout instead of a stuck fuzzer.
        let done = tokio::time::timeout(std::time::Duration::from_secs(5), serve).await;
        assert!(done.is_ok(), "the server did not stop after its input ended");
        drain.abort();
    });
});
