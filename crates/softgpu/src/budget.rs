//! Memory budgets: a cap on the device memory a group of streams holds.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::{Error, Result};

struct Inner {
    limit: AtomicU64,
    used: AtomicU64,
}

/// A byte budget shared by the streams given it (cheap to clone). Buffers
/// and upload staging are charged before they are made and released only
/// when nothing (including queued work) uses them any more, so the budget
/// bounds what is really held, not what was asked for.
#[derive(Clone)]
pub struct MemoryBudget {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for MemoryBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "MemoryBudget({} of {} bytes used)",
            self.used(),
            self.limit()
        )
    }
}

impl MemoryBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> MemoryBudget {
        MemoryBudget::of_bytes(limit as u64)
    }

    /// A budget of `limit` bytes, counted as the internals count.
    pub(crate) fn of_bytes(limit: u64) -> MemoryBudget {
        MemoryBudget {
            inner: Arc::new(Inner {
                limit: AtomicU64::new(limit),
                used: AtomicU64::new(0),
            }),
        }
    }

    /// The limit in bytes.
    pub fn limit(&self) -> usize {
        self.limit_bytes() as usize
    }

    fn limit_bytes(&self) -> u64 {
        self.inner.limit.load(Ordering::Acquire)
    }

    /// Changes the limit; what is charged already stays charged.
    pub(crate) fn set_limit(&self, limit: u64) {
        self.inner.limit.store(limit, Ordering::Release);
    }

    /// Bytes charged now.
    pub fn used(&self) -> usize {
        self.used_bytes() as usize
    }

    pub(crate) fn used_bytes(&self) -> u64 {
        self.inner.used.load(Ordering::Acquire)
    }

    /// Charges `bytes`, or fails without charging when they do not fit.
    pub(crate) fn charge(&self, bytes: u64, what: &str) -> Result<Charge> {
        let limit = self.limit_bytes();
        self.inner
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| {
                u.checked_add(bytes).filter(|&n| n <= limit)
            })
            .map_err(|used| Error::Budget {
                what: what.into(),
                bytes,
                free: limit.saturating_sub(used),
                limit,
            })?;
        Ok(Charge {
            budget: self.clone(),
            bytes,
        })
    }
}

/// Bytes charged to a budget, released when dropped.
pub(crate) struct Charge {
    budget: MemoryBudget,
    bytes: u64,
}

impl Charge {
    /// Whether this is a charge to `budget`.
    pub fn is_to(&self, budget: &MemoryBudget) -> bool {
        Arc::ptr_eq(&self.budget.inner, &budget.inner)
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.budget
            .inner
            .used
            .fetch_sub(self.bytes, Ordering::AcqRel);
    }
}
