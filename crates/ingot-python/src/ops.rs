//! Array operations: elementwise, reductions, matmul. Arguments are converted, the GIL is
//! released around the computation, errors are mapped by `errors.rs`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;

use ingot::ops::{self, BinaryOp, ReduceOp, UnaryOp};
use ingot::{Array, DType, Scalar};

use crate::creation::{numpy_to_array, GpuAlias};
use crate::dtype::{check_fits, dtype_from_py, scalar_from_py};
use crate::errors::{compute, detached, IntoPyResult};
use crate::pyarray::{axes_from_py, PyArray};

/// Whether `obj` is a NumPy array or NumPy scalar.
fn is_numpy(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let t = obj.get_type();
    let module: String = t.getattr("__module__")?.extract().unwrap_or_default();
    Ok(module == "numpy" && obj.hasattr("__array_interface__")?)
}

/// A Python scalar as a 0-d array of the dtype it takes next to an array of `dtype`
/// (the array API's weak-scalar rule), on `device`.
pub fn scalar_array(value: Scalar, dtype: DType, device: ingot::Device) -> PyResult<Array> {
    let d = ops::op::scalar_dtype(dtype, value).or_else(|e| match e {
        ingot::Error::Value(_) => check_fits(value, dtype).map(|_| dtype),
        other => Err(crate::errors::to_py(other)),
    })?;
    Array::scalar(value, d, device).py_err()
}

/// Converts an operand next to `like`: an ingot array, a Python scalar (weakly typed; with
/// `exact_dtype`, converted to `like`'s dtype as assignment does), or a NumPy array/scalar (used
/// in place on the CPU, copied to a GPU). `None` for anything else.
pub fn operand_like(
    obj: &Bound<'_, PyAny>,
    like: &Array,
    exact_dtype: bool,
) -> PyResult<Option<Array>> {
    if let Ok(a) = obj.cast::<PyArray>() {
        return Ok(Some(a.get().inner.clone()));
    }
    if let Some(s) = scalar_from_py(obj)? {
        if exact_dtype {
            if like.dtype().is_integer() {
                if let Scalar::Float(_) = s {
                    // NumPy truncates floats assigned into integer arrays.
                } else {
                    check_fits(s, like.dtype())?;
                }
            }
            return Array::scalar(s, like.dtype(), like.device())
                .py_err()
                .map(Some);
        }
        return scalar_array(s, like.dtype(), like.device()).map(Some);
    }
    if is_numpy(obj)? {
        // Copied to a GPU: the operation is queued, and a later write to the NumPy array must not
        // change its result.
        return numpy_to_array(obj, None, like.device(), GpuAlias::Copy).map(Some);
    }
    Ok(None)
}

fn binary_name(name: &str) -> PyResult<BinaryOp> {
    BinaryOp::from_name(name)
        .ok_or_else(|| PyValueError::new_err(format!("unknown binary operation {name:?}")))
}

/// `a <op> b` for the operators of `ingot.Array`: `NotImplemented` for operands of other types.
pub fn binary_op<'py>(
    name: &str,
    slf: &Bound<'py, PyAny>,
    other: &Bound<'py, PyAny>,
    reflected: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let py = slf.py();
    let a = slf.cast::<PyArray>()?.get().inner.clone();
    let Some(b) = operand_like(other, &a, false)? else {
        return Ok(py.NotImplemented().into_bound(py));
    };
    let (x, y) = if reflected { (b, a) } else { (a, b) };
    let (device, work) = (x.device(), x.size().max(y.size()));
    let r = if name == "matmul" {
        detached(py, move || ops::matmul(&x, &y))?
    } else {
        let op = binary_name(name)?;
        compute(py, device, work, move || ops::binary(op, &x, &y))?
    };
    PyArray::from(r).into_bound_py_any(py)
}

fn same_kind(from: DType, to: DType) -> bool {
    from.can_cast_same_kind(to)
}

