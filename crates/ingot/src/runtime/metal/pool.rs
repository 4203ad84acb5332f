//! A caching allocator for Metal buffers.
//!
//! `newBufferWithLength:options:` maps fresh pages and costs far more than a free-list lookup, so
//! freed buffers go to a free list keyed by size class and are handed out again. Reuse is safe
//! because every GPU use of a buffer is ordered on the device's single command queue, and every
//! host access (`copy_from_host`, `copy_to_host`, `host_ptr` after a synchronisation) waits for the
//! queued work first (see the module documentation of `runtime::metal`).

use std::collections::HashMap;
use std::sync::Mutex;

use objc2::rc::Retained;
use objc2::runtime::ProtocolObject;
use objc2_metal::MTLBuffer;

/// A retained `MTLBuffer` that may move between threads.
pub(crate) struct PooledBuffer(pub(crate) Retained<ProtocolObject<dyn MTLBuffer>>);

// SAFETY: Metal resources are thread-safe to reference and release from any thread (Apple's
// "Metal Programming Guide: Transient and Non-transient Objects"); the pool only stores them and
// never touches their contents.
unsafe impl Send for PooledBuffer {}

/// The size class of a request: 4 KiB granules up to 64 KiB, then four classes per power of two
/// (at most 25% rounding waste). Metal allocates whole pages anyway.
pub fn size_class(nbytes: usize) -> usize {
    let n = nbytes.max(1);
    if n <= 64 * 1024 {
        return n.div_ceil(4096) * 4096;
    }
    let k = usize::BITS - 1 - n.leading_zeros();
    let step = 1usize << (k - 2);
    n.div_ceil(step) * step
}

#[derive(Default)]
struct State {
    free: HashMap<usize, Vec<PooledBuffer>>,
    pooled: usize,
    used: usize,
    peak: usize,
    live: usize,
}

/// The free lists and counters of one device.
#[derive(Default)]
pub(crate) struct Pool {
    state: Mutex<State>,
}

/// Bytes counted by the pool.
pub(crate) struct PoolStats {
    pub used: usize,
    pub pooled: usize,
    pub peak: usize,
    pub live: usize,
}

impl Pool {
    /// A cached buffer of size class `class`, if one is free.
    pub fn take(&self, class: usize) -> Option<PooledBuffer> {
        let mut s = self.lock();
        let b = s.free.get_mut(&class).and_then(|v| v.pop())?;
        s.pooled -= class;
        s.used += class;
        s.live += 1;
        s.peak = s.peak.max(s.used);
        Some(b)
    }

    /// Counts a freshly created buffer (pooled or wrapped host memory) of `nbytes`.
    pub fn note_new(&self, nbytes: usize) {
        let mut s = self.lock();
        s.used += nbytes;
        s.live += 1;
        s.peak = s.peak.max(s.used);
    }

    /// Uncounts a buffer that is not returned to the pool (wrapped host memory).
    pub fn note_gone(&self, nbytes: usize) {
        let mut s = self.lock();
        s.used = s.used.saturating_sub(nbytes);
        s.live = s.live.saturating_sub(1);
    }

    /// Returns a buffer to its free list.
    pub fn release(&self, buffer: PooledBuffer, class: usize) {
        let mut s = self.lock();
        s.used = s.used.saturating_sub(class);
        s.live = s.live.saturating_sub(1);
        s.pooled += class;
        s.free.entry(class).or_default().push(buffer);
    }

    /// Drops every cached buffer (Metal frees the memory once no command buffer uses it).
    pub fn release_cached(&self) {
        let blocks: Vec<(usize, Vec<PooledBuffer>)> = {
            let mut s = self.lock();
            s.pooled = 0;
            s.free.drain().collect()
        };
        drop(blocks);
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

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::size_class;

    #[test]
    fn classes_are_page_multiples_with_bounded_waste() {
        assert_eq!(size_class(0), 4096);
        assert_eq!(size_class(4097), 8192);
        assert_eq!(size_class(65536), 65536);
        for n in [70_000usize, 1 << 20, (1 << 20) + 1, 123_456_789] {
            let c = size_class(n);
            assert!(c >= n && (c - n) * 4 <= n, "{n} -> {c}");
            assert_eq!(size_class(c), c);
            assert_eq!(c % 4096, 0);
        }
    }
}
