//! State shared by the queue handle and its supervisor: the current link (if any), the topics
//! whose consumers must run on every link, and the inbox. Callers find the live link here, or
//! wait a bounded time for the supervisor to install a new one.

use super::inbox::Inbox;
use super::link::Link;
use super::tag;
use super::AmqpOptions;
use crate::queue::{QueueError, Topic};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Bounds connecting, declaring and starting consumers, so a black-holed broker cannot stall
/// the supervisor forever.
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(10);
/// Bounds the polite close of a connection that may already be half dead.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(1);

pub(super) struct Shared {
    /// Carries the password: never logged.
    url: String,
    pub(super) options: AmqpOptions,
    link: watch::Sender<Option<Arc<Link>>>,
    generation: AtomicU32,
    /// Topics some caller has received from, in first-asked order: restarted on every new link.
    wanted: Mutex<Vec<Topic>>,
    pub(super) inbox: Arc<Inbox>,
    pub(super) closed: CancellationToken,
}

impl Shared {
    pub(super) fn new(url: &str, options: AmqpOptions) -> Shared {
        Shared {
            url: url.to_owned(),
            options,
            link: watch::Sender::new(None),
            generation: AtomicU32::new(0),
            wanted: Mutex::new(Vec::new()),
            inbox: Arc::new(Inbox::default()),
            closed: CancellationToken::new(),
        }
    }

    /// Opens a link of a new generation with the consumers that were running, then installs it.
    pub(super) async fn establish(&self) -> Result<Arc<Link>, QueueError> {
        let previous = self
            .generation
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |g| Some(tag::next_generation(g)))
            .unwrap_or_default();
        let generation = tag::next_generation(previous);
        let link = tokio::time::timeout(ESTABLISH_TIMEOUT, self.open(generation))
            .await
            .map_err(|_| QueueError::Unavailable(format!("connecting took more than {ESTABLISH_TIMEOUT:?}")))??;
        self.link.send_replace(Some(link.clone()));
        Ok(link)
    }

    async fn open(&self, generation: u32) -> Result<Arc<Link>, QueueError> {
        let link = Arc::new(Link::open(&self.url, generation, self.options.delivery_limit).await?);
        for topic in self.wanted() {
            if let Err(e) = link.ensure_consumer(topic, self.options.prefetch_for(topic), &self.inbox).await {
                link.shutdown().await;
                return Err(e);
            }
        }
        Ok(link)
    }

    /// Takes a lost link out of service: nothing buffered from it may be handed out any more.
    pub(super) async fn retire(&self, link: &Arc<Link>) {
        link.mark_lost();
        self.link.send_if_modified(|current| {
            let is_this = current.as_ref().is_some_and(|c| Arc::ptr_eq(c, link));
            if is_this {
                *current = None;
            }
            is_this
        });
        self.inbox.clear();
        let _ = tokio::time::timeout(SHUTDOWN_TIMEOUT, link.shutdown()).await;
    }

    /// Stops everything; the supervisor sees `closed` and ends.
    pub(super) async fn close(&self) {
        self.closed.cancel();
        if let Some(link) = self.link.send_replace(None) {
            let _ = tokio::time::timeout(SHUTDOWN_TIMEOUT, link.shutdown()).await;
        }
        self.inbox.clear();
    }

    /// The link, if it is live.
    pub(super) fn current(&self) -> Option<Arc<Link>> {
        self.link.borrow().as_ref().filter(|link| !link.is_lost()).cloned()
    }

    /// The live link if it is the one of `generation`: a delivery of any other generation came
    /// from a connection that is gone.
    pub(super) fn link_of(&self, generation: u32) -> Option<Arc<Link>> {
        self.current().filter(|link| link.generation == generation)
    }

    /// Waits for a live link until `deadline`.
    pub(super) async fn wait_link(&self, deadline: Instant) -> Result<Arc<Link>, QueueError> {
        let mut changes = self.link.subscribe();
        let live = async {
            changes
                .wait_for(|link| link.as_ref().is_some_and(|l| !l.is_lost()))
                .await
                .map(|link| link.clone())
        };
        tokio::select! {
            biased;
            () = self.closed.cancelled() => Err(QueueError::Closed),
            waited = tokio::time::timeout_at(deadline, live) => match waited {
                Ok(Ok(Some(link))) => Ok(link),
                Ok(Ok(None)) | Ok(Err(_)) => Err(QueueError::Closed),
                Err(_) => Err(QueueError::Unavailable("no connection to the broker in time".into())),
            },
        }
    }

    pub(super) fn subscribe(&self) -> watch::Receiver<Option<Arc<Link>>> {
        self.link.subscribe()
    }

    /// Remembers topics to consume, so that the supervisor restarts their consumers.
    pub(super) fn want(&self, topics: &[Topic]) {
        let mut wanted = self.wanted.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        for topic in topics {
            if !wanted.contains(topic) {
                wanted.push(*topic);
            }
        }
    }

    fn wanted(&self) -> Vec<Topic> {
        self.wanted.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    /// Starts the consumers of `topics` on `link`; a failure retires the link (a reconnection
    /// re-declares a deleted queue, and retries with backoff otherwise).
    pub(super) async fn start_consumers(&self, link: &Link, topics: &[Topic]) {
        for topic in topics {
            if let Err(e) = link.ensure_consumer(*topic, self.options.prefetch_for(*topic), &self.inbox).await {
                tracing::warn!(topic = topic.as_str(), error = %e, "starting a consumer failed; reconnecting");
                link.mark_lost();
                return;
            }
        }
    }
}
