//! The array: a buffer, a layout and a dtype on a device.
//!
//! An [`Array`] is a view: cloning it or taking a view (slice, transpose, broadcast) shares the
//! buffer. Operations that produce new values allocate a new buffer on the same device. Arrays
//! from different devices never mix implicitly.
//!
//! Writes through a view are well defined only when each element of the view is its own memory
//! location. A view that repeats elements (a zero stride on an axis longer than one, as
//! `broadcast_to` makes) is therefore read-only, and so is every view taken from it: writing one
//! element would change many, and ops writing it in parallel would race. A read-only view of
//! writable memory does not make the memory read-only; the array it came from stays writable.
//!
//! This file holds the type, its constructors and its views. The methods that move data
//! (`copy`, `astype`, `assign`, `fill`, `contiguous`, `reshape`, `to_device`, `to_bytes`,
//! `to_vec`, `item`) run ops, so the ops layer defines them (`ops/copy.rs`): an array never
//! calls the layer above it.

use std::sync::Arc;

use crate::device::Device;
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::layout::{IndexItem, Layout};
use crate::runtime::Buffer;

/// An n-dimensional array.
///
/// ```
/// use ingot::{Array, DType, Device};
/// let a = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3], Device::Cpu).unwrap();
/// assert_eq!(a.shape(), &[3]);
/// assert_eq!(a.dtype(), DType::Float32);
/// assert_eq!(a.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0]);
/// ```
#[derive(Clone)]
pub struct Array {
    buffer: Arc<Buffer>,
    layout: Layout,
    dtype: DType,
    /// Writes through this view are refused (see the module docs), whatever the buffer allows.
    read_only: bool,
}

/// Rust element types that map to a dtype (used by [`Array::from_vec`] and [`Array::to_vec`]).
pub trait HostElement: bytemuck::Pod {
    /// The dtype of this element type.
    const DTYPE: DType;
}

macro_rules! host_element {
    ($($t:ty => $d:ident),*) => { $(impl HostElement for $t { const DTYPE: DType = DType::$d; })* };
}
host_element!(i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64, u8 => UInt8, u16 => UInt16,
    u32 => UInt32, u64 => UInt64, half::f16 => Float16, half::bf16 => BFloat16, f32 => Float32,
    f64 => Float64, num_complex::Complex<f32> => Complex64, num_complex::Complex<f64> => Complex128);

impl Array {
    /// An array over `buffer` with `layout`. Fails if the layout reaches outside the buffer.
    pub fn from_parts(buffer: Arc<Buffer>, layout: Layout, dtype: DType) -> Result<Array> {
        if let Some((lo, hi)) = layout.span() {
            let _ = lo;
            if hi * dtype.size() > buffer.nbytes() {
                return Err(Error::Value(format!(
                    "layout {layout:?} of {dtype} reaches past a buffer of {} bytes",
                    buffer.nbytes()
                )));
            }
        }
        let read_only = layout.repeats_elements();
        Ok(Array {
            buffer,
            layout,
            dtype,
            read_only,
        })
    }

    /// A new contiguous array with uninitialised contents.
    pub fn empty(shape: &[usize], dtype: DType, device: Device) -> Result<Array> {
        let rt = device.runtime()?;
        rt.check_dtype(dtype)?;
        let size = checked_size(shape)?;
        let nbytes = size.checked_mul(dtype.size()).ok_or(Error::OutOfMemory {
            bytes: usize::MAX,
            device: device.to_string(),
        })?;
        let buffer = rt.allocate(nbytes)?;
        Ok(Array {
            buffer: Arc::new(buffer),
            layout: Layout::contiguous(shape),
            dtype,
            read_only: false,
        })
    }

    /// A new contiguous array copied from host bytes in row-major order.
    pub fn from_bytes(
        bytes: &[u8],
        shape: &[usize],
        dtype: DType,
        device: Device,
    ) -> Result<Array> {
        let size = checked_size(shape)?;
        if bytes.len() != size * dtype.size() {
            return Err(Error::Value(format!(
                "{} bytes given for shape {shape:?} of {dtype} ({} bytes needed)",
                bytes.len(),
                size * dtype.size()
            )));
        }
        let a = Array::empty(shape, dtype, device)?;
        device.runtime()?.copy_from_host(bytes, &a.buffer, 0)?;
        Ok(a)
    }