/// `a <op>= b`: writes into `a`'s buffer. The result must have `a`'s shape and cast to `a`'s dtype
/// under NumPy's `same_kind` rule.
pub fn inplace_op(name: &str, slf: &Bound<'_, PyArray>, other: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = slf.py();
    let a = slf.get().inner.clone();
    let Some(b) = operand_like(other, &a, false)? else {
        return Err(PyTypeError::new_err(format!(
            "unsupported operand type for in-place {name}: {}",
            other.get_type().name()?
        )));
    };
    a.check_writable(name).py_err()?;
    let op = if name == "matmul" {
        None
    } else {
        Some(binary_name(name)?)
    };
    let work = a.size().max(b.size());
    let device = a.device();
    compute(py, device, work, move || {
        let Some(op) = op else {
            let r = ops::matmul(&a, &b)?;
            if r.shape() != a.shape() {
                return Err(ingot::Error::Shape(format!(
                    "in-place {name}: the result of shape {:?} does not fit the array of shape {:?}",
                    r.shape(),
                    a.shape()
                )));
            }
            if !same_kind(r.dtype(), a.dtype()) {
                return Err(ingot::Error::Type(format!(
                    "cannot store the {} result of in-place {name} in an array of {}",
                    r.dtype(),
                    a.dtype()
                )));
            }
            return a.assign(&r);
        };
        let (_, result) = op.dtypes(a.dtype(), b.dtype())?;
        if !same_kind(result, a.dtype()) {
            return Err(ingot::Error::Type(format!(
                "cannot store the {result} result of in-place {} in an array of {}",
                op.name(),
                a.dtype()
            )));
        }
        // One pass into `a` (through a temporary only when `b` overlaps `a` differently).
        ops::binary_into(op, &a, &b, &a)
    })
}

/// Applies the unary op `name` to `x`.
pub fn unary_named(py: Python<'_>, name: &str, x: &Array) -> PyResult<PyArray> {
    let op = UnaryOp::from_name(name)
        .ok_or_else(|| PyValueError::new_err(format!("unknown unary operation {name:?}")))?;
    let x = x.clone();
    let (device, work) = (x.device(), x.size());
    Ok(compute(py, device, work, move || ops::unary(op, &x))?.into())
}

/// `name(x)` for an elementwise function of one array.
#[pyfunction]
fn unary(py: Python<'_>, name: &str, x: &PyArray) -> PyResult<PyArray> {
    unary_named(py, name, &x.inner)
}

/// Two operands of a function: at least one must be an array; Python scalars are weak.
fn two_operands(
    x1: &Bound<'_, PyAny>,
    x2: &Bound<'_, PyAny>,
    what: &str,
) -> PyResult<(Array, Array)> {
    let first = x1.cast::<PyArray>().ok().map(|a| a.get().inner.clone());
    let second = x2.cast::<PyArray>().ok().map(|a| a.get().inner.clone());
    let conv = |obj: &Bound<'_, PyAny>, like: &Array| -> PyResult<Array> {
        operand_like(obj, like, false)?.ok_or_else(|| {
            PyTypeError::new_err(format!(
                "{what}: expected an ingot array or a Python scalar, got {}",
                obj.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })
    };
    match (first, second) {
        (Some(a), Some(b)) => Ok((a, b)),
        (Some(a), None) => {
            let b = conv(x2, &a)?;
            Ok((a, b))
        }
        (None, Some(b)) => {
            let a = conv(x1, &b)?;
            Ok((a, b))
        }
        (None, None) => Err(PyTypeError::new_err(format!(
            "{what}: at least one argument must be an ingot array"
        ))),
    }
}

/// `name(x1, x2)` for an elementwise function of two operands (arrays or Python scalars).
#[pyfunction]
fn binary(
    py: Python<'_>,
    name: &str,
    x1: &Bound<'_, PyAny>,
    x2: &Bound<'_, PyAny>,
) -> PyResult<PyArray> {
    let op = binary_name(name)?;
    let (a, b) = two_operands(x1, x2, name)?;
    let (device, work) = (a.device(), a.size().max(b.size()));
    Ok(compute(py, device, work, move || ops::binary(op, &a, &b))?.into())
}

/// `x1 <op>= x2`, writing into `x1`.
#[pyfunction]
fn binary_inplace(name: &str, x1: &Bound<'_, PyArray>, x2: &Bound<'_, PyAny>) -> PyResult<()> {
    inplace_op(name, x1, x2)
}

/// `condition ? x1 : x2` elementwise.
#[pyfunction]
fn where_(
    py: Python<'_>,
    condition: &PyArray,
    x1: &Bound<'_, PyAny>,
    x2: &Bound<'_, PyAny>,
) -> PyResult<PyArray> {
    let (a, b) = two_operands(x1, x2, "where")?;
    let c = condition.inner.clone();
    Ok(detached(py, move || ops::where_(&c, &a, &b))?.into())
}

/// Clamps `x` to `[min, max]`; bounds are arrays, Python scalars or None.
#[pyfunction]
#[pyo3(signature = (x, min = None, max = None))]
fn clip(
    py: Python<'_>,
    x: &PyArray,
    min: Option<&Bound<'_, PyAny>>,
    max: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let bound = |b: Option<&Bound<'_, PyAny>>| -> PyResult<Option<Array>> {
        match b {
            None => Ok(None),
            Some(o) if o.is_none() => Ok(None),
            Some(o) => {
                if let Some(s) = scalar_from_py(o)? {
                    return Array::scalar(s, x.inner.dtype(), x.inner.device())
                        .py_err()
                        .map(Some);
                }
                operand_like(o, &x.inner, false)?
                    .ok_or_else(|| {
                        PyTypeError::new_err("clip bounds must be arrays, Python scalars or None")
                    })
                    .map(Some)
            }
        }
    };
    let (lo, hi) = (bound(min)?, bound(max)?);
    let a = x.inner.clone();
    Ok(detached(py, move || ops::clip(&a, lo.as_ref(), hi.as_ref()))?.into())
}

