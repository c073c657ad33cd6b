"""The engine the user really has, against the one attn-select mirrors:
records of what detection found (``selector/host/engine_packages.py``
reads the package metadata) and the warnings every explain, lock and check
output carries. Pure: the caller passes in what was found.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from attn_select.selector.engines import SGLANG, SGLANG_VERSION, VLLM, VLLM_VERSION

MIRRORED = {VLLM: VLLM_VERSION, SGLANG: SGLANG_VERSION}
TITLES = {VLLM: "vLLM", SGLANG: "SGLang"}
# What each engine calls the code that decides (what ``own_code`` runs).
DECIDES = {VLLM: "selection", SGLANG: "resolution"}

# What a mirrored answer consists of, per engine: the answers another
# installed release may give differently.
ANSWERS = {
    VLLM: "backend choice, candidate reasons, priority list, FlashAttention version, FlashInfer dispatch and "
          "MLA prefill backend",
    SGLANG: "attention backends, page size and KV-cache dtype",
}


class InstalledEngine(NamedTuple):
    """One engine's installed release, as its package metadata says."""

    engine: str  # "vllm" / "sglang"
    version: str | None  # None: not installed there
    where: str  # "this Python (/path/site-packages)" or "--vllm-python /venv/bin/python"

    @property
    def mirrored(self) -> str:
        return MIRRORED[self.engine]

    @property
    def differs(self) -> bool:
        """Installed, and another release than the mirrored one. A local
        build tag (``+cu129``) is the same release; a dev or rc build is not."""
        return self.version is not None and release(self.version) != self.mirrored


def release(version: str) -> str:
    """The version without its local segment: ``0.33.0+cu129`` -> ``0.33.0``."""
    return version.split("+", 1)[0]


class EngineWarning(NamedTuple):
    """A warning every output of explain, lock and check shows."""

    kind: str  # "version" (another release installed) or "environment" (a variable)
    engine: str
    message: str
    affects: tuple[str, ...] = ()  # deployments (lock, check); empty: the whole answer


def version_warning(found: InstalledEngine, affects: tuple[str, ...] = (),
                    own_code: str | None = None) -> EngineWarning | None:
    """The warning for an installed release other than the mirrored one, or
    None. ``affects`` names the deployments whose answers it concerns (lock,
    check); ``own_code`` is the option that runs that release's own
    selection instead (``--engine vllm-installed`` / ``sglang-installed``)."""
    if not found.differs:
        return None
    title = TITLES[found.engine]
    text = (f"{title} {found.version} is installed ({found.where}), but attn-select mirrors {title} "
            f"{found.mirrored}: the {ANSWERS[found.engine]} here are {found.mirrored}'s and may not be what "
            f"{found.version} does")
    if affects:
        text += f"; may be affected: {', '.join(affects)}"
    if own_code is not None:
        text += f"; {own_code} runs {found.version}'s own {DECIDES[found.engine]}"
    return EngineWarning("version", found.engine, text, affects)


_VERSION_LINE = re.compile(r"^Version:\s*(\S+)\s*$", re.M)


def metadata_version(text: str) -> str | None:
    """The ``Version:`` header of a METADATA / PKG-INFO file (RFC 822 style:
    headers end at the first blank line)."""
    head = text.split("\n\n", 1)[0]
    m = _VERSION_LINE.search(head)
    return m.group(1) if m else None


def deployments_by_engine(named: list[tuple[str, str]]) -> dict[str, tuple[str, ...]]:
    """The deployments each engine answers for, from (name, engine) pairs
    (engine ``both``: vLLM and SGLang), for the version warnings' ``affects``."""
    affects: dict[str, tuple[str, ...]] = {VLLM: (), SGLANG: ()}
    for name, engine in named:
        for e in ((VLLM, SGLANG) if engine == "both" else (engine,)):
            affects[e] += (name,)
    return affects
