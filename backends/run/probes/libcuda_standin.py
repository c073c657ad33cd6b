"""Build the libcuda.so.1 stand-in (``libcuda_standin.c`` beside this file)
that lets vLLM's CUDA extension modules load on a machine without the NVIDIA
driver. Standard library only: imported by attn-select's CLI, by
``vllm_selection.py`` in the engine's Python, and by the test oracles.

The library goes to a cache folder outside any repository
(``$ATTN_SELECT_LIBCUDA_DIR``, default ``$TMPDIR/attn-select-libcuda``), one
subfolder per source version.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "libcuda_standin.c"
DEFAULT_DIR = Path(os.environ.get("ATTN_SELECT_LIBCUDA_DIR", Path(tempfile.gettempdir()) / "attn-select-libcuda"))
# Driver API names: cuXxx (cudart's cudaXxx live in libcudart, which ships in the wheels).
DRIVER_SYMBOL = re.compile(r"^cu[A-Z]\w*$")


class NoCompiler(RuntimeError):
    """No C compiler to build the stand-in with."""


def compiler() -> str | None:
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")


def stub_symbols() -> set[str]:
    """Every function the C source defines."""
    text = SOURCE.read_text()
    named = set(re.findall(r"^NO_DEVICE\((\w+)\)", text, re.M))
    explicit = set(re.findall(r"^int (cu\w+)\(", text, re.M))
    return named | explicit


def build(out_dir: Path | None = None) -> Path:
    """Compile the stand-in once per source version; the path of libcuda.so.1.

    The folder name carries a hash of the source, so an edited stand-in is
    rebuilt and concurrent builders never overwrite a library another
    process loaded.
    """
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    target_dir = Path(out_dir if out_dir is not None else DEFAULT_DIR) / digest
    target = target_dir / "libcuda.so.1"
    if target.exists():
        return target
    cc = compiler()
    if cc is None:
        raise NoCompiler("no C compiler (cc or gcc, or $CC) to build the libcuda.so.1 stand-in")
    target_dir.mkdir(parents=True, exist_ok=True)
    tmp = target_dir / f".libcuda.so.1.{os.getpid()}"
    subprocess.run(
        [cc, "-shared", "-fPIC", "-O1", "-Wl,-soname,libcuda.so.1", "-o", str(tmp), str(SOURCE)],
        check=True, capture_output=True, timeout=120,
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
        nm = subprocess.run(["nm", "-D", "--undefined-only", str(path)], capture_output=True, text=True)
        syms = {line.split()[-1].split("@")[0] for line in nm.stdout.splitlines() if line.strip()}
        out[str(path.relative_to(site_packages))] = {s for s in syms if DRIVER_SYMBOL.match(s)}
    return out
