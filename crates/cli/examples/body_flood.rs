//! A flood of unfinished bodies on `subsim serve` (issue #31), for
//! `benches/scripts/playground-body-flood.sh`: CONNECTIONS connections each send a POST
//! head announcing 1,048,000 bytes and then 1,040,000 of them, and hold the connection
//! open for HOLD seconds without finishing (the server answers 408 or 503), then close.
//! Prints when all are sent and when all are closed, so the script can read the server's
//! memory in between.
//!
//! usage: cargo run --release -p subsim --example body_flood -- ADDR [CONNECTIONS] [HOLD]

use std::io::Write as _;
use std::time::Duration;

use tokio::io::AsyncWriteExt;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(addr) = args.first().cloned() else {
        eprintln!("usage: body_flood ADDR [CONNECTIONS] [HOLD]");
        std::process::exit(2);
    };
    let connections: usize = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(1000);
    let hold: u64 = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(5);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut head = format!(
            "POST /api/check HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Content-Length: 1048000\r\n\r\n"
        )
        .into_bytes();
        head.extend(std::iter::repeat_n(b' ', 1_040_000));
        let head = std::sync::Arc::new(head);
        let tasks: Vec<_> = (0..connections)
            .map(|_| {
                let (addr, head) = (addr.clone(), head.clone());
                tokio::spawn(async move {
                    let mut socket = tokio::net::TcpStream::connect(&addr).await.ok()?;
                    // Bounded: a server that stops reading leaves the rest in our buffer.
                    let _ = tokio::time::timeout(Duration::from_secs(20), socket.write_all(&head))
                        .await;
                    Some(socket)
                })
            })
            .collect();
        let mut open = Vec::new();
        for task in tasks {
            if let Ok(Some(socket)) = task.await {
                open.push(socket);
            }
        }
        println!("sent: {} connections open", open.len());
        let _ = std::io::stdout().flush();
        tokio::time::sleep(Duration::from_secs(hold)).await;
        drop(open);
        println!("closed");
    });
}
