"""Build (and check) the libcuda.so.1 stand-in that lets vLLM's CUDA extension
modules load on a machine without the NVIDIA driver.

Used by ``oracle.py`` (which builds on demand) and runnable by hand:

    python tests/vllm_oracle/build_libcuda_stub.py            # build, print the path
    python tests/vllm_oracle/build_libcuda_stub.py --check /tmp/vllm-venv
        # also list cu* symbols the install needs but the stub lacks

Standard library only: it runs under any python (ours or the vLLM venv's).
The output goes to a cache folder outside the repository, never committed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "libcuda_stub.c"
DEFAULT_DIR = Path(os.environ.get("ATTN_SELECT_LIBCUDA_DIR", Path(tempfile.gettempdir()) / "attn-select-libcuda"))
# Driver API names: cuXxx (cudart's cudaXxx live in libcudart, which ships in the wheels).
DRIVER_SYMBOL = re.compile(r"^cu[A-Z]\w*$")


def stub_symbols() -> set[str]:
    """Every function the C source defines."""
    text = SOURCE.read_text()
    named = set(re.findall(r"^NO_DEVICE\((\w+)\)", text, re.M))
    explicit = set(re.findall(r"^int (cu\w+)\(", text, re.M))
    return named | explicit


def build(out_dir: Path = DEFAULT_DIR) -> Path:
    """Compile the stub once per source version; return the path of libcuda.so.1.

    The folder name carries a hash of the source, so an edited stub is rebuilt
    and concurrent builders never overwrite a library another process loaded.
    """
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    target_dir = out_dir / digest
    target = target_dir / "libcuda.so.1"
    if target.exists():
        return target
    target_dir.mkdir(parents=True, exist_ok=True)
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise RuntimeError("no C compiler (cc/gcc) found to build the libcuda stand-in")
    tmp = target_dir / f".libcuda.so.1.{os.getpid()}"
    subprocess.run(
        [cc, "-shared", "-fPIC", "-O1", "-Wl,-soname,libcuda.so.1", "-o", str(tmp), str(SOURCE)],
        check=True,
    )
    os.replace(tmp, target)  # atomic: a reader sees no half-written library
    return target


def needed_symbols(site_packages: Path) -> dict[str, set[str]]:
    """Undefined driver symbols of every shared object under ``site_packages``
    that links libcuda.so.1, keyed by file."""
    out: dict[str, set[str]] = {}
    for path in site_packages.rglob("*.so*"):
        if not path.is_file():
            continue
        dyn = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True)
        if "libcuda.so.1" not in dyn.stdout:
            continue
        nm = subprocess.run(
            ["nm", "-D", "--undefined-only", str(path)], capture_output=True, text=True
        )
        syms = {line.split()[-1].split("@")[0] for line in nm.stdout.splitlines() if line.strip()}
        out[str(path.relative_to(site_packages))] = {s for s in syms if DRIVER_SYMBOL.match(s)}
    return out


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
