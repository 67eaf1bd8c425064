//! The rules of a batch (`API.md`, "Batches"): its limits, which state accepts documents, which
//! can be submitted, canceled or expired, and what an in-progress batch becomes once every
//! document is settled. The store applies them inside its transactions.

use crate::vocabulary::{BatchStatus, ItemStatus};
use chrono::{DateTime, Utc};

/// Open batches a company may hold at once.
pub const MAX_OPEN_BATCHES: i64 = 3;
/// Documents one batch may hold.
pub const MAX_ITEMS_PER_BATCH: i64 = 200;
/// Documents a company may hold whose images are not purged yet.
pub const MAX_NON_PURGED_DOCUMENTS: i64 = 400;
/// The open window and the completion window (24 h; shorter only in tests).
pub const WINDOW: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Whether documents may be deposited (or the batch submitted): open and within its window.
pub fn accepts_documents(status: BatchStatus, expires_at: DateTime<Utc>, now: DateTime<Utc>) -> bool {
    status == BatchStatus::Open && now < expires_at
}

/// Whether a client may still cancel the batch: not once it reached a final state.
pub fn can_cancel(status: BatchStatus) -> bool {
    matches!(status, BatchStatus::Open | BatchStatus::InProgress)
}

/// Whether the deadline ends the batch now: still running and its window is over.
pub fn is_due(status: BatchStatus, expires_at: DateTime<Utc>, now: DateTime<Utc>) -> bool {
    can_cancel(status) && expires_at <= now
}

/// The documents a closing batch stops, as the state it gives them: a cancel lets documents in
/// flight finish; a deadline does not wait for them, so the 24 h promise holds even if a worker
/// never answers (a late result is then ignored: the first terminal state wins).
pub fn stopped_by(closing: BatchStatus) -> &'static [ItemStatus] {
    if closing == BatchStatus::Expired {
        &[ItemStatus::Uploading, ItemStatus::Pending, ItemStatus::Processing]
    } else {
        &[ItemStatus::Uploading, ItemStatus::Pending]
    }
}

/// What an in-progress batch becomes once every document is settled: `expired` when a worker
/// reported some too late for their deadline, `ended` otherwise.
pub fn settled_status(expired_documents: u32) -> BatchStatus {
    if expired_documents > 0 {
        BatchStatus::Expired
    } else {
        BatchStatus::Ended
    }
}

/// What a document gets when its job comes back to a batch in `status`: `None` means it goes
/// back to the queue (its batch still runs).
pub fn requeued_item_status(status: BatchStatus) -> Option<ItemStatus> {
    match status {
        BatchStatus::Canceled => Some(ItemStatus::Canceled),
        BatchStatus::Expired => Some(ItemStatus::Expired),
        BatchStatus::Open | BatchStatus::InProgress | BatchStatus::Ended => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    #[test]
    fn only_an_open_batch_within_its_window_accepts_documents() {
        let now = Utc::now();
        assert!(accepts_documents(BatchStatus::Open, now + Duration::seconds(1), now));
        assert!(!accepts_documents(BatchStatus::Open, now, now));
        assert!(!accepts_documents(BatchStatus::InProgress, now + Duration::hours(1), now));
    }

    #[test]
    fn final_states_stay_final() {
        for status in BatchStatus::ALL {
            let running = matches!(status, BatchStatus::Open | BatchStatus::InProgress);
            assert_eq!(can_cancel(*status), running, "{status}");
        }
        let now = Utc::now();
        assert!(is_due(BatchStatus::InProgress, now, now));
        assert!(!is_due(BatchStatus::Ended, now - Duration::hours(1), now));
        assert!(!is_due(BatchStatus::Open, now + Duration::hours(1), now));
    }

    #[test]
    fn a_deadline_stops_documents_in_flight_a_cancel_does_not() {
        assert!(stopped_by(BatchStatus::Expired).contains(&ItemStatus::Processing));
        assert!(!stopped_by(BatchStatus::Canceled).contains(&ItemStatus::Processing));
        assert_eq!(settled_status(0), BatchStatus::Ended);
        assert_eq!(settled_status(2), BatchStatus::Expired);
        assert_eq!(requeued_item_status(BatchStatus::Canceled), Some(ItemStatus::Canceled));
        assert_eq!(requeued_item_status(BatchStatus::InProgress), None);
    }
}