/// Reduces `x` over `axis` (None, an int or a tuple).
#[pyfunction]
#[pyo3(signature = (name, x, axis = None, keepdims = false, correction = 0.0))]
fn reduce(
    py: Python<'_>,
    name: &str,
    x: &PyArray,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
    correction: f64,
) -> PyResult<PyArray> {
    let op = match name {
        "sum" => ReduceOp::Sum,
        "prod" => ReduceOp::Prod,
        "min" => ReduceOp::Min,
        "max" => ReduceOp::Max,
        "argmin" => ReduceOp::ArgMin,
        "argmax" => ReduceOp::ArgMax,
        "all" => ReduceOp::All,
        "any" => ReduceOp::Any,
        "count_nonzero" => ReduceOp::CountNonzero,
        "mean" => ReduceOp::Mean,
        "var" => ReduceOp::Var { correction },
        "std" => ReduceOp::Std { correction },
        _ => return Err(PyValueError::new_err(format!("unknown reduction {name:?}"))),
    };
    let axes = axes_from_py(axis)?;
    let a = x.inner.clone();
    Ok(detached(py, move || ops::reduce(op, &a, axes.as_deref(), keepdims))?.into())
}

/// Cumulative sum along `axis` (None: the flattened array), optionally in `dtype`.
#[pyfunction]
#[pyo3(signature = (x, axis = None, dtype = None))]
fn cumsum(
    py: Python<'_>,
    x: &PyArray,
    axis: Option<isize>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let d = match dtype {
        Some(d) if !d.is_none() => Some(dtype_from_py(d)?),
        _ => None,
    };
    let a = x.inner.clone();
    Ok(detached(py, move || ops::cumsum(&a, axis, d))?.into())
}

/// Cumulative `name` (`"cumsum"` or `"cumprod"`) along `axis` (None: the flattened array),
/// optionally in `dtype`.
#[pyfunction]
#[pyo3(signature = (name, x, axis = None, dtype = None))]
fn cumulative(
    py: Python<'_>,
    name: &str,
    x: &PyArray,
    axis: Option<isize>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let op = match name {
        "cumsum" => ops::ScanOp::Sum,
        "cumprod" => ops::ScanOp::Prod,
        _ => {
            return Err(PyValueError::new_err(format!(
                "unknown cumulative operation {name:?}"
            )))
        }
    };
    let d = match dtype {
        Some(d) if !d.is_none() => Some(dtype_from_py(d)?),
        _ => None,
    };
    let a = x.inner.clone();
    Ok(detached(py, move || ops::cumulative(op, &a, axis, d))?.into())
}