    /// A new array from a vector of host elements.
    pub fn from_vec<T: HostElement>(
        data: Vec<T>,
        shape: &[usize],
        device: Device,
    ) -> Result<Array> {
        Array::from_bytes(bytemuck::cast_slice(&data), shape, T::DTYPE, device)
    }

    /// A 0-d array holding `value` converted to `dtype`.
    pub fn scalar(value: Scalar, dtype: DType, device: Device) -> Result<Array> {
        Array::from_bytes(&value.to_bytes(dtype), &[], dtype, device)
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        self.layout.shape()
    }

    /// The dtype.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The device holding the array.
    pub fn device(&self) -> Device {
        self.buffer.device()
    }

    /// The layout (shape, strides, offset in elements).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The buffer the array views.
    pub fn buffer(&self) -> &Arc<Buffer> {
        &self.buffer
    }

    /// Number of axes.
    pub fn ndim(&self) -> usize {
        self.layout.ndim()
    }

    /// Number of elements.
    pub fn size(&self) -> usize {
        self.layout.size()
    }

    /// Size of the array's elements in bytes (`size * itemsize`).
    pub fn nbytes(&self) -> usize {
        self.size() * self.dtype.size()
    }

    /// True when the elements are row-major with no gaps.
    pub fn is_contiguous(&self) -> bool {
        self.layout.is_contiguous()
    }

    /// True when the array may be written: its memory is writable and the view does not repeat
    /// elements (nor comes from one that does).
    ///
    /// ```
    /// use ingot::{Array, Device};
    /// let a = Array::from_vec(vec![1.0f32, 2.0], &[2], Device::Cpu).unwrap();
    /// assert!(a.is_writable());
    /// let b = a.broadcast_to(&[3, 2]).unwrap();
    /// assert!(!b.is_writable());
    /// assert!(!b.index(&[ingot::layout::IndexItem::Int(0)]).unwrap().is_writable());
    /// assert!(a.is_writable());
    /// ```
    pub fn is_writable(&self) -> bool {
        !self.read_only && self.buffer.is_writable()
    }

    /// The same view, read-only (writes through it are refused; the memory is unchanged).
    pub fn read_only(&self) -> Array {
        Array {
            read_only: true,
            ..self.clone()
        }
    }

    /// True when the two arrays view the same buffer.
    pub fn shares_buffer(&self, other: &Array) -> bool {
        Arc::ptr_eq(&self.buffer, &other.buffer)
    }

    /// The same buffer seen through another layout (checked against the buffer size); read-only
    /// when this view is or when the new layout repeats elements.
    pub fn with_layout(&self, layout: Layout) -> Result<Array> {
        self.derived(Array::from_parts(self.buffer.clone(), layout, self.dtype))
    }

    /// `view`, a view of this array's buffer, read-only when this array is.
    fn derived(&self, view: Result<Array>) -> Result<Array> {
        let mut v = view?;
        v.read_only |= self.read_only;
        Ok(v)
    }

    /// Reinterprets the bytes as another dtype of the same size.
    pub fn view_as(&self, dtype: DType) -> Result<Array> {
        if dtype.size() != self.dtype.size() {
            return Err(Error::Value(format!(
                "cannot view {} as {dtype}: element sizes differ",
                self.dtype
            )));
        }
        self.derived(Array::from_parts(
            self.buffer.clone(),
            self.layout.clone(),
            dtype,
        ))
    }

