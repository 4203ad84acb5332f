//! The Metal runtime (Apple GPUs): shared-storage buffers, a caching pool, one command queue per
//! device with command-buffer batching, and command-buffer errors reported at the next
//! synchronisation.
//!
//! **This backend has not yet run on Apple hardware.** It is written against the objc2-metal 0.3
//! bindings and type-checked on Linux by `scripts/metal_typecheck.sh` (see `README.md` beside
//! this file); its tests (`crates/ingot/tests/metal_runtime.rs`, `tests/test_metal.py`) run on
//! macOS only.
//!
//! # Memory
//!
//! Every buffer is `MTLStorageModeShared`: on Apple silicon (unified memory) the CPU and the GPU
//! see the same pages, so [`crate::runtime::Buffer::host_ptr`] returns the buffer's `contents()`
//! and NumPy can view a Metal array without a copy. The host may only touch that memory while no
//! queued GPU work uses it: [`Runtime::copy_from_host`] and [`Runtime::copy_to_host`] wait for
//! all queued work first, and a caller reading or writing through `host_ptr` must call
//! [`Runtime::synchronize`] before doing so. A page-aligned host allocation whose length is a
//! multiple of the page size can be wrapped without a copy ([`MetalRuntime::wrap_host`]).
//!
//! # Execution
//!
//! Kernels are encoded into one compute encoder of one command buffer; the command buffer is
//! committed when the host needs data (a copy to or from the host, [`Runtime::synchronize`]) or
//! when it holds [`batch_limit`] dispatches (`INGOT_METAL_BATCH`, default 64). Metal runs the
//! command buffers of a queue in order and tracks hazards between dispatches on the same buffers,
//! so the order of a program's operations is kept. A command buffer that fails (status
//! `MTLCommandBufferStatusError`) is reported by the next synchronisation as
//! [`Error::Device`] naming the kernels of that command buffer.
//!
//! # Dtypes
//!
//! Metal has no 64-bit floating point: **float64 arrays cannot live on a Metal device**.
//! [`check_dtype`] is the rule: creating a float64 array on Metal is
//! [`Error::UnsupportedDType`]; a user who wants the data on the GPU converts explicitly
//! (`astype(float32)` before `to_device`, or `asarray(x, dtype=float32, device="metal")`).
//! Every other dtype of ingot (bool, integers up to 64 bits, float16, bfloat16, float32) is
//! supported.

mod kernel;
pub mod matmul;
mod pool;

pub use kernel::{MetalFunction, MetalKernels, MetalLibrary};
pub use pool::size_class;

use std::any::Any;
use std::collections::HashMap;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, OnceLock};

use block2::RcBlock;
use objc2::rc::{autoreleasepool, Retained};
use objc2::runtime::ProtocolObject;
use objc2_metal::{
    MTLBlitCommandEncoder, MTLBuffer, MTLCommandBuffer, MTLCommandBufferStatus, MTLCommandEncoder,
    MTLCommandQueue, MTLComputeCommandEncoder, MTLCopyAllDevices, MTLCreateSystemDefaultDevice,
    MTLDevice, MTLResourceOptions,
};

use self::pool::{Pool, PooledBuffer};
use crate::device::Device;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::runtime::{Buffer, MemoryInfo, Runtime, Storage};

// `MTLCreateSystemDefaultDevice` (and device enumeration in a command-line process) returns no
// device unless CoreGraphics is linked (objc2-metal's documentation); objc2-metal links Metal.
#[cfg(target_os = "macos")]
#[link(name = "CoreGraphics", kind = "framework")]
extern "C" {}

/// A retained Metal device.
pub type MtlDevice = Retained<ProtocolObject<dyn MTLDevice>>;
type MtlCommandBuffer = Retained<ProtocolObject<dyn MTLCommandBuffer>>;
type MtlComputeEncoder = Retained<ProtocolObject<dyn MTLComputeCommandEncoder>>;

/// The dtype rule of Metal devices: everything but float64.
pub fn check_dtype(dtype: DType) -> Result<()> {
    if dtype == DType::Float64 {
        return Err(Error::UnsupportedDType {
            op: "a Metal array (Metal GPUs have no 64-bit floating point; convert with \
                 astype(float32) first)",
            dtype,
        });
    }
    Ok(())
}

