//! Stable least-significant-digit radix sort of unsigned integers by a range of their bytes,
//! split over rayon threads for large inputs.
//!
//! Each pass histograms the current digit per chunk (in chunk order, so equal digits keep their
//! order: the sort is stable), turns the histograms into each chunk's write offsets, and scatters.
//! A pass whose digit is the same for every element is skipped (one read of the data computes the
//! histograms of every digit up front). Keys with an index packed below them (`key << 32 | i`)
//! sort by the key bytes only and carry the index along.

use rayon::prelude::*;

use super::iter::SendPtr;

/// Unsigned integers sorted by their bytes.
pub(crate) trait Radix: Copy + Send + Sync + Ord + Default + 'static {
    /// Byte `b` (0: least significant) as a bucket number.
    fn byte(self, b: usize) -> usize;
}

macro_rules! radix {
    ($($t:ty),*) => {$(
        impl Radix for $t {
            #[inline(always)]
            fn byte(self, b: usize) -> usize {
                ((self >> (8 * b)) & 0xff) as usize
            }
        }
    )*};
}
radix!(u8, u16, u32, u64, u128);

/// Below this length a comparison sort is faster than radix passes.
const RADIX_MIN: usize = 384;
/// Elements per chunk below which one thread sorts alone.
const PAR_MIN: usize = 1 << 16;

/// Sorts `data` by bytes `lo..hi` of each element (stable; every element distinct or identical
/// when `hi` covers all its bytes). `tmp` is scratch of any length (resized). Uses rayon when
/// `parallel` and the input is large.
pub(crate) fn sort_by_bytes<E: Radix>(
    data: &mut Vec<E>,
    tmp: &mut Vec<E>,
    lo: usize,
    hi: usize,
    parallel: bool,
) {
    let n = data.len();
    if n < RADIX_MIN {
        // The bytes below `lo` are the element's original position (or absent): sorting whole
        // elements then equals a stable sort by the key bytes.
        if hi == std::mem::size_of::<E>() {
            data.sort_unstable();
        } else {
            data.sort_by_key(|&e| key_bytes(e, lo, hi));
        }
        return;
    }
    let chunks = if parallel && n >= 2 * PAR_MIN {
        (rayon::current_num_threads() * 2).clamp(1, n / PAR_MIN)
    } else {
        1
    };
    let len = n.div_ceil(chunks);
    // Histograms of every digit at once, to skip passes whose digit is constant.
    let nb = hi - lo;
    let count_all = |part: &[E]| {
        let mut h = vec![0usize; 256 * nb];
        for &e in part {
            for b in 0..nb {
                h[b * 256 + e.byte(lo + b)] += 1;
            }
        }
        h
    };
    let global: Vec<usize> = if chunks > 1 {
        data.par_chunks(len).map(count_all).reduce(
            || vec![0usize; 256 * nb],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                a
            },
        )
    } else {
        count_all(data)
    };
    tmp.clear();
    tmp.resize(n, E::default());
    for b in 0..nb {
        if global[b * 256..(b + 1) * 256].contains(&n) {
            continue;
        }
        pass(data, tmp, lo + b, len);
        std::mem::swap(data, tmp);
    }
}

/// The bytes `lo..hi` of `e` as a number (for the comparison-sort path).
#[inline(always)]
fn key_bytes<E: Radix>(e: E, lo: usize, hi: usize) -> u128 {
    let mut k = 0u128;
    for b in (lo..hi).rev() {
        k = (k << 8) | e.byte(b) as u128;
    }
    k
}

/// One stable scatter of `src` into `dst` by byte `b`, in chunks of `len` elements.
fn pass<E: Radix>(src: &[E], dst: &mut [E], b: usize, len: usize) {
    let hists: Vec<[usize; 256]> = if src.len() > len {
        src.par_chunks(len)
            .map(|c| {
                let mut h = [0usize; 256];
                for &e in c {
                    h[e.byte(b)] += 1;
                }
                h
            })
            .collect()
    } else {
        let mut h = [0usize; 256];
        for &e in src {
            h[e.byte(b)] += 1;
        }
        vec![h]
    };
    // offsets[c][d]: where chunk c writes its first element of digit d.
    let mut offsets = vec![[0usize; 256]; hists.len()];
    let mut at = 0;
    for d in 0..256 {
        for (c, h) in hists.iter().enumerate() {
            offsets[c][d] = at;
            at += h[d];
        }
    }
    let out = SendPtr(dst.as_mut_ptr().cast());
    let scatter = |(c, part): (usize, &[E])| {
        let mut off = offsets[c];
        let p = out.get::<E>();
        for &e in part {
            let d = e.byte(b);
            // SAFETY: the offsets partition 0..n: each chunk writes its own positions, each once.
            unsafe { *p.add(off[d]) = e };
            off[d] += 1;
        }
    };
    if hists.len() > 1 {
        src.par_chunks(len).enumerate().for_each(scatter);
    } else {
        scatter((0, src));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(n: usize, seed: u64) -> Vec<u64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                s >> 11
            })
            .collect()
    }

    #[test]
    fn sorts_keys_and_keeps_packed_indices_stable() {
        for &n in &[0usize, 1, 31, 383, 384, 1025, 100_003, 300_000] {
            let keys: Vec<u64> = lcg(n, n as u64 + 1).iter().map(|k| k % 97).collect();
            let mut data: Vec<u64> = keys
                .iter()
                .enumerate()
                .map(|(i, &k)| (k << 32) | i as u64)
                .collect();
            let mut tmp = Vec::new();
            sort_by_bytes(&mut data, &mut tmp, 4, 8, true);
            let mut want: Vec<(u64, u64)> = keys
                .iter()
                .enumerate()
                .map(|(i, &k)| (k, i as u64))
                .collect();
            want.sort();
            let got: Vec<(u64, u64)> = data.iter().map(|&e| (e >> 32, e & 0xffff_ffff)).collect();
            assert_eq!(got, want, "n = {n}");
        }
        let mut v: Vec<u32> = lcg(200_001, 7).iter().map(|&k| k as u32).collect();
        let mut want = v.clone();
        want.sort_unstable();
        sort_by_bytes(&mut v, &mut Vec::new(), 0, 4, true);
        assert_eq!(v, want);
    }
}
