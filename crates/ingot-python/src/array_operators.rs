//! The operators of `ingot.Array`: each binary operator with its reflected and in-place forms,
//! and the unary ones, generated from one table so that every operator goes through the same
//! two functions (`ops::binary_op`, `ops::inplace_op`).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::ops::{binary_op, inplace_op, unary_named};
use crate::pyarray::PyArray;

fn no_modulo(modulo: &Bound<'_, PyAny>) -> PyResult<()> {
    if modulo.is_none() {
        Ok(())
    } else {
        Err(PyTypeError::new_err(
            "pow() with a modulus is not supported",
        ))
    }
}

/// `$fwd`/`$rev`/`$inplace` dunder methods calling the array API function `$op`.
macro_rules! operators {
    (
        binary { $($fwd:ident, $rev:ident, $inplace:ident => $op:literal;)* }
        power { $pfwd:ident, $prev:ident, $pinplace:ident => $pop:literal; }
        compare { $($cmp:ident => $cop:literal;)* }
        unary { $($un:ident => $uop:literal;)* }
    ) => {
        #[pymethods]
        impl PyArray {
            $(
                fn $fwd<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                    binary_op($op, slf.as_any(), o, false)
                }
                fn $rev<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                    binary_op($op, slf.as_any(), o, true)
                }
                fn $inplace(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<()> {
                    inplace_op($op, slf, o)
                }
            )*
            fn $pfwd<'py>(
                slf: &Bound<'py, Self>,
                o: &Bound<'py, PyAny>,
                modulo: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyAny>> {
                no_modulo(modulo)?;
                binary_op($pop, slf.as_any(), o, false)
            }
            fn $prev<'py>(
                slf: &Bound<'py, Self>,
                o: &Bound<'py, PyAny>,
                modulo: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyAny>> {
                no_modulo(modulo)?;
                binary_op($pop, slf.as_any(), o, true)
            }
            fn $pinplace(
                slf: &Bound<'_, Self>,
                o: &Bound<'_, PyAny>,
                modulo: &Bound<'_, PyAny>,
            ) -> PyResult<()> {
                no_modulo(modulo)?;
                inplace_op($pop, slf, o)
            }
            $(
                fn $cmp<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                    binary_op($cop, slf.as_any(), o, false)
                }
            )*
            $(
                fn $un(&self, py: Python<'_>) -> PyResult<PyArray> {
                    unary_named(py, $uop, &self.inner)
                }
            )*
        }
    };
}

operators! {
    binary {
        __add__, __radd__, __iadd__ => "add";
        __sub__, __rsub__, __isub__ => "subtract";
        __mul__, __rmul__, __imul__ => "multiply";
        __truediv__, __rtruediv__, __itruediv__ => "divide";
        __floordiv__, __rfloordiv__, __ifloordiv__ => "floor_divide";
        __mod__, __rmod__, __imod__ => "remainder";
        __and__, __rand__, __iand__ => "bitwise_and";
        __or__, __ror__, __ior__ => "bitwise_or";
        __xor__, __rxor__, __ixor__ => "bitwise_xor";
        __lshift__, __rlshift__, __ilshift__ => "bitwise_left_shift";
        __rshift__, __rrshift__, __irshift__ => "bitwise_right_shift";
        __matmul__, __rmatmul__, __imatmul__ => "matmul";
    }
    power { __pow__, __rpow__, __ipow__ => "pow"; }
    compare {
        __eq__ => "equal";
        __ne__ => "not_equal";
        __lt__ => "less";
        __le__ => "less_equal";
        __gt__ => "greater";
        __ge__ => "greater_equal";
    }
    unary {
        __neg__ => "negative";
        __pos__ => "positive";
        __abs__ => "abs";
        __invert__ => "bitwise_invert";
    }
}