    /// NumPy's `ndarray.view(dtype)`: the same bytes read as another dtype. Of the same
    /// element size, any layout; of another size, the last axis must be contiguous and its
    /// length in bytes a multiple of the new size, and it changes length accordingly (a 0-d
    /// array keeps its element size). Writes through the view change this array.
    ///
    /// ```
    /// use ingot::{Array, DType, Device};
    /// let a = Array::from_vec(vec![1.0f32, 2.0], &[2], Device::Cpu).unwrap();
    /// let b = a.view_dtype(DType::UInt16).unwrap();
    /// assert_eq!(b.shape(), &[4]);
    /// assert_eq!(b.to_vec::<u16>().unwrap(), vec![0, 0x3f80, 0, 0x4000]);
    /// ```
    pub fn view_dtype(&self, dtype: DType) -> Result<Array> {
        let (old, new) = (self.dtype.size(), dtype.size());
        if old == new {
            return self.view_as(dtype);
        }
        let l = &self.layout;
        let nd = l.ndim();
        if nd == 0 {
            return Err(Error::Value(
                "Changing the dtype of a 0d array is only supported if the itemsize is unchanged"
                    .into(),
            ));
        }
        let last = l.shape()[nd - 1];
        if last != 1 && l.strides()[nd - 1] != 1 && l.size() != 0 {
            return Err(Error::Value(
                "To change to a dtype of a different size, the last axis must be contiguous".into(),
            ));
        }
        if !(last * old).is_multiple_of(new) {
            return Err(Error::Value(format!(
                "When changing to a {} dtype, its size must be a divisor of the total size in \
                 bytes of the last axis of the array.",
                if new > old { "larger" } else { "smaller" }
            )));
        }
        // Offsets and strides are counted in elements, so the new ones must be whole elements
        // of the new size (NumPy, counting bytes, can view misaligned memory; ingot cannot).
        let in_bytes = |e: isize| e * old as isize;
        let aligned = (l.offset() * old).is_multiple_of(new)
            && l.strides()[..nd - 1]
                .iter()
                .all(|&s| in_bytes(s) % new as isize == 0);
        if !aligned {
            return Err(Error::Value(format!(
                "cannot view {} as {dtype}: the view's start or strides are not whole {dtype} \
                 elements (copy the array first)",
                self.dtype
            )));
        }
        let mut shape = l.shape().to_vec();
        shape[nd - 1] = last * old / new;
        let mut strides: Vec<isize> = l.strides()[..nd - 1]
            .iter()
            .map(|&s| in_bytes(s) / new as isize)
            .collect();
        strides.push(1);
        let layout = Layout::new(shape, strides, l.offset() * old / new)?;
        self.derived(Array::from_parts(self.buffer.clone(), layout, dtype))
    }

    /// The real (`imag = false`) or imaginary part of a complex array as a strided view of its
    /// real dtype (`complex64` -> `float32`); writes through the view change this array.
    pub fn complex_part(&self, imag: bool) -> Result<Array> {
        self.complex_pairs()?
            .index(&[IndexItem::Ellipsis, IndexItem::Int(imag as isize)])
    }

    /// A complex array seen as real pairs: a view of the real dtype with one more axis, of
    /// length 2 (real part, imaginary part), so a complex copy is one real copy.
    pub fn complex_pairs(&self) -> Result<Array> {
        if !self.dtype.is_complex() {
            return Err(Error::DTypeMismatch(format!(
                "the parts of an array of {} (not complex)",
                self.dtype
            )));
        }
        let l = &self.layout;
        let mut shape = l.shape().to_vec();
        shape.push(2);
        let mut strides: Vec<isize> = l.strides().iter().map(|&s| s * 2).collect();
        strides.push(1);
        let layout = Layout::new(shape, strides, l.offset() * 2)?;
        self.derived(Array::from_parts(
            self.buffer.clone(),
            layout,
            self.dtype.real_dtype(),
        ))
    }

    /// The inverse of [`Array::complex_pairs`]: a real array whose last axis holds 2 contiguous
    /// elements (real part, imaginary part) seen as a complex array without that axis.
    pub fn from_complex_pairs(&self) -> Result<Array> {
        let l = &self.layout;
        let nd = l.shape().len();
        let ok = nd > 0
            && l.shape()[nd - 1] == 2
            && l.strides()[nd - 1] == 1
            && l.offset().is_multiple_of(2)
            && l.strides()[..nd - 1].iter().all(|s| s % 2 == 0);
        if !ok || !matches!(self.dtype, DType::Float32 | DType::Float64) {
            return Err(Error::Value(format!(
                "internal: pairs of shape {:?} and strides {:?} ({}) are not complex numbers",
                l.shape(),
                l.strides(),
                self.dtype
            )));
        }
        let layout = Layout::new(
            l.shape()[..nd - 1].to_vec(),
            l.strides()[..nd - 1].iter().map(|s| s / 2).collect(),
            l.offset() / 2,
        )?;
        self.derived(Array::from_parts(
            self.buffer.clone(),
            layout,
            self.dtype.complex_dtype(),
        ))
    }