/// Dispatches per command buffer before it is committed without waiting (`INGOT_METAL_BATCH`,
/// default 64, at least 1).
pub fn batch_limit() -> usize {
    static LIMIT: OnceLock<usize> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var("INGOT_METAL_BATCH")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(64)
            .max(1)
    })
}

/// The host's page size (16 KiB on Apple silicon).
pub fn page_size() -> usize {
    extern "C" {
        fn getpagesize() -> std::ffi::c_int;
    }
    // SAFETY: `getpagesize` takes no argument and only reads a system constant.
    let n = unsafe { getpagesize() };
    usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(16384)
}

fn all_devices() -> Vec<MtlDevice> {
    autoreleasepool(|_| {
        let list = MTLCopyAllDevices();
        let mut out: Vec<MtlDevice> = (0..list.count()).map(|i| list.objectAtIndex(i)).collect();
        if out.is_empty() {
            if let Some(d) = MTLCreateSystemDefaultDevice() {
                out.push(d);
            }
        }
        out
    })
}

/// Number of Metal devices on this machine (0 where Metal is absent).
pub fn device_count() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    *COUNT.get_or_init(|| all_devices().len())
}

/// Properties read once from the device.
#[derive(Clone, Debug)]
pub struct MetalProperties {
    /// `name` (`"Apple M2 Max"`).
    pub name: String,
    /// `registryID`: identifies the GPU across processes.
    pub registry_id: u64,
    /// `recommendedMaxWorkingSetSize`: bytes the GPU can use without a performance penalty.
    pub recommended_working_set_size: u64,
    /// `maxThreadsPerThreadgroup` along x, y, z.
    pub max_threads_per_threadgroup: [usize; 3],
    /// `maxThreadgroupMemoryLength` in bytes.
    pub max_threadgroup_memory: usize,
    /// `maxBufferLength` in bytes.
    pub max_buffer_length: usize,
    /// `hasUnifiedMemory`: true on Apple silicon.
    pub has_unified_memory: bool,
    /// `maxTransferRate` in bytes per second (0 for built-in GPUs).
    pub max_transfer_rate: u64,
    /// `isLowPower`.
    pub low_power: bool,
    /// `isRemovable` (an eGPU).
    pub removable: bool,
}

impl MetalProperties {
    fn read(d: &ProtocolObject<dyn MTLDevice>) -> MetalProperties {
        let t = d.maxThreadsPerThreadgroup();
        MetalProperties {
            name: d.name().to_string(),
            registry_id: d.registryID(),
            recommended_working_set_size: d.recommendedMaxWorkingSetSize(),
            max_threads_per_threadgroup: [t.width, t.height, t.depth],
            max_threadgroup_memory: d.maxThreadgroupMemoryLength(),
            max_buffer_length: d.maxBufferLength(),
            has_unified_memory: d.hasUnifiedMemory(),
            max_transfer_rate: d.maxTransferRate(),
            low_power: d.isLowPower(),
            removable: d.isRemovable(),
        }
    }
}

/// A committed command buffer not yet known to have completed.
struct Committed {
    cb: MtlCommandBuffer,
    kernels: Vec<String>,
}

/// The command buffer being filled and the committed ones.
#[derive(Default)]
struct Queue {
    cb: Option<MtlCommandBuffer>,
    compute: Option<MtlComputeEncoder>,
    /// Kernel names of `cb`, for error messages.
    kernels: Vec<String>,
    /// Commands encoded into `cb`.
    commands: usize,
    committed: Vec<Committed>,
    /// The first failure seen while pruning, reported at the next synchronisation.
    error: Option<String>,
}

/// State shared by the runtime, its buffers and its kernels.
pub struct MetalInner {
    index: usize,
    device: MtlDevice,
    queue: Retained<ProtocolObject<dyn MTLCommandQueue>>,
    pool: Pool,
    props: MetalProperties,
    work: Mutex<Queue>,
}

// SAFETY: the device and the command queue are thread-safe Metal objects (`Send + Sync` in
// objc2-metal). The command buffer and encoders in `work`, which are not, are only touched with
// the `work` mutex held, so one thread at a time uses them.
unsafe impl Send for MetalInner {}
// SAFETY: as above.
unsafe impl Sync for MetalInner {}

