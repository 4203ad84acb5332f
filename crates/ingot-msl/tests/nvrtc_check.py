#!/usr/bin/env python3
"""Compile translated CUDA kernels with NVRTC and print a pass/fail table.

Usage:
    INGOT_MSL_EMIT_CUDA=DIR cargo test -p ingot-msl --test corpus corpus_translates
    python3 crates/ingot-msl/tests/nvrtc_check.py DIR [--arch sm_90] [--verbose] [--only NAME]

DIR holds the translations (*.cu) and the CUDA prelude under DIR/include/ (as written by the
corpus test). Each .cu is compiled as one NVRTC program with the prelude given as in-memory
headers (as the CUDA runtime does), with -std=c++17 -default-device -arch=<arch>.
NVRTC is reached through cuda-python (cuda.bindings.nvrtc or the older cuda.nvrtc), or, when that
is not installed, through libnvrtc with ctypes. Exit status 0 when every file compiles.
"""
import argparse
import ctypes
import ctypes.util
import glob
import os
import sys
import time


def load_headers(include_dir):
    headers = []
    for root, _, files in os.walk(include_dir):
        for f in files:
            path = os.path.join(root, f)
            name = os.path.relpath(path, include_dir).replace(os.sep, "/")
            with open(path, "rb") as fh:
                headers.append((name, fh.read()))
    headers.sort()
    return headers


class CudaPythonNvrtc:
    def __init__(self):
        try:
            from cuda.bindings import nvrtc  # cuda-python >= 12.6
        except ImportError:
            from cuda import nvrtc  # older cuda-python
        self.n = nvrtc

    def version(self):
        err, major, minor = self.n.nvrtcVersion()
        return "%d.%d" % (major, minor)

    def compile(self, src, name, headers, opts):
        n = self.n
        err, prog = n.nvrtcCreateProgram(
            src, name.encode(), len(headers), [h[1] for h in headers], [h[0].encode() for h in headers]
        )
        if err != n.nvrtcResult.NVRTC_SUCCESS:
            return False, "nvrtcCreateProgram: %s" % err
        (err,) = n.nvrtcCompileProgram(prog, len(opts), opts)
        ok = err == n.nvrtcResult.NVRTC_SUCCESS
        _, size = n.nvrtcGetProgramLogSize(prog)
        log = b" " * size
        n.nvrtcGetProgramLog(prog, log)
        n.nvrtcDestroyProgram(prog)
        return ok, log.decode(errors="replace").rstrip("\x00 \n")


class CtypesNvrtc:
    def __init__(self):
        names = [ctypes.util.find_library("nvrtc")] + [
            "libnvrtc.so",
            "libnvrtc.so.13",
            "libnvrtc.so.12",
        ]
        names += sorted(glob.glob("/usr/local/cuda*/lib64/libnvrtc.so*"), reverse=True)
        for n in names:
            if not n:
                continue
            try:
                self.lib = ctypes.CDLL(n)
                break
            except OSError:
                continue
        else:
            raise OSError("libnvrtc not found")

    def version(self):
        a, b = ctypes.c_int(), ctypes.c_int()
        self.lib.nvrtcVersion(ctypes.byref(a), ctypes.byref(b))
        return "%d.%d" % (a.value, b.value)

    def compile(self, src, name, headers, opts):
        lib = self.lib
        prog = ctypes.c_void_p()
        n = len(headers)
        hsrc = (ctypes.c_char_p * n)(*[h[1] for h in headers])
        hnames = (ctypes.c_char_p * n)(*[h[0].encode() for h in headers])
        r = lib.nvrtcCreateProgram(ctypes.byref(prog), src, name.encode(), n, hsrc, hnames)
        if r != 0:
            return False, "nvrtcCreateProgram error %d" % r
        copts = (ctypes.c_char_p * len(opts))(*opts)
        r = lib.nvrtcCompileProgram(prog, len(opts), copts)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, buf)
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
        return r == 0, buf.value.decode(errors="replace").rstrip()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="folder with *.cu translations and include/ (the CUDA prelude)")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--verbose", action="store_true", help="print the log of passing files too")
    ap.add_argument("--only", default=None, help="compile only files whose name contains this")
    ap.add_argument("--opt", action="append", default=[], help="extra NVRTC option")
    args = ap.parse_args()

    include = os.path.join(args.dir, "include")
    headers = load_headers(include)
    if not headers:
        sys.exit("no prelude headers under %s" % include)
    try:
        nv = CudaPythonNvrtc()
        backend = "cuda-python"
    except ImportError:
        nv = CtypesNvrtc()
        backend = "ctypes"
    opts = [
        b"-std=c++17",
        ("-arch=%s" % args.arch).encode(),
        b"-default-device",
        b"-lineinfo",
    ] + [o.encode() for o in args.opt]
    files = sorted(glob.glob(os.path.join(args.dir, "*.cu")))
    if args.only:
        files = [f for f in files if args.only in os.path.basename(f)]
    print("NVRTC %s (%s), %d headers, options: %s" % (nv.version(), backend, len(headers), b" ".join(opts).decode()))
    failed = 0
    width = max([len(os.path.basename(f)) for f in files] + [10])
    for f in files:
        with open(f, "rb") as fh:
            src = fh.read()
        t0 = time.time()
        ok, log = nv.compile(src, os.path.basename(f), headers, opts)
        dt = (time.time() - t0) * 1000
        print("%-*s  %s  %7.1f ms" % (width, os.path.basename(f), "PASS" if ok else "FAIL", dt))
        if not ok:
            failed += 1
        if log and (not ok or args.verbose):
            for line in log.splitlines()[:40]:
                print("    " + line)
    print("%d of %d compiled" % (len(files) - failed, len(files)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
