//! Who gets a connection when connections are scarce. One client address holds at most
//! [`Limits::per_address`] of them, so a single host opening connections by the thousand takes its
//! share and no more; and when all [`Limits::total`] are taken, the connection that has waited
//! longest without a request in flight (one that never sent its headers, or an idle keep-alive)
//! is closed to make room, so a flood of half-open connections from many hosts cannot lock a new
//! client out either.
//!
//! Behind a trusted proxy every connection is the proxy's: the proxy's own connections are not
//! capped per address, but each request it forwards holds a share of its client's allowance while
//! it runs ([`Admission::hold`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// The connection limits of the edge.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections open at once.
    pub total: usize,
    /// Connections (or proxied requests) one client address holds at once.
    pub per_address: usize,
}

/// Why a connection or a proxied request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Its address already holds its share.
    AddressFull,
    /// Every connection is busy with a request: none could be closed to make room.
    Full,
}

impl Refusal {
    /// The label of the refusal in metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AddressFull => "per_address",
            Self::Full => "total",
        }
    }
}

/// The book of open connections; shared by the accept loop and every connection's task.
#[derive(Debug)]
pub struct Admission {
    limits: Limits,
    book: Mutex<Book>,
}

#[derive(Debug, Default)]
struct Book {
    next_id: u64,
    open: HashMap<u64, Connection>,
    /// Shares held per address key: direct connections and proxied requests in flight.
    held: HashMap<String, usize>,
}

#[derive(Debug)]
struct Connection {
    key: Option<String>,
    in_flight: usize,
    /// Since when it has had no request in flight (its accept, or its last answer).
    idle_since: Instant,
    close: CancellationToken,
}

impl Book {
    fn take_share(&mut self, key: &str, limit: usize) -> Result<(), Refusal> {
        let held = self.held.entry(key.to_owned()).or_default();
        if *held >= limit {
            return Err(Refusal::AddressFull);
        }
        *held += 1;
        Ok(())
    }

    fn give_share(&mut self, key: &str) {
        if let Some(held) = self.held.get_mut(key) {
            *held = held.saturating_sub(1);
            if *held == 0 {
                self.held.remove(key);
            }
        }
    }

    fn forget(&mut self, id: u64) -> Option<Connection> {
        let connection = self.open.remove(&id)?;
        if let Some(key) = &connection.key {
            self.give_share(key);
        }
        Some(connection)
    }

    /// Closes the connection idle for the longest time, among those of `key` when given; false
    /// when every one is at work.
    fn evict_oldest_idle(&mut self, key: Option<&str>) -> bool {
        let oldest = self
            .open
            .iter()
            .filter(|(_, c)| c.in_flight == 0 && key.is_none_or(|key| c.key.as_deref() == Some(key)))
            .min_by_key(|(id, c)| (c.idle_since, **id))
            .map(|(id, _)| *id);
        match oldest.and_then(|id| self.forget(id)) {
            Some(evicted) => {
                evicted.close.cancel();
                true
            }
            None => false,
        }
    }
}

impl Admission {
    pub fn new(limits: Limits) -> Arc<Self> {
        Arc::new(Self {
            limits,
            book: Mutex::new(Book::default()),
        })
    }

    fn book(&self) -> MutexGuard<'_, Book> {
        // The book stays consistent whatever panicked while holding it: every change is one step.
        self.book.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Admits a connection from `key` (`None`: a trusted proxy's, not capped per address).
    pub fn admit(self: &Arc<Self>, key: Option<String>) -> Result<Ticket, Refusal> {
        let mut book = self.book();
        if let Some(key) = &key {
            // An address at its share makes room among its own idle connections (a client's
            // pool of kept-alive ones), never among others'.
            if book.take_share(key, self.limits.per_address).is_err() {
                if !book.evict_oldest_idle(Some(key)) {
                    return Err(Refusal::AddressFull);
                }
                book.take_share(key, self.limits.per_address)?;
            }
        }
        if book.open.len() >= self.limits.total && !book.evict_oldest_idle(None) {
            if let Some(key) = &key {
                book.give_share(key);
            }
            return Err(Refusal::Full);
        }
        let id = book.next_id;
        book.next_id += 1;
        let close = CancellationToken::new();
        book.open.insert(
            id,
            Connection {
                key,
                in_flight: 0,
                idle_since: Instant::now(),
                close: close.clone(),
            },
        );
        Ok(Ticket {
            admission: self.clone(),
            id,
            close,
        })
    }

    /// A share of `key`'s allowance for one request forwarded by a trusted proxy, while it runs.
    pub fn hold(self: &Arc<Self>, key: String) -> Result<Hold, Refusal> {
        self.book().take_share(&key, self.limits.per_address)?;
        Ok(Hold {
            admission: self.clone(),
            key,
        })
    }

    /// Connections open now (tests, metrics).
    pub fn open(&self) -> usize {
        self.book().open.len()
    }
}

/// An admitted connection; dropping it gives its place back.
#[derive(Debug)]
pub struct Ticket {
    admission: Arc<Admission>,
    id: u64,
    close: CancellationToken,
}

impl Ticket {
    /// Cancelled when the connection is evicted to make room.
    pub fn evicted(&self) -> CancellationToken {
        self.close.clone()
    }