fn describe_failure(cb: &ProtocolObject<dyn MTLCommandBuffer>) -> String {
    match cb.error() {
        Some(e) => format!("{} (code {})", e.localizedDescription(), e.code()),
        None => "the command buffer failed without an NSError".to_string(),
    }
}

impl MetalInner {
    /// The device index (position in `MTLCopyAllDevices`).
    pub fn index(&self) -> usize {
        self.index
    }

    /// The Metal device.
    pub fn device(&self) -> &ProtocolObject<dyn MTLDevice> {
        &self.device
    }

    /// Device properties.
    pub fn properties(&self) -> &MetalProperties {
        &self.props
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.work.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn failure(&self, kernels: &[String], cb: &ProtocolObject<dyn MTLCommandBuffer>) -> String {
        let names = if kernels.is_empty() {
            String::new()
        } else {
            format!(" in kernel {}", kernels.join(", "))
        };
        format!(
            "metal:{}: command buffer failed{names}: {}",
            self.index,
            describe_failure(cb)
        )
    }

    fn ensure_cb<'q>(&self, q: &'q mut Queue) -> Result<&'q MtlCommandBuffer> {
        if q.cb.is_none() {
            let cb = self.queue.commandBuffer().ok_or_else(|| {
                Error::Device(format!(
                    "metal:{}: the command queue returned no command buffer",
                    self.index
                ))
            })?;
            q.cb = Some(cb);
        }
        q.cb.as_ref()
            .ok_or_else(|| Error::Device("metal: no command buffer".into()))
    }

    fn end_compute(q: &mut Queue) {
        if let Some(enc) = q.compute.take() {
            enc.endEncoding();
        }
    }

    /// Commits the command buffer being filled (if any) without waiting, and forgets committed
    /// command buffers that completed (recording the first failure for the next synchronisation).
    fn flush_locked(&self, q: &mut Queue) {
        Self::end_compute(q);
        if let Some(cb) = q.cb.take() {
            cb.commit();
            q.committed.push(Committed {
                cb,
                kernels: std::mem::take(&mut q.kernels),
            });
        }
        q.commands = 0;
        let mut keep = Vec::with_capacity(q.committed.len());
        for c in q.committed.drain(..) {
            let status = c.cb.status();
            if status == MTLCommandBufferStatus::Completed {
                continue;
            }
            if status == MTLCommandBufferStatus::Error {
                if q.error.is_none() {
                    q.error = Some(self.failure(&c.kernels, &c.cb));
                }
                continue;
            }
            keep.push(c);
        }
        q.committed = keep;
    }

    /// Commits pending work and waits for every committed command buffer; returns the first
    /// failure since the last synchronisation.
    fn wait_locked(&self, q: &mut Queue) -> Result<()> {
        self.flush_locked(q);
        for c in std::mem::take(&mut q.committed) {
            c.cb.waitUntilCompleted();
            if c.cb.status() == MTLCommandBufferStatus::Error && q.error.is_none() {
                q.error = Some(self.failure(&c.kernels, &c.cb));
            }
        }
        match q.error.take() {
            Some(msg) => Err(Error::Device(msg)),
            None => Ok(()),
        }
    }

    /// Commits pending work and waits for it; reports the first command-buffer failure since the
    /// last synchronisation, naming its kernels.
    pub fn synchronize(&self) -> Result<()> {
        autoreleasepool(|_| {
            let mut q = self.lock();
            self.wait_locked(&mut q)
        })
    }

    /// Commits pending work without waiting.
    pub fn flush(&self) {
        autoreleasepool(|_| {
            let mut q = self.lock();
            self.flush_locked(&mut q);
        })
    }

    /// Encodes one compute dispatch (`encode` sets the pipeline, binds and dispatches) into the
    /// current command buffer; commits it when it reaches [`batch_limit`] commands.
    pub fn encode_compute(
        &self,
        name: &str,
        encode: impl FnOnce(&ProtocolObject<dyn MTLComputeCommandEncoder>),
    ) -> Result<()> {
        autoreleasepool(|_| {
            let mut q = self.lock();
            let q = &mut *q;
            if q.compute.is_none() {
                let cb = self.ensure_cb(q)?;
                let enc = cb.computeCommandEncoder().ok_or_else(|| {
                    Error::Device(format!(
                        "metal:{}: the command buffer returned no compute encoder",
                        self.index
                    ))
                })?;
                q.compute = Some(enc);
            }
            if let Some(enc) = q.compute.as_ref() {
                encode(enc);
            }
            if q.kernels.last().map(|s| s.as_str()) != Some(name) && q.kernels.len() < 64 {
                q.kernels.push(name.to_string());
            }
            q.commands += 1;
            if q.commands >= batch_limit() {
                self.flush_locked(q);
            }
            Ok(())
        })
    }

    /// Encodes a blit (`encode` records copies or fills) into the current command buffer.
    fn encode_blit(
        &self,
        what: &str,
        encode: impl FnOnce(&ProtocolObject<dyn MTLBlitCommandEncoder>),
    ) -> Result<()> {
        autoreleasepool(|_| {
            let mut q = self.lock();
            let q = &mut *q;
            Self::end_compute(q);
            let cb = self.ensure_cb(q)?;
            let blit = cb.blitCommandEncoder().ok_or_else(|| {
                Error::Device(format!(
                    "metal:{}: the command buffer returned no blit encoder",
                    self.index
                ))
            })?;
            encode(&blit);
            blit.endEncoding();
            if q.kernels.last().map(|s| s.as_str()) != Some(what) && q.kernels.len() < 64 {
                q.kernels.push(what.to_string());
            }
            q.commands += 1;
            if q.commands >= batch_limit() {
                self.flush_locked(q);
            }
            Ok(())
        })
    }

    /// Waits for all queued work, then runs one compute dispatch alone in its own command buffer
    /// and returns its GPU time in seconds (`GPUEndTime - GPUStartTime`).
    pub fn time_compute(
        &self,
        name: &str,
        encode: impl FnOnce(&ProtocolObject<dyn MTLComputeCommandEncoder>),
    ) -> Result<f64> {
        autoreleasepool(|_| {
            let mut q = self.lock();
            self.wait_locked(&mut q)?;
            let cb = self.queue.commandBuffer().ok_or_else(|| {
                Error::Device(format!(
                    "metal:{}: the command queue returned no command buffer",
                    self.index
                ))
            })?;
            let enc = cb.computeCommandEncoder().ok_or_else(|| {
                Error::Device(format!(
                    "metal:{}: the command buffer returned no compute encoder",
                    self.index
                ))
            })?;
            encode(&enc);
            enc.endEncoding();
            cb.commit();
            cb.waitUntilCompleted();
            if cb.status() == MTLCommandBufferStatus::Error {
                return Err(Error::Device(self.failure(&[name.to_string()], &cb)));
            }
            Ok((cb.GPUEndTime() - cb.GPUStartTime()).max(0.0))
        })
    }

    fn new_shared_buffer(&self, nbytes: usize) -> Option<Retained<ProtocolObject<dyn MTLBuffer>>> {
        let options = MTLResourceOptions::StorageModeShared
            | MTLResourceOptions::CPUCacheModeDefaultCache
            | MTLResourceOptions::HazardTrackingModeTracked;
        autoreleasepool(|_| self.device.newBufferWithLength_options(nbytes, options))
    }

    /// A buffer of at least `nbytes` from the pool, or freshly created.
    fn allocate_block(&self, nbytes: usize) -> Result<(PooledBuffer, usize)> {
        if nbytes > self.props.max_buffer_length {
            return Err(Error::OutOfMemory {
                bytes: nbytes,
                device: format!(
                    "metal:{} (the largest Metal buffer is {} bytes)",
                    self.index, self.props.max_buffer_length
                ),
            });
        }
        let class = size_class(nbytes).min(self.props.max_buffer_length.max(nbytes));
        if let Some(b) = self.pool.take(class) {
            return Ok((b, class));
        }
        let buffer = match self.new_shared_buffer(class) {
            Some(b) => b,
            None => {
                // Give cached buffers back and try once more.
                self.pool.release_cached();
                self.new_shared_buffer(class)
                    .ok_or_else(|| Error::OutOfMemory {
                        bytes: nbytes,
                        device: format!("metal:{}", self.index),
                    })?
            }
        };
        self.pool.note_new(class);
        Ok((PooledBuffer(buffer), class))
    }

    /// A pooled buffer of at least `nbytes` for a temporary use on the GPU (returned to the pool
    /// when dropped; later users are ordered after the queued work).
    pub(crate) fn temp_memory(self: &Arc<Self>, nbytes: usize) -> Result<MetalMemory> {
        let (buffer, class) = self.allocate_block(nbytes)?;
        Ok(MetalMemory {
            buffer: Some(buffer),
            class: Some(class),
            nbytes,
            inner: self.clone(),
        })
    }

    /// A fresh shared buffer holding a copy of `bytes` (not pooled, so no queued work uses it).
    pub(crate) fn buffer_with_bytes(
        &self,
        bytes: &[u8],
    ) -> Result<Retained<ProtocolObject<dyn MTLBuffer>>> {
        let buffer =
            self.new_shared_buffer(bytes.len().max(16))
                .ok_or_else(|| Error::OutOfMemory {
                    bytes: bytes.len(),
                    device: format!("metal:{}", self.index),
                })?;
        // SAFETY: the buffer is new (no GPU work uses it), shared (contents() is valid host
        // memory) and at least `bytes.len()` long.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                buffer.contents().as_ptr() as *mut u8,
                bytes.len(),
            );
        }
        Ok(buffer)
    }
}

