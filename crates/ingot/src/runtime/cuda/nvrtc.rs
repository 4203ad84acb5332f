//! Compiling CUDA C++ to a cubin for the device's own architecture with NVRTC.

use std::ffi::{c_char, CStr, CString};

use cudarc::nvrtc::sys;

use crate::error::{Error, Result};

/// True when the NVRTC library can be loaded.
pub fn present() -> bool {
    // SAFETY: only probes for the shared library.
    unsafe { sys::is_culib_present() }
}

/// NVRTC's version as `(major, minor)`.
pub fn version() -> Result<(i32, i32)> {
    if !present() {
        return Err(missing());
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: plain out-parameters.
    let r = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    status(r, "nvrtcVersion")?;
    Ok((major, minor))
}

fn missing() -> Error {
    Error::DeviceUnavailable(
        "NVRTC (libnvrtc) was not found: install the CUDA toolkit's NVRTC or the \
         nvidia-cuda-nvrtc wheel to compile kernels for CUDA devices"
            .into(),
    )
}

fn status(r: sys::nvrtcResult, what: &str) -> Result<()> {
    if r == sys::nvrtcResult::NVRTC_SUCCESS {
        return Ok(());
    }
    // SAFETY: nvrtcGetErrorString returns a static string.
    let msg = unsafe { CStr::from_ptr(sys::nvrtcGetErrorString(r)) }
        .to_string_lossy()
        .into_owned();
    Err(Error::Device(format!("{what}: {msg}")))
}

fn cstring(s: &str, what: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::Compile(format!("{what} contains a NUL byte")))
}

/// Compiles `source` (named `name` in messages) with in-memory `headers` to a cubin for
/// `sm_<arch>`. A compile error becomes [`Error::Compile`] carrying NVRTC's log, whose
/// locations are the user's file and lines thanks to the translation's `#line` directives.
pub fn compile_cubin(
    source: &str,
    name: &str,
    headers: &[(&str, &str)],
    arch: (i32, i32),
    options: &[String],
) -> Result<Vec<u8>> {
    if !present() {
        return Err(missing());
    }
    let src = cstring(source, "the kernel source")?;
    let cname = cstring(name, "the file name")?;
    let header_texts: Vec<CString> = headers
        .iter()
        .map(|(_, text)| cstring(text, "a prelude header"))
        .collect::<Result<_>>()?;
    let header_names: Vec<CString> = headers
        .iter()
        .map(|(n, _)| cstring(n, "a prelude header name"))
        .collect::<Result<_>>()?;
    let text_ptrs: Vec<*const c_char> = header_texts.iter().map(|c| c.as_ptr()).collect();
    let name_ptrs: Vec<*const c_char> = header_names.iter().map(|c| c.as_ptr()).collect();
    let mut prog: sys::nvrtcProgram = std::ptr::null_mut();
    // SAFETY: every pointer refers to a CString that outlives the program.
    status(
        unsafe {
            sys::nvrtcCreateProgram(
                &mut prog,
                src.as_ptr(),
                cname.as_ptr(),
                headers.len() as i32,
                text_ptrs.as_ptr(),
                name_ptrs.as_ptr(),
            )
        },
        "nvrtcCreateProgram",
    )?;
    let result = compile_program(prog, arch, options);
    // SAFETY: `prog` was created above and is destroyed once.
    unsafe { sys::nvrtcDestroyProgram(&mut prog) };
    result
}

fn compile_program(
    prog: sys::nvrtcProgram,
    arch: (i32, i32),
    options: &[String],
) -> Result<Vec<u8>> {
    let mut opts: Vec<CString> = vec![
        cstring(
            &format!("--gpu-architecture=sm_{}{}", arch.0, arch.1),
            "option",
        )?,
        cstring("-std=c++17", "option")?,
    ];
    for o in options {
        opts.push(cstring(o, "option")?);
    }
    let opt_ptrs: Vec<*const c_char> = opts.iter().map(|c| c.as_ptr()).collect();
    // SAFETY: `prog` is valid; options outlive the call.
    let r = unsafe { sys::nvrtcCompileProgram(prog, opt_ptrs.len() as i32, opt_ptrs.as_ptr()) };
    let log = program_log(prog);
    if r != sys::nvrtcResult::NVRTC_SUCCESS {
        if r == sys::nvrtcResult::NVRTC_ERROR_COMPILATION {
            return Err(Error::Compile(format_log(&log)));
        }
        status(r, "nvrtcCompileProgram")?;
    }
    let mut size = 0usize;
    // SAFETY: `prog` compiled successfully.
    status(
        unsafe { sys::nvrtcGetCUBINSize(prog, &mut size) },
        "nvrtcGetCUBINSize",
    )?;
    let mut cubin = vec![0u8; size];
    status(
        unsafe { sys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr() as *mut c_char) },
        "nvrtcGetCUBIN",
    )?;
    Ok(cubin)
}

fn program_log(prog: sys::nvrtcProgram) -> String {
    let mut size = 0usize;
    // SAFETY: `prog` is valid; the buffer has the reported size.
    if unsafe { sys::nvrtcGetProgramLogSize(prog, &mut size) } != sys::nvrtcResult::NVRTC_SUCCESS
        || size == 0
    {
        return String::new();
    }
    let mut buf = vec![0u8; size];
    if unsafe { sys::nvrtcGetProgramLog(prog, buf.as_mut_ptr() as *mut c_char) }
        != sys::nvrtcResult::NVRTC_SUCCESS
    {
        return String::new();
    }
    String::from_utf8_lossy(&buf)
        .trim_end_matches('\0')
        .to_string()
}

/// Rewrites NVRTC's `file(12): error: msg` as `file:12: error: msg` and drops empty lines.
pub fn format_log(log: &str) -> String {
    let mut out = Vec::new();
    for line in log.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            continue;
        }
        if let Some(open) = line.find('(') {
            if let Some(close_rel) = line[open..].find("): ") {
                let close = open + close_rel;
                let num = &line[open + 1..close];
                if !num.is_empty() && num.bytes().all(|b| b.is_ascii_digit()) {
                    out.push(format!("{}:{}: {}", &line[..open], num, &line[close + 3..]));
                    continue;
                }
            }
        }
        out.push(line.to_string());
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::format_log;

    #[test]
    fn log_locations_become_file_colon_line() {
        let log = "k.metal(12): error: identifier \"x\" is undefined\n\n1 error detected.\n";
        assert_eq!(
            format_log(log),
            "k.metal:12: error: identifier \"x\" is undefined\n1 error detected."
        );
    }
}