/// Matrix product with the array API's rules (batched, broadcasting).
#[pyfunction]
fn matmul(py: Python<'_>, x1: &PyArray, x2: &PyArray) -> PyResult<PyArray> {
    let (a, b) = (x1.inner.clone(), x2.inner.clone());
    Ok(detached(py, move || ops::matmul(&a, &b))?.into())
}

/// The dtype a Python scalar takes next to an array of `dtype` (raises when it does not fit).
#[pyfunction]
fn scalar_dtype<'py>(
    py: Python<'py>,
    dtype: &Bound<'py, PyAny>,
    value: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, crate::dtype::PyDType>> {
    let d = dtype_from_py(dtype)?;
    let s = scalar_from_py(value)?
        .ok_or_else(|| PyTypeError::new_err("expected a Python bool, int or float"))?;
    let r = ops::op::scalar_dtype(d, s).or_else(|e| match e {
        ingot::Error::Value(_) => check_fits(s, d).map(|_| d),
        other => Err(crate::errors::to_py(other)),
    })?;
    crate::dtype::py_dtype(py, r)
}

/// `(computation dtype, result dtype)` of the elementwise op `name` (`kind` is `"unary"` or
/// `"binary"`) for inputs of `a` (and `b`): the dtypes the built-in op converts its inputs to and
/// returns, which `ingot.fuse` reproduces in generated kernels.
#[pyfunction]
#[pyo3(signature = (kind, name, a, b = None))]
fn _op_dtypes<'py>(
    py: Python<'py>,
    kind: &str,
    name: &str,
    a: &Bound<'py, PyAny>,
    b: Option<&Bound<'py, PyAny>>,
) -> PyResult<(
    Bound<'py, crate::dtype::PyDType>,
    Bound<'py, crate::dtype::PyDType>,
)> {
    let a = dtype_from_py(a)?;
    let (c, r) = match (kind, b) {
        ("unary", None) => UnaryOp::from_name(name)
            .ok_or_else(|| PyValueError::new_err(format!("unknown unary op {name:?}")))?
            .dtypes(a)
            .py_err()?,
        ("binary", Some(b)) => BinaryOp::from_name(name)
            .ok_or_else(|| PyValueError::new_err(format!("unknown binary op {name:?}")))?
            .dtypes(a, dtype_from_py(b)?)
            .py_err()?,
        _ => {
            return Err(PyValueError::new_err(
                "kind must be \"unary\" (one dtype) or \"binary\" (two dtypes)",
            ))
        }
    };
    Ok((
        crate::dtype::py_dtype(py, c)?,
        crate::dtype::py_dtype(py, r)?,
    ))
}

/// `real`, `imag` or `conj` of `x` (a copy; real inputs give themselves, zeros, themselves).
#[pyfunction]
fn complex_part(py: Python<'_>, name: &str, x: &PyArray) -> PyResult<PyArray> {
    let x = x.inner.clone();
    let f: fn(&Array) -> ingot::Result<Array> = match name {
        "real" => ops::real,
        "imag" => ops::imag,
        "conj" => ops::conj,
        _ => {
            return Err(PyValueError::new_err(format!(
                "unknown complex function {name:?}"
            )))
        }
    };
    Ok(detached(py, move || f(&x))?.into())
}

/// Adds the operation functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(unary, m)?)?;
    m.add_function(wrap_pyfunction!(binary, m)?)?;
    m.add_function(wrap_pyfunction!(binary_inplace, m)?)?;
    m.add_function(wrap_pyfunction!(where_, m)?)?;
    m.add_function(wrap_pyfunction!(clip, m)?)?;
    m.add_function(wrap_pyfunction!(reduce, m)?)?;
    m.add_function(wrap_pyfunction!(cumsum, m)?)?;
    m.add_function(wrap_pyfunction!(cumulative, m)?)?;
    m.add_function(wrap_pyfunction!(matmul, m)?)?;
    m.add_function(wrap_pyfunction!(scalar_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(_op_dtypes, m)?)?;
    m.add_function(wrap_pyfunction!(complex_part, m)?)?;
    Ok(())
}
