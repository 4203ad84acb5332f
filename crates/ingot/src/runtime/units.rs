//! Compilation per entry point for the engines that translate MSL (CPU, CUDA).
//!
//! A [`LazyLibrary`] reflects the source once and compiles nothing. Asking for entry points
//! translates a unit holding only them (`ingot_msl::Options::entries`: the other kernels'
//! definitions are left out, so the compiler neither spends time on them nor sees their
//! errors), with the function constants of that request, and hands the text to the engine's
//! [`UnitCompiler`] (which keeps its own disk cache, keyed by the translated text). Units are
//! kept in memory by (entry points, constants); two threads asking for the same unit compile
//! it once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::kernel::{
    merged_constants, translation_error, CompileOptions, CompiledEntry, CompiledFunction,
    CompiledLibrary, Constants, MathMode,
};
use crate::error::{Error, Result};

/// The part of an engine that turns one translated unit into launchable functions.
pub trait UnitCompiler: Send + Sync {
    /// Compiles `t` (or loads it from the engine's caches) and returns the functions of
    /// `names`, in that order (each is one of `t.entries`).
    fn compile_unit(
        &self,
        t: &ingot_msl::Translation,
        options: &CompileOptions,
        names: &[String],
    ) -> Result<Vec<Arc<dyn CompiledFunction>>>;
}

type Slot = Arc<Mutex<Option<Vec<CompiledEntry>>>>;

/// A reflected library whose units are compiled on demand.
pub struct LazyLibrary {
    compiler: Arc<dyn UnitCompiler>,
    target: ingot_msl::Target,
    source: String,
    options: CompileOptions,
    module: ingot_msl::Module,
    units: Mutex<HashMap<String, Slot>>,
}

impl LazyLibrary {
    /// Reflects `source` (include folders searched, the options' constants applied).
    pub fn new(
        compiler: Arc<dyn UnitCompiler>,
        target: ingot_msl::Target,
        source: &str,
        options: &CompileOptions,
    ) -> Result<LazyLibrary> {
        let mut o = msl_options(target, options);
        o.constants = merged_constants(&options.constants, &Constants::new());
        let module = ingot_msl::reflect_with(source, &o).map_err(translation_error)?;
        Ok(LazyLibrary {
            compiler,
            target,
            source: source.to_string(),
            options: options.clone(),
            module,
            units: Mutex::new(HashMap::new()),
        })
    }

    fn slot(&self, key: &str) -> Slot {
        let mut m = self.units.lock().unwrap_or_else(|p| p.into_inner());
        m.entry(key.to_string()).or_default().clone()
    }

    fn build(&self, names: &[String], constants: &Constants) -> Result<Vec<CompiledEntry>> {
        let mut o = msl_options(self.target, &self.options);
        o.constants = merged_constants(&self.options.constants, constants);
        o.entries = Some(names.to_vec());
        let who = match names {
            [one] => format!("kernel `{one}`"),
            _ => format!("kernels {}", names.join(", ")),
        };
        let t = ingot_msl::translate(&self.source, &o).map_err(|e| {
            // The translator's own message names the entry for missing constants.
            match translation_error(e) {
                Error::Compile(m) => Error::Compile(format!("{who}: {m}")),
                other => other,
            }
        })?;
        let functions = self
            .compiler
            .compile_unit(&t, &self.options, names)
            .map_err(|e| match e {
                Error::Compile(m) => Error::Compile(format!("{who}: {m}")),
                other => other,
            })?;
        names
            .iter()
            .zip(functions)
            .map(|(n, function)| {
                let entry = t.module.entry(n).cloned().ok_or_else(|| {
                    Error::Compile(format!("kernel `{n}` missing from its translation"))
                })?;
                Ok(CompiledEntry { entry, function })
            })
            .collect()
    }
}

/// The translator's options for `options` (no constants, every entry point).
fn msl_options(target: ingot_msl::Target, options: &CompileOptions) -> ingot_msl::Options {
    let mut o = ingot_msl::Options::new(target);
    o.file_name = options.file().to_string();
    o.fast_math = options.math_mode == MathMode::Fast;
    o.include_dirs = options.include_dirs.clone();
    o.checked = options.checked;
    o.work_items = crate::runtime::kernel::cpu_work_items();
    o.defines = options.defines.clone();
    o
}

/// The memory-cache key of a unit: its entry points and constants.
fn unit_key(names: &[String], constants: &Constants) -> String {
    let mut k = names.join(",");
    for (n, v) in constants {
        k.push_str(&format!("\0{n}={}", super::kernel::constant_literal(*v)));
    }
    k
}

impl CompiledLibrary for LazyLibrary {
    fn module(&self) -> &ingot_msl::Module {
        &self.module
    }

    fn unit(&self, names: &[String], constants: &Constants) -> Result<Vec<CompiledEntry>> {
        let slot = self.slot(&unit_key(names, constants));
        // Held while compiling: a second caller of the same unit waits for the first.
        let mut guard = slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(v) = guard.as_ref() {
            return Ok(v.clone());
        }
        let v = self.build(names, constants)?;
        *guard = Some(v.clone());
        Ok(v)
    }

    fn units(&self) -> usize {
        let m = self.units.lock().unwrap_or_else(|p| p.into_inner());
        m.values()
            .filter(|s| s.try_lock().map(|g| g.is_some()).unwrap_or(false))
            .count()
    }
}
