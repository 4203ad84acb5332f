//! The caching allocator every backend uses: freed blocks go to free lists keyed by size class
//! and are handed out again without asking the system.
//!
//! Why: `cuMemAlloc`/`cuMemFree` synchronise the device and cost tens of microseconds; Metal's
//! `newBufferWithLength:` maps fresh pages; a fresh multi-megabyte host allocation comes from
//! `mmap` and every page faults on first touch. A backend says how to make and free a raw block
//! ([`BlockSource`]) and which blocks to keep ([`PoolPolicy`]); the free lists, the counters and
//! the retry after an out-of-memory failure are here, once.
//!
//! Reuse is safe on every backend because device work is ordered on one queue per device (a
//! block freed while queued work still reads it is reused only by work queued after it) and host
//! accesses wait for queued work first.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use crate::error::{Error, Result};

/// How a backend makes and frees the raw blocks the pool hands out.
pub trait BlockSource: Send + Sync {
    /// A raw block (a device pointer, a retained buffer object, a host pointer).
    type Block: Send;

    /// A fresh block of exactly `bytes`. Running out of memory is [`Error::OutOfMemory`]; the
    /// pool then frees its cached blocks and asks once more.
    fn create(&self, bytes: usize) -> Result<Self::Block>;

    /// Gives a block of `bytes` back to the system.
    fn destroy(&self, block: Self::Block, bytes: usize) -> Result<()>;
}

/// The size classes of a pool: multiples of `granule` up to `linear_until`, then four classes
/// per power of two, so rounding wastes at most 25% and a freed block serves any later request
/// of the same class.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SizeClasses {
    /// The step of the small classes (a power of two).
    pub granule: usize,
    /// The largest request served by granule multiples.
    pub linear_until: usize,
}

impl SizeClasses {
    /// The class (the bytes really allocated) of a request for `nbytes`.
    ///
    /// ```
    /// use ingot::runtime::pool::SizeClasses;
    /// let c = SizeClasses { granule: 512, linear_until: 4096 };
    /// assert_eq!(c.class(1), 512);
    /// assert_eq!(c.class(4097), 5120);
    /// ```
    pub fn class(&self, nbytes: usize) -> usize {
        let n = nbytes.max(1);
        if n <= self.linear_until {
            return n.div_ceil(self.granule) * self.granule;
        }
        let k = usize::BITS - 1 - n.leading_zeros();
        let step = 1usize << (k - 2);
        n.div_ceil(step) * step
    }
}

/// Which blocks a pool keeps.
#[derive(Copy, Clone, Debug)]
pub struct PoolPolicy {
    /// The size classes.
    pub classes: SizeClasses,
    /// Requests smaller than this are allocated at their exact size and freed at once (0: every
    /// request is rounded to its class and cached).
    pub cache_min: usize,
    /// The most bytes the free lists hold; a block freed beyond it goes back to the system.
    pub cache_max: usize,
    /// The largest block the backend can make: a class above it is clamped to the request
    /// (Metal's `maxBufferLength`; `usize::MAX` elsewhere).
    pub max_block: usize,
}

struct State<B> {
    free: HashMap<usize, Vec<B>>,
    pooled: usize,
    used: usize,
    peak: usize,
    live: usize,
}

/// Byte counters of a pool.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Bytes of live blocks (their classes) and of counted foreign memory.
    pub used: usize,
    /// Bytes in the free lists.
    pub pooled: usize,
    /// The highest `used` so far.
    pub peak: usize,
    /// Live blocks.
    pub live: usize,
}

/// A caching allocator over one backend's [`BlockSource`].
pub struct Pool<S: BlockSource> {
    source: S,
    policy: PoolPolicy,
    state: Mutex<State<S::Block>>,
}

impl<S: BlockSource> Pool<S> {
    /// An empty pool.
    pub fn new(source: S, policy: PoolPolicy) -> Pool<S> {
        Pool {
            source,
            policy,
            state: Mutex::new(State {
                free: HashMap::new(),
                pooled: 0,
                used: 0,
                peak: 0,
                live: 0,
            }),
        }
    }

