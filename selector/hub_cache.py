"""Hugging Face Hub ids from the local cache, found the way huggingface_hub
finds a cached file (``try_to_load_from_cache``), without importing it and
without any download.

The cache folder: ``HF_HUB_CACHE``, else the legacy ``HUGGINGFACE_HUB_CACHE``,
else ``HF_HOME/hub``, else ``$XDG_CACHE_HOME/huggingface/hub``, else
``~/.cache/huggingface/hub`` (``~`` and ``$VARS`` expanded, as
huggingface_hub.constants does); vLLM's ``--download-dir`` replaces it. A
repo ``org/name`` lives in ``models--org--name``; a revision (default
``main``) is a branch or tag name under ``refs/`` whose file holds a commit
hash, or a commit hash itself; the files are in ``snapshots/<commit>/``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from attn_select.selector.errors import UserError

# org/name. A bare name (the Hub's legacy ids, gpt2) is not looked up: it
# is a built-in profile's name here.
_REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}")
_ECHO = 80  # characters of a user's value shown in an error
_REF_BYTES = 1024  # read of a refs/ file (a commit hash and a newline)


def cache_dir(environ: dict[str, str] | None = None) -> Path:
    """The hub cache folder huggingface_hub would use."""
    env = os.environ if environ is None else environ

    def expand(p: str) -> str:
        return os.path.expandvars(os.path.expanduser(p))

    if env.get("HF_HUB_CACHE"):
        return Path(expand(env["HF_HUB_CACHE"]))
    if env.get("HUGGINGFACE_HUB_CACHE"):
        return Path(expand(env["HUGGINGFACE_HUB_CACHE"]))
    home = env.get("HF_HOME") or os.path.join(env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                                              "huggingface")
    return Path(expand(home)) / "hub"


def looks_like_repo_id(text: str) -> bool:
    """org/name, as the Hub spells repo ids (96 characters a part at most;
    no path syntax)."""
    return bool(_REPO_ID.fullmatch(text)) and ".." not in text and not text.endswith((".json", "."))


def repo_folder(repo_id: str, cache: Path) -> Path:
    """models--org--name under the cache (huggingface_hub's repo_folder_name)."""
    return cache / "--".join(["models", *repo_id.split("/")])


def is_repo_folder(path: Path) -> bool:
    """A models--org--name cache folder (not a snapshot, not a model folder)."""
    return path.name.startswith("models--") and path.is_dir() and (
        (path / "snapshots").is_dir() or (path / "refs").is_dir()
    )


def snapshot(repo: Path, revision: str | None, shown: str) -> Path:
    """The snapshot folder of ``revision`` in a models--org--name folder, or
    a one-line UserError saying what is missing (``shown``: the id or path
    the user gave)."""
    rev = revision or "main"
    commit = rev
    ref = repo / "refs" / rev
    try:
        if ".." not in Path(rev).parts and ref.is_file():
            with open(ref, "rb") as fh:  # a commit hash: 40 characters; a huge file is not read whole
                commit = fh.read(_REF_BYTES).decode("utf-8", errors="replace").strip()[:200]
    except OSError as exc:
        raise UserError(f"cannot read {ref}: {exc.strerror or exc}") from None
    folder = repo / "snapshots" / commit
    if commit and "/" not in commit and ".." not in commit and folder.is_dir():
        if (repo / ".no_exist" / commit / "config.json").is_file():
            raise UserError(f"{shown[:_ECHO]} at {rev[:_ECHO]}: the Hugging Face cache records that this revision "
                            "has no config.json")
        return folder
    where = f"revision {rev[:_ECHO]!r}" + (f" (commit {commit[:12]})" if commit != rev else "")
    raise UserError(f"{shown[:_ECHO]}: {where} is not in the Hugging Face cache ({repo}); "
                    f"fetch its config with: hf download {_repo_id(repo)} config.json --revision {rev[:_ECHO]}")


def _repo_id(repo: Path) -> str:
    return repo.name.removeprefix("models--").replace("--", "/")


def fetch_hint(repo_id: str, revision: str | None = None) -> str:
    """How to fetch only a repo's config.json into the cache."""
    rev = f" --revision {revision}" if revision else ""
    return (f"hf download {repo_id}{rev} config.json (or: huggingface-cli download {repo_id}{rev} config.json); "
            "attn-select reads the cache, it does not download")


def find_cached(spec: str, revision: str | None = None, cache: str | None = None) -> Path | None:
    """The snapshot folder for MODEL ``spec`` when it names a cached hub
    repo: a ``models--org--name`` folder given as a path, or an id found in
    the cache. None when ``spec`` is neither (an id that is not cached is
    None too: the caller decides what else it may be)."""
    path = Path(spec).expanduser()
    try:
        if path.exists():  # a local path wins over an id, as in vLLM
            return snapshot(path, revision, spec) if is_repo_folder(path) else None
    except OSError:
        return None
    if not looks_like_repo_id(spec):
        return None
    repo = repo_folder(spec, Path(cache).expanduser() if cache else cache_dir())
    try:
        if not repo.is_dir():
            return None
    except OSError:
        return None
    return snapshot(repo, revision, spec)