    /// Counts the connection's requests in flight: a connection at work is never evicted.
    pub fn requests(&self) -> Requests {
        Requests {
            admission: self.admission.clone(),
            id: self.id,
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.admission.book().forget(self.id);
    }
}

/// Marks requests of one connection as in flight.
#[derive(Debug, Clone)]
pub struct Requests {
    admission: Arc<Admission>,
    id: u64,
}

impl Requests {
    /// One request in flight until the guard is dropped (with the answer's body).
    pub fn start(&self) -> InFlight {
        if let Some(connection) = self.admission.book().open.get_mut(&self.id) {
            connection.in_flight += 1;
        }
        InFlight(self.clone())
    }
}

/// A request in flight on its connection.
#[derive(Debug)]
pub struct InFlight(Requests);

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Some(connection) = self.0.admission.book().open.get_mut(&self.0.id) {
            connection.in_flight = connection.in_flight.saturating_sub(1);
            if connection.in_flight == 0 {
                connection.idle_since = Instant::now();
            }
        }
    }
}

/// A proxied request's share of its client's allowance.
#[derive(Debug)]
pub struct Hold {
    admission: Arc<Admission>,
    key: String,
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.admission.book().give_share(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admission(total: usize, per_address: usize) -> Arc<Admission> {
        Admission::new(Limits { total, per_address })
    }

    fn key(s: &str) -> Option<String> {
        Some(s.to_owned())
    }

    #[test]
    fn one_address_holds_its_share_and_no_more() {
        let edge = admission(10, 2);
        let a = edge.admit(key("192.0.2.1")).expect("first");
        let _a_works = a.requests().start();
        let b = edge.admit(key("192.0.2.1")).expect("second");
        let _b_works = b.requests().start();
        assert_eq!(edge.admit(key("192.0.2.1")).unwrap_err(), Refusal::AddressFull);
        drop(_a_works);
        // Another address is not concerned.
        let _c = edge.admit(key("192.0.2.2")).expect("another address");
        // A closed connection gives its share back.
        drop(a);
        let _d = edge.admit(key("192.0.2.1")).expect("share given back");
        assert_eq!(edge.open(), 3);
    }

    #[test]
    fn an_address_at_its_share_makes_room_among_its_own_idle_connections() {
        let edge = admission(10, 2);
        let other = edge.admit(key("192.0.2.9")).expect("another address, idle and older");
        let pooled = edge.admit(key("192.0.2.1")).expect("1");
        let working = edge.admit(key("192.0.2.1")).expect("2");
        let _works = working.requests().start();
        let _third = edge.admit(key("192.0.2.1")).expect("its idle one made room");
        assert!(pooled.evicted().is_cancelled());
        assert!(!working.evicted().is_cancelled());
        assert!(!other.evicted().is_cancelled(), "never another address's connection");
    }

    #[test]
    fn when_full_the_oldest_idle_connection_makes_room() {
        let edge = admission(3, 10);
        let oldest = edge.admit(key("192.0.2.1")).expect("1");
        let busy = edge.admit(key("192.0.2.2")).expect("2");
        let _working = busy.requests().start();
        let younger = edge.admit(key("192.0.2.3")).expect("3");
        let _newcomer = edge.admit(key("192.0.2.4")).expect("room made");
        assert!(oldest.evicted().is_cancelled(), "the oldest idle connection is closed");
        assert!(!busy.evicted().is_cancelled(), "a connection at work is never closed");
        assert!(!younger.evicted().is_cancelled());
        assert_eq!(edge.open(), 3);
        // The evicted connection's share went with it; its task ending later changes nothing.
        drop(oldest);
        assert_eq!(edge.open(), 3);
    }

    #[test]
    fn a_connection_that_answered_is_idle_again_from_its_answer() {
        let edge = admission(2, 10);
        let first = edge.admit(key("192.0.2.1")).expect("1");
        let second = edge.admit(key("192.0.2.2")).expect("2");
        // The first answered a request after the second was accepted: the second is now the oldest idle.
        drop(first.requests().start());
        let _third = edge.admit(key("192.0.2.3")).expect("room made");
        assert!(second.evicted().is_cancelled());
        assert!(!first.evicted().is_cancelled());
    }

    #[test]
    fn when_every_connection_is_at_work_a_new_one_is_refused() {
        let edge = admission(1, 10);
        let busy = edge.admit(key("192.0.2.1")).expect("1");
        let _working = busy.requests().start();
        assert_eq!(edge.admit(key("192.0.2.2")).unwrap_err(), Refusal::Full);
        // The refused connection's share was not kept.
        drop(_working);
        drop(busy);
        let edge2 = admission(1, 1);
        let busy = edge2.admit(key("192.0.2.1")).expect("1");
        let _working = busy.requests().start();
        assert_eq!(edge2.admit(key("192.0.2.2")).unwrap_err(), Refusal::Full);
        drop(_working);
        drop(busy);
        edge2.admit(key("192.0.2.2")).expect("its share was given back on refusal");
    }

    #[test]
    fn proxied_requests_hold_their_clients_share_while_they_run() {
        let edge = admission(10, 2);
        let proxy = edge.admit(None).expect("a proxy's connection is not capped per address");
        let _proxy2 = edge.admit(None).expect("nor its second");
        let _proxy3 = edge.admit(None).expect("nor its third");
        let first = edge.hold("198.51.100.7".to_owned()).expect("1");
        let _second = edge.hold("198.51.100.7".to_owned()).expect("2");
        assert_eq!(edge.hold("198.51.100.7".to_owned()).unwrap_err(), Refusal::AddressFull);
        edge.hold("198.51.100.8".to_owned()).expect("another client behind the proxy");
        drop(first);
        edge.hold("198.51.100.7".to_owned()).expect("given back");
        drop(proxy);
    }
}