/// Owner of host memory wrapped without a copy, dropped when Metal frees the buffer.
type HostOwner = Box<dyn Any + Send>;

/// Metal memory: a shared `MTLBuffer`, from the pool or wrapping host memory.
pub struct MetalMemory {
    buffer: Option<PooledBuffer>,
    /// Size class for pooled buffers; `None` for wrapped host memory.
    class: Option<usize>,
    nbytes: usize,
    inner: Arc<MetalInner>,
}

// SAFETY: an MTLBuffer is safe to reference from any thread; its contents are only accessed
// under the synchronisation rules of the module documentation.
unsafe impl Send for MetalMemory {}
// SAFETY: as above; `&MetalMemory` exposes only the buffer object and its address.
unsafe impl Sync for MetalMemory {}

impl MetalMemory {
    /// The Metal buffer.
    pub fn mtl_buffer(&self) -> &ProtocolObject<dyn MTLBuffer> {
        match &self.buffer {
            Some(b) => &b.0,
            // The buffer is only taken in Drop.
            None => unreachable!("MetalMemory used after drop"),
        }
    }

    /// The host address of the shared memory (`contents()`).
    pub fn contents(&self) -> *mut u8 {
        self.mtl_buffer().contents().as_ptr() as *mut u8
    }

    /// The runtime state of the device owning the memory.
    pub fn inner(&self) -> &Arc<MetalInner> {
        &self.inner
    }

