//! One edge parser per sender at a time. The gateway's few PDF children are shared by every
//! company and journey: without turns, one sender's burst of slow files took them all and another
//! company's deposit queued behind it. A sender (a company in one mode, a journey session) waits
//! for its own previous file first, so a refused document costs its sender, not others.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::OwnedMutexGuard;

/// Who a PDF's page count is charged to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Sender {
    /// A deposit through the API: the caller's account (a company's test account is its own).
    Account(domain::ids::CompanyId),
    /// An upload of a journey, by its session.
    Journey(domain::ids::VerificationId),
}

/// The turns of every sender that has a file at the edge now; a sender with none has no entry.
#[derive(Default)]
pub struct EdgeTurns {
    turns: Mutex<HashMap<Sender, Arc<tokio::sync::Mutex<()>>>>,
}

/// A sender's turn, held while its file is counted; the next file of the same sender waits.
pub struct Turn<'a> {
    held: Option<OwnedMutexGuard<()>>,
    sender: Sender,
    turns: &'a EdgeTurns,
}

impl EdgeTurns {
    /// Waits at most `wait` for `sender`'s previous file to be done; None if it is not.
    pub async fn take(&self, sender: Sender, wait: Duration) -> Option<Turn<'_>> {
        let lock = {
            let mut turns = self.turns.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            turns.entry(sender.clone()).or_default().clone()
        };
        let mut turn = Turn {
            held: None,
            sender,
            turns: self,
        };
        // On a timeout the turn is dropped unheld, and its entry removed if no one else waits.
        turn.held = Some(tokio::time::timeout(wait, lock.lock_owned()).await.ok()?);
        Some(turn)
    }

    #[cfg(test)]
    fn senders(&self) -> usize {
        self.turns.lock().map(|turns| turns.len()).unwrap_or_default()
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        drop(self.held.take());
        let mut turns = self.turns.turns.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        // Only the map holds the lock once no one holds or waits for it: the sender is gone. A
        // waiter clones the lock under this same map lock, so none can come between.
        if turns.get(&self.sender).is_some_and(|lock| Arc::strong_count(lock) == 1) {
            turns.remove(&self.sender);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::ids::CompanyId;

    #[tokio::test]
    async fn a_sender_waits_for_its_own_turn_not_for_others() {
        let (one, two) = (
            Sender::Account(CompanyId::generate(chrono::Utc::now())),
            Sender::Account(CompanyId::generate(chrono::Utc::now())),
        );
        let turns = EdgeTurns::default();
        let first = turns.take(one.clone(), Duration::from_secs(1)).await.expect("a free turn");
        assert!(turns.take(one.clone(), Duration::from_millis(50)).await.is_none());
        assert!(turns.take(two, Duration::from_millis(50)).await.is_some());
        drop(first);
        let again = turns.take(one, Duration::from_millis(50)).await;
        assert!(again.is_some());
        drop(again);
        assert_eq!(turns.senders(), 0, "a sender with no file keeps no entry");
    }
}
