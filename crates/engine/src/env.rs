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

    /// The playground starts over (a scenario or pipeline is loaded).
    /// [`SeededIds`] goes back to its first id, so a session's ids depend only
    /// on the requests since it last started over (what the page saves and
    /// gives a new worker after a reload). The others ignore it. Returns
    /// where the generator was, for [`IdGenerator::resume`].
    fn start_over(&self) -> u64 {
        0
    }

    /// Back to where [`IdGenerator::start_over`] found it (a load that
    /// failed keeps the previous session, and its ids go on from there).
    fn resume(&self, _at: u64) {}

    /// How many ids it has given since it last started over (saved with
    /// the session, so a session opened again goes on from there; see
    /// [`IdGenerator::resume`]). 0 for generators without a position.
    fn position(&self) -> u64 {
        0
    }
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

/// Random UUID v4s from the OS's random source (`crypto.getRandomValues`
/// in a browser), drawn 4 KiB at a time: one call per 256 ids instead of
/// one per id (a system call each, natively: 12% of ingesting the 336,776
/// flights, issue 12). If the source fails, each id comes from
/// `Uuid::new_v4` as before.
#[derive(Debug, Default)]
pub struct RandomIds {
    pool: std::sync::Mutex<RandomPool>,
}

#[derive(Debug, Default)]
struct RandomPool {
    bytes: Vec<u8>,
    used: usize,
}

impl RandomPool {
    const SIZE: usize = 4096;

    /// The next 16 random bytes, refilling the pool when it is used up.
    fn take16(&mut self) -> Option<[u8; 16]> {
        if self.used + 16 > self.bytes.len() {
            self.bytes.resize(Self::SIZE, 0);
            getrandom_03::fill(&mut self.bytes).ok()?;
            self.used = 0;
        }
        let mut out = [0u8; 16];
        out.copy_from_slice(&self.bytes[self.used..self.used + 16]);
        self.used += 16;
        Some(out)
    }
}

impl IdGenerator for RandomIds {
    fn new_id(&self) -> uuid::Uuid {
        match self.pool.lock().ok().and_then(|mut p| p.take16()) {
            Some(bytes) => uuid::Builder::from_random_bytes(bytes).into_uuid(),
            None => uuid::Uuid::new_v4(),
        }
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

    fn resume(&self, at: u64) {
        self.next.store(at, Ordering::SeqCst);
    }

    fn position(&self) -> u64 {
        self.next.load(Ordering::SeqCst)
    }
}

/// A clock set from outside before each request (the Web Worker sets it to
/// the time the page made the request): each reading is the time set plus
/// 1 µs per earlier reading since, so readings stay ordered and the same
/// requests with the same times give the same timestamps. Before the first
/// `set`, it reads the system clock.
#[derive(Debug, Default)]
pub struct RequestClock {
    next: std::sync::atomic::AtomicI64,
}

impl RequestClock {
    /// The following readings start at `micros` (µs since the Unix epoch, UTC).
    pub fn set(&self, micros: i64) {
        self.next.store(micros, Ordering::SeqCst);
    }
}

impl Clock for RequestClock {
    fn now_micros(&self) -> i64 {
        let t = self.next.fetch_add(1, Ordering::SeqCst);
        if t == 0 {
            self.next.store(0, Ordering::SeqCst);
            SystemClock.now_micros()
        } else {
            t
        }
    }
}

/// UUIDs (v4 layout) drawn from a session seed and a counter: the same seed
/// and the same requests give the same ids. The Web Worker uses it so that a
/// new worker given the session's requests again (after **Cancel**) names
/// every batch and event as before.
#[derive(Debug)]
pub struct SeededIds {
    seed: u128,
    next: AtomicU64,
}

impl SeededIds {
    /// Ids of the session `seed` (random bits chosen once per session).
    pub fn new(seed: u128) -> Self {
        Self {
            seed,
            next: AtomicU64::new(0),
        }
    }
}

impl IdGenerator for SeededIds {
    fn new_id(&self) -> uuid::Uuid {
        let n = self.next.fetch_add(1, Ordering::SeqCst) as u128 + 1;
        // Spread the counter over all bits (an odd multiplier is a bijection
        // mod 2^128), so consecutive ids do not share their leading digits.
        let mixed = self
            .seed
            .wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835));
        uuid::Builder::from_random_bytes(mixed.to_be_bytes()).into_uuid()
    }

    fn start_over(&self) -> u64 {
        self.next.swap(0, Ordering::SeqCst)
    }

    fn resume(&self, at: u64) {
        self.next.store(at, Ordering::SeqCst);
    }

    fn position(&self) -> u64 {
        self.next.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_ids_are_version_4_and_all_different_across_pool_refills() {
        let ids = RandomIds::default();
        // 1,000 ids: the 4 KiB pool is drawn four times.
        let all: std::collections::HashSet<uuid::Uuid> = (0..1000).map(|_| ids.new_id()).collect();
        assert_eq!(all.len(), 1000);
        assert!(all
            .iter()
            .all(|u| u.get_version_num() == 4 && u.get_variant() == uuid::Variant::RFC4122));
    }

    #[test]
    fn seeded_ids_repeat_for_the_same_seed_and_differ_between_seeds() {
        let (a, b, c) = (SeededIds::new(7), SeededIds::new(7), SeededIds::new(8));
        let first: Vec<_> = (0..3).map(|_| a.new_id()).collect();
        let again: Vec<_> = (0..3).map(|_| b.new_id()).collect();
        assert_eq!(first, again);
        assert_ne!(first[0], c.new_id());
        assert_ne!(first[0], first[1]);
        assert_eq!(first[0].get_version_num(), 4);
        assert_eq!(first[0].get_variant(), uuid::Variant::RFC4122);
        let at = a.start_over();
        assert_eq!(a.new_id(), first[0], "after start_over the first id again");
        a.resume(at);
        assert_ne!(a.new_id(), first[1], "resumed after the third id");
    }

    #[test]
    fn a_request_clock_reads_the_time_set_then_one_microsecond_more_each_time() {
        let c = RequestClock::default();
        assert!(
            c.now_micros() > 1_600_000_000_000_000,
            "the system clock before a set"
        );
        c.set(1_700_000_000_000_000);
        assert_eq!(c.now_micros(), 1_700_000_000_000_000);
        assert_eq!(c.now_micros(), 1_700_000_000_000_001);
        c.set(1_700_000_005_000_000);
        assert_eq!(c.now_micros(), 1_700_000_005_000_000);
    }

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
