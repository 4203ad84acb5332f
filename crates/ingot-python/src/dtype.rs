//! Dtype objects (`ingot.float32`...) and conversions of dtypes and scalars between Python and ingot.

use pyo3::exceptions::{PyAttributeError, PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt, PyString, PyType};

use ingot::{DType, Scalar};

/// A data type. One object per dtype: `x.dtype is ingot.float32` holds.
///
/// Compares equal to itself, to its name (`"float32"`) and to the matching NumPy dtype.
#[pyclass(name = "DType", module = "ingot", frozen)]
pub struct PyDType {
    /// The ingot dtype.
    pub dtype: DType,
}

static DTYPES: PyOnceLock<Vec<Py<PyDType>>> = PyOnceLock::new();

/// The unique Python object of `dtype`.
pub fn py_dtype(py: Python<'_>, dtype: DType) -> PyResult<Bound<'_, PyDType>> {
    let all = DTYPES.get_or_try_init(py, || {
        DType::every()
            .map(|d| Py::new(py, PyDType { dtype: d }))
            .collect::<PyResult<Vec<_>>>()
    })?;
    let i = DType::every()
        .position(|d| d == dtype)
        .expect("every dtype is in DType::every()");
    Ok(all[i].bind(py).clone())
}

/// Converts a dtype argument: an ingot dtype, a name (`"float32"`, `"f4"`), a NumPy dtype or
/// scalar type, or Python's `bool`, `int`, `float`.
pub fn dtype_from_py(obj: &Bound<'_, PyAny>) -> PyResult<DType> {
    if obj.is_none() {
        return Err(PyTypeError::new_err("None is not a dtype"));
    }
    if let Ok(d) = obj.cast::<PyDType>() {
        return Ok(d.get().dtype);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        let name = s.to_cow()?;
        return DType::parse(&name)
            .map_err(|_| PyTypeError::new_err(format!("unknown or unsupported dtype {name:?}")));
    }
    let py = obj.py();
    if let Ok(t) = obj.cast::<PyType>() {
        if t.is(py.get_type::<PyBool>()) {
            return Ok(DType::Bool);
        }
        if t.is(py.get_type::<PyInt>()) {
            return Ok(DType::Int64);
        }
        if t.is(py.get_type::<PyFloat>()) {
            return Ok(DType::Float64);
        }
        if t.is(py.get_type::<PyComplex>()) {
            return Ok(DType::Complex128);
        }
    }
    // NumPy dtypes and scalar types (and ml_dtypes' bfloat16): go through `numpy.dtype(obj).name`.
    let np_dtype = py
        .import("numpy")
        .and_then(|np| np.getattr("dtype"))
        .and_then(|f| f.call1((obj,)));
    if let Ok(d) = np_dtype {
        if let Ok(name) = d.getattr("name").and_then(|n| n.extract::<String>()) {
            if let Ok(dt) = DType::parse(&name) {
                if d.getattr("byteorder")
                    .and_then(|b| b.extract::<String>())
                    .is_ok_and(|b| b != ">")
                {
                    return Ok(dt);
                }
            }
            return Err(PyTypeError::new_err(format!(
                "dtype {name} is not supported by ingot"
            )));
        }
    }
    Err(PyTypeError::new_err(format!(
        "cannot interpret {} as an ingot dtype",
        obj.repr().map(|r| r.to_string()).unwrap_or_default()
    )))
}

/// The category name of a dtype, as used by `isdtype`.
fn kind_name(d: DType) -> &'static str {
    match d.kind() {
        ingot::dtype::Kind::Bool => "bool",
        ingot::dtype::Kind::SignedInt => "signed integer",
        ingot::dtype::Kind::UnsignedInt => "unsigned integer",
        ingot::dtype::Kind::Float => "real floating",
        ingot::dtype::Kind::Complex => "complex floating",
    }
}

#[pymethods]
impl PyDType {
    /// Looks up a dtype by anything [`dtype_from_py`] accepts (`ingot.DType("float32")`).
    #[new]
    fn new(py: Python<'_>, spec: &Bound<'_, PyAny>) -> PyResult<Py<PyDType>> {
        Ok(py_dtype(py, dtype_from_py(spec)?)?.unbind())
    }