    /// True when the memory is a wrapped host allocation (no copy was made).
    pub fn is_wrapped(&self) -> bool {
        self.class.is_none()
    }
}

impl Drop for MetalMemory {
    fn drop(&mut self) {
        if let Some(b) = self.buffer.take() {
            match self.class {
                Some(class) => self.inner.pool.release(b, class),
                None => {
                    self.inner.pool.note_gone(self.nbytes);
                    // Metal keeps the buffer alive while a command buffer uses it and calls the
                    // deallocator (which drops the host owner) when it is freed.
                    drop(b);
                }
            }
        }
    }
}

/// An Apple GPU as an ingot device.
pub struct MetalRuntime {
    inner: Arc<MetalInner>,
    kernels: OnceLock<Arc<MetalKernels>>,
}

/// The runtime of Metal device `index`, opened on first use and shared afterwards.
pub fn runtime(index: usize) -> Result<Arc<MetalRuntime>> {
    static RUNTIMES: OnceLock<Mutex<HashMap<usize, Arc<MetalRuntime>>>> = OnceLock::new();
    let mut map = RUNTIMES
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(rt) = map.get(&index) {
        return Ok(rt.clone());
    }
    let rt = Arc::new(MetalRuntime::new(index)?);
    map.insert(index, rt.clone());
    Ok(rt)
}

