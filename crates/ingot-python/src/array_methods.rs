//! The methods of `ingot.Array` that mirror namespace functions (`x.sum(axis=0)` is
//! `ingot.sum(x, axis=0)`), generated from one list: each calls the `ingot` function, so there is
//! one implementation of each.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::pyarray::{delegate, PyArray};

macro_rules! namespace_methods {
    ($($name:ident),* $(,)?) => {
        #[pymethods]
        impl PyArray {
            $(
                #[doc = concat!("Same as `ingot.", stringify!($name), "(self, ...)`.")]
                #[pyo3(signature = (*args, **kwargs))]
                fn $name<'py>(
                    slf: &Bound<'py, Self>,
                    args: &Bound<'py, PyTuple>,
                    kwargs: Option<&Bound<'py, PyDict>>,
                ) -> PyResult<Bound<'py, PyAny>> {
                    delegate(slf, "ingot", stringify!($name), args, kwargs)
                }
            )*
        }
    };
}

namespace_methods!(
    sum,
    prod,
    mean,
    var,
    std,
    min,
    max,
    argmin,
    argmax,
    all,
    any,
    cumsum,
    cumulative_sum,
    clip,
    round,
);
