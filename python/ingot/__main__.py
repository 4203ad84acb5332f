"""``python -m ingot info``: version, devices and the default device."""

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
    parser = argparse.ArgumentParser(prog="python -m ingot", description="ingot command line")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("info", help="print the version, the devices and the default device")
    args = parser.parse_args(argv)
    if args.command in (None, "info"):
        return _info()
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
