//! A connection's write deadline (issue #31): a client that stops reading fills its
//! socket's send buffer, and every write then waits. [`Deadline`] fails a write (or flush)
//! that has waited longer than `--client-timeout`, so hyper drops the connection and its
//! slot among `--max-connections` is freed, instead of being held as long as the client
//! likes. Reads are not touched (hyper's header-read timeout and the body's own timeout
//! bound those).

use std::future::Future as _;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// `inner` whose writes fail once one has waited `timeout`.
pub struct Deadline<S> {
    inner: S,
    timeout: Duration,
    /// Started when a write first waits; reset by any write that goes through.
    waiting: Option<Pin<Box<Sleep>>>,
}

impl<S> Deadline<S> {
    pub fn new(inner: S, timeout: Duration) -> Deadline<S> {
        Deadline {
            inner,
            timeout,
            waiting: None,
        }
    }

    /// What a write that returned `poll` becomes: as it is, unless it has waited too long.
    fn bounded<T>(
        &mut self,
        cx: &mut Context<'_>,
        poll: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        match poll {
            Poll::Ready(result) => {
                self.waiting = None;
                Poll::Ready(result)
            }
            Poll::Pending => {
                let timeout = self.timeout;
                let waiting = self
                    .waiting
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
                match waiting.as_mut().poll(cx) {
                    Poll::Pending => Poll::Pending,
                    Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the client read nothing for the client timeout",
                    ))),
                }
            }
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Deadline<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Deadline<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.bounded(cx, poll)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.bounded(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_flush(cx);
        self.bounded(cx, poll)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.bounded(cx, poll)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    /// A peer that never reads: writes fill both buffers, then the deadline fails the
    /// next one instead of letting it wait for ever.
    #[test]
    fn a_write_to_a_peer_that_never_reads_fails_after_the_timeout() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            let (ours, _theirs) = tokio::io::duplex(1024);
            let mut ours = Deadline::new(ours, Duration::from_millis(50));
            let chunk = [0u8; 512];
            let mut failed = None;
            for _ in 0..100 {
                if let Err(error) = ours.write_all(&chunk).await {
                    failed = Some(error.kind());
                    break;
                }
            }
            assert_eq!(failed, Some(io::ErrorKind::TimedOut));
        });
    }
}
