//! Copies between two CUDA devices of one process (`x.to_device("cuda:1")` of a `cuda:0` array).
//!
//! The copy is one `cuMemcpyPeerAsync`: device to device over NVLink or PCIe when
//! `cuDeviceCanAccessPeer` allows it (peer access is then enabled once per pair of devices),
//! staged through host memory by the driver otherwise. It stays asynchronous and stream-ordered:
//! the source stream first waits for the work already queued on the destination stream (the
//! destination block may have been in use there before it returned to the pool), the copy runs
//! on the source stream (so the source buffer is not reused before it has been read), and the
//! destination stream then waits for the copy before its later work.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{result, sys};

use super::context::CudaInner;
use super::driver::check;
use super::memory::CudaMemory;
use crate::error::Result;
use crate::runtime::memory::Buffer;

/// Whether device `from` can read and write the memory of device `to` directly
/// (`cuDeviceCanAccessPeer`); false for the same device and without a driver.
pub fn can_access_peer(from: usize, to: usize) -> bool {
    if from == to || !super::driver::driver_present() {
        return false;
    }
    let (Ok(a), Ok(b)) = (
        result::device::get(from as i32),
        result::device::get(to as i32),
    ) else {
        return false;
    };
    let mut can: std::ffi::c_int = 0;
    // SAFETY: both handles are valid devices; `can` is a valid out pointer.
    let r = unsafe { sys::cuDeviceCanAccessPeer(&mut can, a, b) };
    r == sys::CUresult::CUDA_SUCCESS && can != 0
}

/// Enables access of `from`'s context to `to`'s memory once per ordered pair, where the hardware
/// allows it. Returns whether direct access is on.
fn enable_peer_access(from: &CudaInner, to: &CudaInner) -> Result<bool> {
    static ENABLED: OnceLock<Mutex<HashMap<(usize, usize), bool>>> = OnceLock::new();
    let key = (from.ordinal(), to.ordinal());
    let mut map = ENABLED
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(&on) = map.get(&key) {
        return Ok(on);
    }
    let on = can_access_peer(key.0, key.1) && {
        from.bind()?;
        // SAFETY: both contexts are retained primary contexts; `from`'s is current.
        let r = unsafe { sys::cuCtxEnablePeerAccess(to.context(), 0) };
        matches!(
            r,
            sys::CUresult::CUDA_SUCCESS | sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
        )
    };
    map.insert(key, on);
    Ok(on)
}

/// An event recorded on `inner`'s stream now (its context is bound here).
fn record(inner: &CudaInner) -> Result<sys::CUevent> {
    inner.bind()?;
    let ev = check(
        result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING),
        "cuEventCreate",
    )?;
    // SAFETY: the event and the stream belong to the bound context.
    let rec = unsafe { result::event::record(ev, inner.stream()) };
    if rec.is_err() {
        // SAFETY: the event was created above and is waited on by nothing.
        let _ = unsafe { result::event::destroy(ev) };
    }
    check(rec, "cuEventRecord")?;
    Ok(ev)
}

/// Makes `inner`'s stream wait for `ev`, then releases `ev` (the driver keeps it until the wait
/// is done).
fn wait_and_release(inner: &CudaInner, ev: sys::CUevent) -> Result<()> {
    inner.bind()?;
    // SAFETY: `ev` was recorded by `record`; an event of another context may be waited on.
    let waited = unsafe {
        result::stream::wait_event(
            inner.stream(),
            ev,
            sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
        )
    };
    // SAFETY: destroying an event with pending waits is allowed; it is released when done.
    let _ = unsafe { result::event::destroy(ev) };
    check(waited, "cuStreamWaitEvent")
}

/// Copies `nbytes` of `src` (memory of `src_inner`'s device) into `dst`, a buffer of another
/// CUDA device. `Ok(false)` when `dst` is not CUDA memory.
pub fn copy_to_peer(
    src_inner: &Arc<CudaInner>,
    src: &Buffer,
    src_offset: usize,
    dst: &Buffer,
    dst_offset: usize,
    nbytes: usize,
) -> Result<bool> {
    let Some(d) = dst.memory_as::<CudaMemory>() else {
        return Ok(false);
    };
    let s = src.expect_memory::<CudaMemory>("copy_to_peer", "cuda")?;
    src.check_range(src_offset, nbytes, "copy_to_peer")?;
    dst.check_range(dst_offset, nbytes, "copy_to_peer")?;
    if nbytes == 0 {
        return Ok(true);
    }
    let dst_inner = d.inner();
    if dst_inner.ordinal() == src_inner.ordinal() {
        src_inner.bind()?;
        // SAFETY: both ranges were checked; stream-ordered on the one device.
        unsafe {
            check(
                result::memcpy_dtod_async(
                    d.device_ptr() + dst_offset as u64,
                    s.device_ptr() + src_offset as u64,
                    nbytes,
                    src_inner.stream(),
                ),
                "cuMemcpyDtoDAsync",
            )?;
        }
        return Ok(true);
    }
    enable_peer_access(src_inner, dst_inner)?;
    enable_peer_access(dst_inner, src_inner)?;
    let dst_ready = record(dst_inner)?;
    wait_and_release(src_inner, dst_ready)?;
    src_inner.bind()?;
    // SAFETY: both ranges were checked; both contexts are alive while their buffers are; the
    // copy is ordered on the source stream after the work of both devices queued so far.
    unsafe {
        check(
            result::memcpy_peer_async(
                dst_inner.context(),
                d.device_ptr() + dst_offset as u64,
                src_inner.context(),
                s.device_ptr() + src_offset as u64,
                nbytes,
                src_inner.stream(),
            ),
            "cuMemcpyPeerAsync",
        )?;
    }
    let copied = record(src_inner)?;
    wait_and_release(dst_inner, copied)?;
    Ok(true)
}
