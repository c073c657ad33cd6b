"""Build (and check) the libcuda.so.1 stand-in that lets vLLM's CUDA extension
modules load on a machine without the NVIDIA driver. The stand-in and its
builder are product code (``backends/run/probes/libcuda_standin.{c,py}``, used by
``--engine vllm-installed``); the oracles import them from there.

    python tests/vllm_oracle/build_libcuda_stub.py            # build, print the path
    python tests/vllm_oracle/build_libcuda_stub.py --check /tmp/vllm-venv
        # also list cu* symbols the install needs but the stand-in lacks

Standard library only: it runs under any python (ours or the vLLM venv's).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "backends" / "run" / "probes"))
from libcuda_standin import DEFAULT_DIR, build, needed_symbols, stub_symbols  # noqa: E402

__all__ = ["DEFAULT_DIR", "build", "needed_symbols", "stub_symbols"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=DEFAULT_DIR, help="cache folder for the built library")
    ap.add_argument("--check", metavar="VENV", type=Path, help="a venv with vLLM; report symbols the stub lacks")
    args = ap.parse_args()
    print(build(args.out))
    if args.check:
        sites = list(args.check.glob("lib/python3*/site-packages"))
        if not sites:
            print(f"no site-packages under {args.check}", file=sys.stderr)
            return 2
        have = stub_symbols()
        missing: dict[str, set[str]] = {}
        for lib, syms in needed_symbols(sites[0]).items():
            if syms - have:
                missing[lib] = syms - have
        for lib, syms in sorted(missing.items()):
            print(f"{lib}: missing {' '.join(sorted(syms))}", file=sys.stderr)
        print(f"{len(have)} symbols in the stub; {len(missing)} libraries need more", file=sys.stderr)
        return 1 if missing else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
