//! A company's share of this worker's real-time slots, for queues that hand the real-time lane
//! out first in, first out (RabbitMQ): without it, a company that starts a hundred journeys at
//! once would make the next company's customer wait for all of them. The SQLite queue takes
//! companies in turn by itself (`Queue::shares_fairly`), and this share is then not used.
//!
//! A real-time job whose company already has its share in flight here moves to the overflow lane
//! (`Topic::JobsRealtimeOverflow`), which workers serve only when the real-time lane is empty: a
//! job of another company arriving at any time goes ahead of the burst, a company alone still
//! gets every slot (through the overflow lane, whatever its share), and no job moves twice.

use domain::ids::CompanyId;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

pub(crate) struct RealtimeShare {
    cap: usize,
    in_flight: Mutex<HashMap<CompanyId, usize>>,
}

/// A company's place in the share, given back when dropped.
pub(crate) struct Slot<'a> {
    share: &'a RealtimeShare,
    company: CompanyId,
}

impl RealtimeShare {
    /// Half of `concurrency` slots per company (at least one), so that another company always
    /// finds a slot free here. With a single slot nothing is ever over the share: fairness then
    /// comes from running more workers.
    pub(crate) fn for_concurrency(concurrency: usize) -> Self {
        Self {
            cap: (concurrency / 2).max(1),
            in_flight: Mutex::new(HashMap::new()),
        }
    }

    /// A slot for a job of `company`, unless the company has its share in flight already.
    pub(crate) fn try_take(&self, company: &CompanyId) -> Option<Slot<'_>> {
        let mut in_flight = self.lock();
        let count = in_flight.entry(company.clone()).or_insert(0);
        if *count >= self.cap {
            return None;
        }
        *count += 1;
        Some(Slot {
            share: self,
            company: company.clone(),
        })
    }

    /// A slot taken whatever the share (a job from the overflow lane).
    pub(crate) fn take(&self, company: &CompanyId) -> Slot<'_> {
        *self.lock().entry(company.clone()).or_insert(0) += 1;
        Slot {
            share: self,
            company: company.clone(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<CompanyId, usize>> {
        // Counts change whole under the lock: a panic elsewhere cannot leave one half-done.
        self.in_flight.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    #[cfg(test)]
    fn tracked(&self) -> usize {
        self.lock().len()
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut in_flight = self.share.lock();
        if let Some(count) = in_flight.get_mut(&self.company) {
            *count = count.saturating_sub(1);
            // Only companies with jobs in flight are kept.
            if *count == 0 {
                in_flight.remove(&self.company);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    #[test]
    fn a_company_holds_half_the_slots_and_gives_them_back() {
        let share = RealtimeShare::for_concurrency(4);
        let (a, b) = (CompanyId::generate(Utc::now()), CompanyId::generate(Utc::now()));
        let first = share.try_take(&a);
        let second = share.try_take(&a);
        assert!(first.is_some() && second.is_some());
        assert!(share.try_take(&a).is_none(), "two of four slots at most");
        let b_slot = share.try_take(&b);
        assert!(b_slot.is_some());
        let forced = share.take(&a);
        assert!(share.try_take(&a).is_none());
        drop((first, second, forced, b_slot));
        assert_eq!(share.tracked(), 0, "idle companies are forgotten");
        assert!(share.try_take(&a).is_some());
        assert_eq!(RealtimeShare::for_concurrency(1).cap, 1);
        assert_eq!(RealtimeShare::for_concurrency(3).cap, 1);
    }
}