/// The kernel engine of Metal device `index`.
pub fn kernel_backend(index: usize) -> Result<Arc<MetalKernels>> {
    let rt = runtime(index)?;
    Ok(rt
        .kernels
        .get_or_init(|| Arc::new(MetalKernels::new(rt.inner.clone())))
        .clone())
}

fn metal_memory<'a>(buf: &'a Buffer, what: &str) -> Result<&'a MetalMemory> {
    match buf.storage() {
        Storage::Metal(m) => Ok(m),
        #[allow(unreachable_patterns)]
        _ => Err(Error::DeviceMismatch(format!(
            "{what}: buffer on {} given to a metal runtime",
            buf.device()
        ))),
    }
}

impl MetalRuntime {
    /// Opens device `index` of `MTLCopyAllDevices` and creates its command queue.
    /// Use [`runtime`] to share one per device.
    fn new(index: usize) -> Result<MetalRuntime> {
        let devices = all_devices();
        let count = devices.len();
        let Some(device) = devices.into_iter().nth(index) else {
            return Err(Error::DeviceUnavailable(if count == 0 {
                format!("metal:{index}: this machine has no Metal device")
            } else {
                format!("metal:{index}: this machine has {count} Metal device(s)")
            }));
        };
        let queue = autoreleasepool(|_| device.newCommandQueue()).ok_or_else(|| {
            Error::DeviceUnavailable(format!("metal:{index}: could not create a command queue"))
        })?;
        let props = MetalProperties::read(&device);
        Ok(MetalRuntime {
            inner: Arc::new(MetalInner {
                index,
                device,
                queue,
                pool: Pool::default(),
                props,
                work: Mutex::new(Queue::default()),
            }),
            kernels: OnceLock::new(),
        })
    }

    /// The state shared with buffers and kernels.
    pub fn inner(&self) -> &Arc<MetalInner> {
        &self.inner
    }

    /// Device properties.
    pub fn properties(&self) -> &MetalProperties {
        &self.inner.props
    }

    /// Wraps host memory as a Metal buffer without copying (`newBufferWithBytesNoCopy`).
    ///
    /// Returns `Ok(None)` when the memory cannot be wrapped (the address is not page-aligned,
    /// the length is zero or not a multiple of [`page_size`], or Metal refuses it): the caller
    /// then copies. `owner` keeps the memory alive; it is dropped when Metal frees the buffer,
    /// possibly on another thread and only after the last command buffer using it completed.
    ///
    /// # Safety
    ///
    /// `ptr..ptr + nbytes` must be valid host memory that stays allocated while `owner` lives and
    /// that nothing else frees; when `writable`, nothing else may access it while kernels write it.
    pub unsafe fn wrap_host(
        &self,
        ptr: *mut u8,
        nbytes: usize,
        owner: Box<dyn Any + Send>,
        writable: bool,
    ) -> Result<Option<Buffer>> {
        let page = page_size();
        let Some(nn) = NonNull::new(ptr as *mut c_void) else {
            return Ok(None);
        };
        if nbytes == 0 || !(ptr as usize).is_multiple_of(page) || !nbytes.is_multiple_of(page) {
            return Ok(None);
        }
        let slot: Mutex<Option<HostOwner>> = Mutex::new(Some(owner));
        let dealloc = RcBlock::new(move |_p: NonNull<c_void>, _n: usize| {
            let owner = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
            drop(owner);
        });
        let options = MTLResourceOptions::StorageModeShared
            | MTLResourceOptions::CPUCacheModeDefaultCache
            | MTLResourceOptions::HazardTrackingModeTracked;
        // SAFETY: the caller guarantees the range is valid while `owner` lives; the deallocator
        // block (copied by Metal) owns `owner` and drops it when the buffer is freed. The block
        // only drops a `Send` value, so it may run on any thread.
        let buffer = autoreleasepool(|_| unsafe {
            self.inner
                .device
                .newBufferWithBytesNoCopy_length_options_deallocator(
                    nn,
                    nbytes,
                    options,
                    Some(&dealloc),
                )
        });
        let Some(buffer) = buffer else {
            return Ok(None);
        };
        self.inner.pool.note_new(nbytes);
        let mem = MetalMemory {
            buffer: Some(PooledBuffer(buffer)),
            class: None,
            nbytes,
            inner: self.inner.clone(),
        };
        Ok(Some(Buffer::new(
            Storage::Metal(mem),
            nbytes,
            self.device(),
            writable,
        )))
    }
}