    /// Basic indexing: integers, slices, new axes, one ellipsis. Returns a view.
    pub fn index(&self, items: &[IndexItem]) -> Result<Array> {
        self.with_layout(self.layout.index(items)?)
    }

    /// Reorders the axes (a view).
    pub fn permute(&self, axes: &[usize]) -> Result<Array> {
        self.with_layout(self.layout.permute(axes)?)
    }

    /// Reverses the axes (a view).
    pub fn t(&self) -> Array {
        Array {
            buffer: self.buffer.clone(),
            layout: self.layout.transpose(),
            dtype: self.dtype,
            read_only: self.read_only,
        }
    }

    /// Swaps the last two axes (a view).
    pub fn matrix_transpose(&self) -> Result<Array> {
        self.with_layout(self.layout.matrix_transpose()?)
    }

    /// Broadcasts to `shape` (a view with zero strides).
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Array> {
        self.with_layout(self.layout.broadcast_to(shape)?)
    }

    /// Inserts an axis of length 1 (a view).
    pub fn expand_dims(&self, axis: isize) -> Result<Array> {
        let a = Layout::normalize_axis(axis, self.ndim() + 1)?;
        self.with_layout(self.layout.expand_dims(a)?)
    }

    /// Removes axes of length 1 (all of them when `axes` is `None`).
    pub fn squeeze(&self, axes: Option<&[isize]>) -> Result<Array> {
        let axes: Vec<usize> = match axes {
            Some(list) => list
                .iter()
                .map(|&a| Layout::normalize_axis(a, self.ndim()))
                .collect::<Result<_>>()?,
            None => (0..self.ndim()).filter(|&i| self.shape()[i] == 1).collect(),
        };
        self.with_layout(self.layout.squeeze(&axes)?)
    }

    /// Fails with [`Error::ReadOnly`] unless the array may be written.
    pub fn check_writable(&self, what: &str) -> Result<()> {
        if self.is_writable() {
            Ok(())
        } else {
            Err(Error::ReadOnly(if self.buffer.is_writable() {
                format!(
                    "{what}: assignment destination is read-only (a view that repeats elements, \
                     such as broadcast_to's; copy it first)"
                )
            } else {
                format!("{what}: assignment destination is read-only (read-only memory)")
            }))
        }
    }
}

impl std::fmt::Debug for Array {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Array(shape={:?}, dtype={}, device={})",
            self.shape(),
            self.dtype,
            self.device()
        )
    }
}

/// The number of elements of `shape`, or an error when it overflows.
pub fn checked_size(shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| Error::Value(format!("shape {shape:?} is too large")))
}

/// Resolves one `-1` in a requested shape.
pub fn infer_shape(shape: &[isize], size: usize) -> Result<Vec<usize>> {
    let unknown: Vec<usize> = (0..shape.len()).filter(|&i| shape[i] == -1).collect();
    if unknown.len() > 1 {
        return Err(Error::Value(
            "can only specify one unknown dimension".into(),
        ));
    }
    if let Some(&d) = shape.iter().find(|&&d| d < -1) {
        return Err(Error::Value(format!("negative dimension {d} in shape")));
    }
    let known: usize = shape
        .iter()
        .filter(|&&d| d >= 0)
        .map(|&d| d as usize)
        .product();
    let mut out: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
    if let Some(&i) = unknown.first() {
        if known == 0 || !size.is_multiple_of(known) {
            return Err(Error::Shape(format!(
                "cannot reshape array of size {size} into shape {shape:?}"
            )));
        }
        out[i] = size / known;
    }
    Ok(out)
}

/// Fails unless every array is on the same device as the first (`op` names the operation).
pub fn same_device(op: &str, arrays: &[&Array]) -> Result<()> {
    if let Some(first) = arrays.first() {
        for a in &arrays[1..] {
            if a.device() != first.device() {
                return Err(Error::DeviceMismatch(format!(
                    "{op}: arrays on {} and {} (move one with to_device)",
                    first.device(),
                    a.device()
                )));
            }
        }
    }
    Ok(())
}