    /// The backend's block source.
    pub fn source(&self) -> &S {
        &self.source
    }

    /// A block for a request of `nbytes` and its size (the size class, or `nbytes` for requests
    /// under [`PoolPolicy::cache_min`]); give both back to [`Pool::release`].
    pub fn allocate(&self, nbytes: usize) -> Result<(S::Block, usize)> {
        let size = if nbytes < self.policy.cache_min {
            nbytes
        } else {
            let class = self.policy.classes.class(nbytes);
            class.min(self.policy.max_block.max(nbytes))
        };
        if nbytes >= self.policy.cache_min {
            let mut s = self.lock();
            if let Some(b) = s.free.get_mut(&size).and_then(|v| v.pop()) {
                s.pooled -= size;
                Self::count_new(&mut s, size);
                return Ok((b, size));
            }
        }
        let block = match self.source.create(size) {
            Ok(b) => b,
            Err(Error::OutOfMemory { .. }) => {
                // Give the cached blocks back to the system and try once more.
                self.release_cached()?;
                self.source.create(size).map_err(|e| match e {
                    Error::OutOfMemory { device, .. } => Error::OutOfMemory {
                        bytes: nbytes,
                        device,
                    },
                    other => other,
                })?
            }
            Err(e) => return Err(e),
        };
        Self::count_new(&mut self.lock(), size);
        Ok((block, size))
    }

    /// Returns a block from [`Pool::allocate`] (with the size it gave) to the free lists, or to
    /// the system when it is not cached.
    pub fn release(&self, block: S::Block, size: usize) {
        let mut s = self.lock();
        s.used = s.used.saturating_sub(size);
        s.live = s.live.saturating_sub(1);
        let cache =
            size >= self.policy.cache_min && size > 0 && s.pooled + size <= self.policy.cache_max;
        if cache {
            s.pooled += size;
            s.free.entry(size).or_default().push(block);
            return;
        }
        drop(s);
        // A failure to free cannot be reported from a drop; the memory is lost, not corrupted.
        let _ = self.source.destroy(block, size);
    }

    /// Counts memory the pool did not allocate (a wrapped host array) as used.
    pub fn note_foreign(&self, nbytes: usize) {
        Self::count_new(&mut self.lock(), nbytes);
    }

    /// Uncounts memory noted with [`Pool::note_foreign`].
    pub fn forget_foreign(&self, nbytes: usize) {
        let mut s = self.lock();
        s.used = s.used.saturating_sub(nbytes);
        s.live = s.live.saturating_sub(1);
    }

    /// Gives every cached block back to the system; the first failure is returned after all
    /// blocks were tried.
    pub fn release_cached(&self) -> Result<()> {
        let blocks: Vec<(usize, Vec<S::Block>)> = {
            let mut s = self.lock();
            s.pooled = 0;
            s.free.drain().collect()
        };
        let mut first = Ok(());
        for (size, list) in blocks {
            for b in list {
                if let Err(e) = self.source.destroy(b, size) {
                    if first.is_ok() {
                        first = Err(e);
                    }
                }
            }
        }
        first
    }

    /// Current counters.
    pub fn stats(&self) -> PoolStats {
        let s = self.lock();
        PoolStats {
            used: s.used,
            pooled: s.pooled,
            peak: s.peak,
            live: s.live,
        }
    }

    fn count_new(s: &mut State<S::Block>, size: usize) {
        s.used += size;
        s.live += 1;
        s.peak = s.peak.max(s.used);
    }

