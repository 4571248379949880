//! The engine's view of its environment: a clock and an id generator. Both are
//! traits so tests can pin them (fixed time, sequential UUIDs) and so the same
//! code runs natively and in a browser, where `std::time::SystemTime::now()`
//! panics (see `shared/notes/datafusion-wasm.md`).

use std::sync::atomic::{AtomicU64, Ordering};

/// Source of the `_ingest_ts` timestamps.
pub trait Clock: Send + Sync {
    /// Microseconds since the Unix epoch, UTC.
    fn now_micros(&self) -> i64;
}

/// Source of `_event_id` and `_batch_id` values.
pub trait IdGenerator: Send + Sync {
    /// A new UUID (version 4 layout).
    fn new_id(&self) -> uuid::Uuid;
}

/// The real clock: `Date.now()` in a browser, the OS clock natively (via `web-time`).
#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_micros(&self) -> i64 {
        web_time::SystemTime::now()
            .duration_since(web_time::UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0)
    }
}

/// Random UUID v4s (`crypto.getRandomValues` in a browser).
#[derive(Debug, Default)]
pub struct RandomIds;

impl IdGenerator for RandomIds {
    fn new_id(&self) -> uuid::Uuid {
        uuid::Uuid::new_v4()
    }
}

/// A clock that starts at a fixed instant and advances one second per reading.
#[derive(Debug)]
pub struct FixedClock {
    next: AtomicU64,
}

impl FixedClock {
    /// Starts at `start_micros` (microseconds since the Unix epoch).
    pub fn new(start_micros: i64) -> Self {
        Self {
            next: AtomicU64::new(start_micros as u64),
        }
    }
}

impl Clock for FixedClock {
    fn now_micros(&self) -> i64 {
        self.next.fetch_add(1_000_000, Ordering::SeqCst) as i64
    }
}

/// Deterministic UUIDs: v4 layout, random bits replaced by a counter
/// (`00000000-0000-4000-8000-000000000001`, `...02`, ...).
#[derive(Debug, Default)]
pub struct SequentialIds {
    next: AtomicU64,
}

impl IdGenerator for SequentialIds {
    fn new_id(&self) -> uuid::Uuid {
        let n = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        uuid::Uuid::from_u128((0x4000u128 << 64) | (0x8000u128 << 48) | n as u128)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_ids_are_v4_shaped_and_ordered() {
        let ids = SequentialIds::default();
        assert_eq!(
            ids.new_id().to_string(),
            "00000000-0000-4000-8000-000000000001"
        );
        assert_eq!(
            ids.new_id().to_string(),
            "00000000-0000-4000-8000-000000000002"
        );
    }

    #[test]
    fn fixed_clock_advances_one_second() {
        let c = FixedClock::new(10);
        assert_eq!(c.now_micros(), 10);
        assert_eq!(c.now_micros(), 1_000_010);
    }
}