impl Runtime for MetalRuntime {
    fn device(&self) -> Device {
        Device::Metal(self.inner.index)
    }

    fn name(&self) -> String {
        self.inner.props.name.clone()
    }

    fn allocate(&self, nbytes: usize) -> Result<Buffer> {
        let (buffer, class) = self.inner.allocate_block(nbytes)?;
        let mem = MetalMemory {
            buffer: Some(buffer),
            class: Some(class),
            nbytes,
            inner: self.inner.clone(),
        };
        Ok(Buffer::new(
            Storage::Metal(mem),
            nbytes,
            self.device(),
            true,
        ))
    }

    fn copy_from_host(&self, src: &[u8], dst: &Buffer, dst_offset: usize) -> Result<()> {
        dst.check_range(dst_offset, src.len(), "copy_from_host")?;
        if src.is_empty() {
            return Ok(());
        }
        let m = metal_memory(dst, "copy_from_host")?;
        // Queued kernels may still read or write this memory (a pooled block reused).
        self.inner.synchronize()?;
        // SAFETY: the range was checked against the buffer, whose shared contents are host
        // memory of at least `dst.nbytes()` bytes; no GPU work is queued.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), m.contents().add(dst_offset), src.len());
        }
        Ok(())
    }

    fn copy_to_host(&self, src: &Buffer, src_offset: usize, dst: &mut [u8]) -> Result<()> {
        src.check_range(src_offset, dst.len(), "copy_to_host")?;
        if dst.is_empty() {
            return Ok(());
        }
        let m = metal_memory(src, "copy_to_host")?;
        self.inner.synchronize()?;
        // SAFETY: the range was checked; every queued write has completed.
        unsafe {
            std::ptr::copy_nonoverlapping(
                m.contents().add(src_offset),
                dst.as_mut_ptr(),
                dst.len(),
            );
        }
        Ok(())
    }

    fn copy_within(
        &self,
        src: &Buffer,
        src_offset: usize,
        dst: &Buffer,
        dst_offset: usize,
        nbytes: usize,
    ) -> Result<()> {
        src.check_range(src_offset, nbytes, "copy_within")?;
        dst.check_range(dst_offset, nbytes, "copy_within")?;
        if nbytes == 0 {
            return Ok(());
        }
        let (s, d) = (
            metal_memory(src, "copy_within")?,
            metal_memory(dst, "copy_within")?,
        );
        let same = std::ptr::eq(s.mtl_buffer(), d.mtl_buffer());
        let overlap = same && src_offset < dst_offset + nbytes && dst_offset < src_offset + nbytes;
        if overlap {
            // A blit between overlapping ranges is undefined: move on the host after waiting.
            self.inner.synchronize()?;
            // SAFETY: both ranges were checked; no GPU work is queued; `copy` allows overlap.
            unsafe {
                std::ptr::copy(
                    s.contents().add(src_offset),
                    d.contents().add(dst_offset),
                    nbytes,
                );
            }
            return Ok(());
        }
        self.inner.encode_blit("copy", |blit| {
            // SAFETY: both ranges lie inside their buffers (checked above) and do not overlap.
            unsafe {
                blit.copyFromBuffer_sourceOffset_toBuffer_destinationOffset_size(
                    s.mtl_buffer(),
                    src_offset,
                    d.mtl_buffer(),
                    dst_offset,
                    nbytes,
                )
            }
        })
    }

    fn synchronize(&self) -> Result<()> {
        self.inner.synchronize()
    }

    fn memory_info(&self) -> MemoryInfo {
        let stats = self.inner.pool.stats();
        let total = self.inner.props.recommended_working_set_size as usize;
        let allocated = self.inner.device.currentAllocatedSize();
        MemoryInfo {
            used: stats.used,
            pool: stats.pooled,
            free: total.saturating_sub(allocated),
            total,
            peak: stats.peak,
            buffers: stats.live,
        }
    }

    fn empty_cache(&self) {
        // Pooled buffers may still be referenced by queued command buffers; Metal keeps them
        // alive until those complete, so dropping our references needs no wait.
        self.inner.pool.release_cached();
    }
}