    fn lock(&self) -> MutexGuard<'_, State<S::Block>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl<S: BlockSource> Drop for Pool<S> {
    fn drop(&mut self) {
        let _ = self.release_cached();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A source that hands out numbered blocks and fails once `limit` bytes are live.
    struct Counting {
        next: AtomicUsize,
        live_bytes: AtomicUsize,
        limit: usize,
        destroyed: AtomicUsize,
    }

    impl BlockSource for Counting {
        type Block = usize;
        fn create(&self, bytes: usize) -> Result<usize> {
            if self.live_bytes.load(Ordering::SeqCst) + bytes > self.limit {
                return Err(Error::OutOfMemory {
                    bytes,
                    device: "test".into(),
                });
            }
            self.live_bytes.fetch_add(bytes, Ordering::SeqCst);
            Ok(self.next.fetch_add(1, Ordering::SeqCst))
        }
        fn destroy(&self, _: usize, bytes: usize) -> Result<()> {
            self.live_bytes.fetch_sub(bytes, Ordering::SeqCst);
            self.destroyed.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
    }

    fn pool(limit: usize, cache_min: usize, cache_max: usize) -> Pool<Counting> {
        Pool::new(
            Counting {
                next: AtomicUsize::new(7),
                live_bytes: AtomicUsize::new(0),
                limit,
                destroyed: AtomicUsize::new(0),
            },
            PoolPolicy {
                classes: SizeClasses {
                    granule: 512,
                    linear_until: 4096,
                },
                cache_min,
                cache_max,
                max_block: usize::MAX,
            },
        )
    }

    #[test]
    fn classes_round_up_with_bounded_waste() {
        let c = SizeClasses {
            granule: 512,
            linear_until: 4096,
        };
        assert_eq!(c.class(0), 512);
        assert_eq!(c.class(4096), 4096);
        assert_eq!(c.class(4097), 5120);
        for n in [5000usize, 1 << 20, (1 << 20) + 1, 123_456_789] {
            let k = c.class(n);
            assert!(k >= n && (k - n) * 4 <= n, "{n} -> {k}");
            assert_eq!(c.class(k), k);
        }
    }

    #[test]
    fn freed_blocks_of_a_class_are_reused_and_counted() {
        let p = pool(1 << 30, 0, usize::MAX);
        let (a, size) = p.allocate(1000).unwrap();
        assert_eq!(size, 1024);
        assert_eq!(p.stats().used, 1024);
        p.release(a, size);
        assert_eq!(p.stats().pooled, 1024);
        let (b, _) = p.allocate(600).unwrap();
        assert_eq!(b, a, "the cached block of class 1024 is handed out again");
        assert_eq!(p.stats().pooled, 0);
        assert_eq!(p.stats().live, 1);
        assert_eq!(p.stats().peak, 1024);
    }

    #[test]
    fn out_of_memory_frees_the_cache_and_retries_once() {
        let p = pool(8192, 0, usize::MAX);
        let (a, sa) = p.allocate(4096).unwrap();
        p.release(a, sa);
        // 4096 cached + 6144 would pass the limit: the pool must free its cache first.
        let (_b, sb) = p.allocate(6000).unwrap();
        assert_eq!(sb, 6144);
        assert_eq!(p.source().destroyed.load(Ordering::SeqCst), 1);
        match p.allocate(1 << 20) {
            Err(Error::OutOfMemory { bytes, .. }) => assert_eq!(bytes, 1 << 20),
            other => panic!("expected OutOfMemory, got {:?}", other.map(|x| x.1)),
        }
    }

    #[test]
    fn small_blocks_are_exact_and_the_cache_is_bounded() {
        let p = pool(1 << 30, 1 << 20, 3 << 20);
        let (s, size) = p.allocate(100).unwrap();
        assert_eq!(size, 100, "under cache_min: exact size");
        p.release(s, size);
        assert_eq!(p.stats().pooled, 0, "small blocks are not cached");
        let blocks: Vec<_> = (0..3).map(|_| p.allocate(2 << 20).unwrap()).collect();
        for (b, size) in blocks {
            p.release(b, size);
        }
        assert!(
            p.stats().pooled <= 3 << 20,
            "the cache stays under cache_max"
        );
        assert_eq!(p.stats().used, 0);
    }
}
