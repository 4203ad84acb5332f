"""``python -m ingot``: ``info`` | ``check`` | ``translate`` | ``bench``.

- ``info``: version, devices and the default device.
- ``check FILE.metal [-I DIR] [-D NAME=VALUE] [--constant NAME=VALUE] [--json]``: translates
  the file for every target and compiles it on every available device; prints the entry points'
  parameters and every diagnostic with a caret; exit status 0 when every target accepts it, 1
  otherwise.
- ``translate FILE.metal --target cuda|cpu``: prints what the kernel becomes on that target.
- ``bench [--quick]``: ingot side by side with NumPy (CPU) and CuPy / PyTorch (CUDA), a table and
  a bar chart (matplotlib, optional).
"""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional


def _info() -> int:
    import ingot

    print(f"ingot {ingot.__version__}")
    print(f"array API version {ingot.__array_api_version__}")
    try:
        default = ingot.default_device()
        print(f"default device: {default}")
    except ingot.IngotError as e:
        print(f"default device: unavailable ({e})")
    print("devices:")
    for d in ingot.devices():
        try:
            name = d.name()
        except ingot.IngotError as e:  # pragma: no cover - depends on the machine
            name = f"unavailable ({e})"
        mem = d.memory_info()
        print(f"  {d}: {name}, {mem['total'] / 2**30:.1f} GiB total, {mem['free'] / 2**30:.1f} GiB free")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point of ``python -m ingot``."""
    from . import _cli_bench, _cli_check

    parser = argparse.ArgumentParser(prog="python -m ingot", description="ingot command line")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("info", help="print the version, the devices and the default device")
    check = sub.add_parser("check", help="check an MSL file on every target and device (exit status 0/1)",
                           description=_cli_check.__doc__.split("\n\n")[1])
    translate = sub.add_parser("translate", help="print the translation of an MSL file for a target")
    _cli_check.add_arguments(check, translate)
    bench = sub.add_parser("bench", help="benchmark ingot against NumPy / CuPy / PyTorch",
                           description=_cli_bench.__doc__.split("\n\n")[1])
    _cli_bench.add_arguments(bench)
    args = parser.parse_args(argv)
    if args.command in (None, "info"):
        return _info()
    if args.command == "check":
        return _cli_check.check_main(args)
    if args.command == "translate":
        return _cli_check.translate_main(args)
    if args.command == "bench":
        return _cli_bench.bench_main(args)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