    /// The canonical name (`"float32"`).
    #[getter]
    fn name(&self) -> &'static str {
        self.dtype.name()
    }

    /// Bytes per element.
    #[getter]
    fn itemsize(&self) -> usize {
        self.dtype.size()
    }

    /// `"bool"`, `"signed integer"`, `"unsigned integer"`, `"real floating"` or
    /// `"complex floating"`.
    #[getter]
    fn kind(&self) -> &'static str {
        kind_name(self.dtype)
    }

    /// The matching NumPy dtype (bfloat16 needs the `ml_dtypes` package).
    #[getter]
    fn numpy_dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let np_dtype = py.import("numpy")?.getattr("dtype")?;
        if self.dtype == DType::BFloat16 {
            let ml = py.import("ml_dtypes").map_err(|_| {
                PyAttributeError::new_err(
                    "bfloat16 has no NumPy dtype unless the ml_dtypes package is installed",
                )
            })?;
            return np_dtype.call1((ml.getattr("bfloat16")?,));
        }
        np_dtype.call1((self.dtype.name(),))
    }

    /// NumPy reads this attribute, so `numpy.dtype(ingot.float32)` works and NumPy dtypes
    /// compare equal to ingot dtypes.
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.numpy_dtype(py)
    }

    fn __repr__(&self) -> String {
        format!("ingot.{}", self.dtype.name())
    }

    fn __str__(&self) -> &'static str {
        self.dtype.name()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        if other.is_none() {
            return false;
        }
        dtype_from_py(other).is_ok_and(|d| d == self.dtype)
    }

    fn __ne__(&self, other: &Bound<'_, PyAny>) -> bool {
        !self.__eq__(other)
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        PyString::new(py, self.dtype.name()).hash()
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyType>, (&'static str,))> {
        Ok((py.get_type::<PyDType>(), (self.dtype.name(),)))
    }

    /// The dtype both operands promote to (array API promotion).
    fn _promote<'py>(
        &self,
        py: Python<'py>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDType>> {
        py_dtype(py, self.dtype.promote(dtype_from_py(other)?))
    }

    /// `(bits, eps, max, min, smallest_normal, smallest_subnormal)` of a float dtype.
    fn _finfo(&self) -> PyResult<(u32, f64, f64, f64, f64, f64)> {
        let i = self.dtype.finfo().map_err(crate::errors::to_py)?;
        Ok((
            i.bits,
            i.eps,
            i.max,
            i.min,
            i.smallest_normal,
            i.smallest_subnormal,
        ))
    }

    /// `(bits, min, max)` of an integer dtype.
    fn _iinfo(&self) -> PyResult<(u32, i128, i128)> {
        let i = self.dtype.iinfo().map_err(crate::errors::to_py)?;
        Ok((i.bits, i.min, i.max))
    }
}

/// Converts a Python `bool`, `int`, `float` or `complex` to a [`Scalar`]; `None` for other objects.
/// A Python int outside the 64-bit range raises `OverflowError`.
pub fn scalar_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Option<Scalar>> {
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Some(Scalar::Bool(b.is_true())));
    }
    if obj.cast::<PyInt>().is_ok() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Some(Scalar::Int(i)));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Some(Scalar::UInt(u)));
        }
        return Err(PyOverflowError::new_err(format!(
            "Python integer {} is out of range for every ingot dtype",
            obj.str()?
        )));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Some(Scalar::Float(f.value())));
    }
    if let Ok(z) = obj.cast::<PyComplex>() {
        return Ok(Some(Scalar::Complex(z.real(), z.imag())));
    }
    Ok(None)
}

/// Raises `OverflowError` unless the Python scalar `value` fits `dtype` (NumPy 2's rule).
pub fn check_fits(value: Scalar, dtype: DType) -> PyResult<()> {
    if value.fits(dtype) {
        Ok(())
    } else {
        let v = match value {
            Scalar::Int(i) => i.to_string(),
            Scalar::UInt(u) => u.to_string(),
            _ => String::new(),
        };
        Err(PyOverflowError::new_err(format!(
            "Python integer {v} out of bounds for {dtype}"
        )))
    }
}

/// Converts a [`Scalar`] read from an array of `dtype` to a Python `bool`, `int` or `float`.
pub fn scalar_to_py(py: Python<'_>, value: Scalar, dtype: DType) -> PyResult<Bound<'_, PyAny>> {
    Ok(match value {
        Scalar::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
        Scalar::Int(i) if dtype == DType::Bool => PyBool::new(py, i != 0).to_owned().into_any(),
        Scalar::Int(i) => i.into_pyobject(py)?.into_any(),
        Scalar::UInt(u) => u.into_pyobject(py)?.into_any(),
        Scalar::Float(f) => PyFloat::new(py, f).into_any(),
        Scalar::Complex(re, im) => PyComplex::from_doubles(py, re, im).into_any(),
    })
}

/// Adds `DType` and the dtype constants (`bool`, `int8`... `float64`) to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDType>()?;
    for d in DType::every() {
        m.add(d.name(), py_dtype(m.py(), d)?)?;
    }
    Ok(())
}
