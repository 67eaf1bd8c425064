//! A request body that fails once its request's time is up. The timeout layer answers a slow
//! client when its time is up, but a request that runs on in a task of its own after its client
//! left (an idempotent one, so its answer is remembered) would go on reading a trickled body, and
//! hold its connection, for as long as the client keeps trickling: this ends that read too.

use axum::body::{Body, Bytes};
use http_body::{Body as HttpBody, Frame, SizeHint};
use std::future::Future as _;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

/// The body's deadline passed before it was read to the end.
#[derive(Debug, thiserror::Error)]
#[error("the request's body was not received within {} s", .0.as_secs())]
pub struct DeadlinePassed(Duration);

/// `inner`, failing with [`DeadlinePassed`] once `within` has passed from its creation.
pub struct Deadline {
    inner: Body,
    within: Duration,
    timer: Pin<Box<Sleep>>,
}

impl Deadline {
    pub fn new(inner: Body, within: Duration) -> Self {
        Self {
            inner,
            within,
            timer: Box::pin(tokio::time::sleep_until(Instant::now() + within)),
        }
    }
}

impl HttpBody for Deadline {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        match this.timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(axum::Error::new(DeadlinePassed(this.within))))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt as _;

    /// One byte, then nothing more, ever: a client trickling its body.
    struct Trickle(bool);

    impl HttpBody for Trickle {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            let this = self.get_mut();
            if std::mem::replace(&mut this.0, true) {
                Poll::Pending
            } else {
                Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"a")))))
            }
        }
    }

    #[tokio::test]
    async fn a_body_still_arriving_at_its_deadline_fails() {
        let mut body = Deadline::new(Body::new(Trickle(false)), Duration::from_millis(50));
        let first = body.frame().await.expect("a frame").expect("before the deadline");
        assert_eq!(first.into_data().ok().as_deref(), Some(&b"a"[..]));
        let started = Instant::now();
        let late = body.frame().await.expect("an end");
        assert!(late.is_err(), "the deadline ends the read");
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    }

    #[tokio::test]
    async fn a_whole_body_is_read_as_is() {
        let body = Deadline::new(Body::from("hello"), Duration::from_secs(5));
        let bytes = body.collect().await.expect("read").to_bytes();
        assert_eq!(&bytes[..], b"hello");
    }
}
