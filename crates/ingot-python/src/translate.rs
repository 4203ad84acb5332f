//! `translate`: what an MSL source becomes on a target (CUDA C++ or host C++), without
//! compiling it or needing the target's device. `python -m ingot translate` prints the text and
//! `python -m ingot check` reads the reflection.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use ingot::kernel::{CompileOptions, MathMode};
use ingot::translate::{EntryInfo, Target};

use crate::dtype::scalar_from_py;
use crate::errors::{detached, guard, IntoPyResult};
use crate::kernel::{defines_from_py, PyKernelParameter};

/// The translation of an MSL source for one target.
#[pyclass(name = "Translation", module = "ingot", frozen)]
pub struct PyTranslation {
    inner: ingot::translate::Translation,
}

fn entry_dict<'py>(py: Python<'py>, e: &EntryInfo) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", &e.name)?;
    d.set_item("symbol", &e.symbol)?;
    d.set_item("cpu_mode", &e.cpu_mode)?;
    d.set_item("file", &e.file)?;
    d.set_item("line", e.line)?;
    let params = PyList::empty(py);
    for p in &e.params {
        params.append(Py::new(py, PyKernelParameter::new(p.clone()))?)?;
    }
    d.set_item("parameters", params)?;
    d.set_item(
        "max_total_threads_per_threadgroup",
        e.max_total_threads_per_threadgroup,
    )?;
    d.set_item("static_threadgroup_decls", e.static_threadgroup_decls)?;
    Ok(d)
}

#[pymethods]
impl PyTranslation {
    /// `"cuda"` or `"cpu"`.
    #[getter]
    fn target(&self) -> &'static str {
        self.inner.target.name()
    }

    /// The C++ translation unit.
    #[getter]
    fn text(&self) -> &str {
        &self.inner.text
    }

    /// The entry points in source order: dicts with `name`, `symbol`, `file`, `line`,
    /// `parameters` (a list of `KernelParameter`), `max_total_threads_per_threadgroup` (None
    /// when the kernel does not declare it) and `static_threadgroup_decls`.
    #[getter]
    fn entries<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.inner
            .entries
            .iter()
            .map(|e| entry_dict(py, e))
            .collect()
    }

    /// The function constants: dicts with `name`, `type`, `index` (None when not a literal)
    /// and `line`.
    #[getter]
    fn function_constants<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.inner
            .function_constants
            .iter()
            .map(|c| {
                let d = PyDict::new(py);
                d.set_item("name", &c.name)?;
                d.set_item("type", &c.ty)?;
                d.set_item("index", c.index)?;
                d.set_item("line", c.line)?;
                Ok(d)
            })
            .collect()
    }

    fn __repr__(&self) -> String {
        let names: Vec<&str> = self.inner.entries.iter().map(|e| e.name.as_str()).collect();
        format!(
            "<ingot.Translation for {} [{}], {} lines>",
            self.inner.target,
            names.join(", "),
            self.inner.text.lines().count()
        )
    }
}

/// Translates MSL `source` for `target` (`"cuda"` or `"cpu"`) as the backend of that target
/// would before compiling it; no device is needed. `constants`, `math_mode`, `include_dirs`,
/// `file_name` and `defines` are those of `compile`. Raises `CompileError` (with
/// `file:line:column: error: message`) or `KernelArgumentError` (function constants).
///
/// >>> import ingot
/// >>> t = ingot.translate("""
/// ... kernel void twice(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
/// ...     x[i] *= 2;
/// ... }""", "cuda")
/// >>> "__global__" in t.text
/// True
/// >>> [(p.name, p.kind, p.index) for p in t.entries[0]["parameters"]]
/// [('x', 'buffer', 0), ('i', 'builtin', None)]
#[pyfunction]
#[pyo3(signature = (source, target, *, constants = None, math_mode = "precise", include_dirs = None, file_name = None, defines = None))]
#[allow(clippy::too_many_arguments)]
fn translate(
    py: Python<'_>,
    source: &str,
    target: &str,
    constants: Option<&Bound<'_, PyDict>>,
    math_mode: &str,
    include_dirs: Option<&Bound<'_, PyAny>>,
    file_name: Option<String>,
    defines: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTranslation> {
    guard(|| {
        let target = Target::parse(target).ok_or_else(|| {
            PyValueError::new_err(format!("unknown target {target:?} (\"cuda\" or \"cpu\")"))
        })?;
        let mut opts = CompileOptions {
            math_mode: MathMode::parse(math_mode).py_err()?,
            file_name: file_name.unwrap_or_default(),
            defines: defines_from_py(defines)?,
            ..Default::default()
        };
        if let Some(c) = constants {
            for (k, v) in c.iter() {
                let key = match k.extract::<u32>() {
                    Ok(i) => i.to_string(),
                    Err(_) => k.extract::<String>().map_err(|_| {
                        PyTypeError::new_err("constants keys must be names (str) or indices (int)")
                    })?,
                };
                let val = scalar_from_py(&v)?.ok_or_else(|| {
                    PyTypeError::new_err(format!(
                        "function constant {key:?}: value must be a bool, int or float"
                    ))
                })?;
                opts.constants.insert(key, val);
            }
        }
        if let Some(dirs) = include_dirs {
            let list: Vec<Bound<'_, PyAny>> = if dirs.is_instance_of::<pyo3::types::PyString>() {
                vec![dirs.clone()]
            } else {
                dirs.try_iter()?.collect::<PyResult<_>>()?
            };
            let fspath = py.import("os")?.getattr("fspath")?;
            for d in list {
                let s: String = fspath
                    .call1((d,))?
                    .extract()
                    .map_err(|_| PyValueError::new_err("include_dirs must be paths"))?;
                opts.include_dirs.push(s.into());
            }
        }
        let src = source.to_string();
        let inner = detached(py, move || ingot::translate::translate(&src, target, &opts))?;
        Ok(PyTranslation { inner })
    })
}

/// Adds `translate` and `Translation` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(translate, m)?)?;
    m.add_class::<PyTranslation>()?;
    Ok(())
}
