//! Checked mode's fault record, shared by the engines that run translated kernels.
//!
//! A checked translation (`CompileOptions::checked`, see `ingot-msl/src/checked.rs`) hands each
//! launch a [`ChkRecord`]; the first out-of-bounds access fills it, and the engine turns it into
//! [`Error::KernelFault`] with [`fault`] after the launch.

use crate::error::Error;

/// The C++ `ingot::chk_record` (`prelude/ingot/checked.h`), byte for byte.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ChkRecord {
    /// 0 empty, 1 being written, 2 complete.
    pub state: u32,
    /// The entry point's parameter index (declaration order).
    pub param: u32,
    /// Bytes of the element accessed.
    pub size: u32,
    /// 1: out of bounds.
    pub kind: u32,
    /// Byte offset of the access from the buffer's start.
    pub offset: i64,
    /// The buffer's length in bytes.
    pub length: u64,
    /// The thread: `thread_position_in_grid` (CPU), or CUDA's `blockIdx.x, threadIdx.x, 0`.
    pub pos: [u32; 3],
    /// Violations counted.
    pub count: u32,
}

impl ChkRecord {
    /// True when a fault was recorded.
    pub fn hit(&self) -> bool {
        self.state == 2
    }
}

/// The error for a filled record of kernel `kernel` (reflection `entry`), whose thread is at
/// `thread_position_in_grid` `pos`.
pub fn fault(
    kernel: &str,
    entry: Option<&ingot_msl::EntryPoint>,
    r: &ChkRecord,
    pos: [u32; 3],
) -> Error {
    let (name, what) = match entry.and_then(|e| e.params.get(r.param as usize)) {
        Some(p) => {
            let what = match (p.kind, p.buffer_index, p.threadgroup_index) {
                (ingot_msl::ParamKind::Threadgroup, _, Some(n)) => {
                    format!("threadgroup({n}) allocation")
                }
                (_, Some(n), _) => format!("buffer({n})"),
                _ => "buffer".to_string(),
            };
            (p.name.clone(), what)
        }
        None => (format!("#{}", r.param), "buffer".to_string()),
    };
    let size = r.size.max(1) as i64;
    let index = r.offset.div_euclid(size);
    let elements = r.length / size as u64;
    let more = if r.count > 1 {
        format!("; {} out-of-bounds accesses in this launch", r.count)
    } else {
        String::new()
    };
    Error::KernelFault(format!(
        "kernel `{kernel}`: out-of-bounds access to parameter `{name}` ({what}): index {index} \
         (byte offset {}, {}-byte elements) outside its {elements} elements ({} bytes), by the \
         thread at thread_position_in_grid ({}, {}, {}){more}",
        r.offset, r.size, r.length, pos[0], pos[1], pos[2]
    ))
}

/// The grid position of CUDA thread `threadIdx.x = local` of block `blockIdx.x = block` in a
/// launch region (ABI.md, "CUDA": the wrapper's own linearisation).
pub fn cuda_position(l: &crate::runtime::kernel::LaunchParams, block: u32, local: u32) -> [u32; 3] {
    let bx = l.block[0].max(1);
    let by = l.block[1].max(1);
    let rx = l.region[0].max(1);
    let ry = l.region[1].max(1);
    let lc = [local % bx, (local / bx) % by, local / (bx * by)];
    let g = [
        block % rx + l.origin[0],
        (block / rx) % ry + l.origin[1],
        block / (rx * ry) + l.origin[2],
    ];
    [0, 1, 2].map(|c| g[c].wrapping_mul(l.tg[c]).wrapping_add(lc[c]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_layout_matches_the_prelude() {
        assert_eq!(std::mem::size_of::<ChkRecord>(), 48);
        assert_eq!(std::mem::offset_of!(ChkRecord, offset), 16);
        assert_eq!(std::mem::offset_of!(ChkRecord, pos), 32);
    }

    #[test]
    fn cuda_positions_follow_the_wrapper() {
        let l = crate::runtime::kernel::LaunchParams {
            tg: [4, 2, 1],
            block: [4, 2, 1],
            region: [3, 2, 1],
            origin: [0, 0, 0],
            ..Default::default()
        };
        // block 4 = group (1, 1); thread 5 = (1, 1) in the group.
        assert_eq!(cuda_position(&l, 4, 5), [5, 3, 0]);
    }
}
