//! One Metal device's command queue, the command buffer being filled, and its memory pool,
//! shared by the runtime, its buffers and its kernels.

use std::sync::Mutex;

use objc2::rc::{autoreleasepool, Retained};
use objc2::runtime::ProtocolObject;
use objc2_metal::{
    MTLBlitCommandEncoder, MTLBuffer, MTLCommandBuffer, MTLCommandBufferStatus, MTLCommandEncoder,
    MTLCommandQueue, MTLComputeCommandEncoder, MTLDevice,
};

use super::device::{all_devices, batch_limit, MetalProperties, MtlDevice};
use super::pool::{policy, MetalBlocks, PooledBuffer};
use crate::error::{Error, Result};
use crate::runtime::pool::Pool;

type MtlCommandBuffer = Retained<ProtocolObject<dyn MTLCommandBuffer>>;
type MtlComputeEncoder = Retained<ProtocolObject<dyn MTLComputeCommandEncoder>>;

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
    pool: Pool<MetalBlocks>,
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
    /// Opens device `index` of `MTLCopyAllDevices` and creates its command queue.
    pub(crate) fn open(index: usize) -> Result<MetalInner> {
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
        Ok(MetalInner {
            index,
            pool: Pool::new(
                MetalBlocks {
                    device: device.clone(),
                },
                policy(props.max_buffer_length),
            ),
            device,
            queue,
            props,
            work: Mutex::new(Queue::default()),
        })
    }

    /// The device's memory pool.
    pub(crate) fn pool(&self) -> &Pool<MetalBlocks> {
        &self.pool
    }

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
    pub(crate) fn encode_blit(
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
        self.pool.source().new_shared(nbytes)
    }

    /// A buffer of at least `nbytes` from the pool, or freshly created.
    pub(crate) fn allocate_block(&self, nbytes: usize) -> Result<(PooledBuffer, usize)> {
        if nbytes > self.props.max_buffer_length {
            return Err(Error::OutOfMemory {
                bytes: nbytes,
                device: format!(
                    "metal:{} (the largest Metal buffer is {} bytes)",
                    self.index, self.props.max_buffer_length
                ),
            });
        }
        self.pool.allocate(nbytes).map_err(|e| match e {
            Error::OutOfMemory { .. } => Error::OutOfMemory {
                bytes: nbytes,
                device: format!("metal:{}", self.index),
            },
            other => other,
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
