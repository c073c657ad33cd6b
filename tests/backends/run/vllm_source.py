"""Reading vLLM 0.33.0's (and FlashInfer's) source for the CPU tests of the
run adapters: where the files are, a function's parameter list, and the
keywords a call site passes, from the AST (nothing is imported or run)."""

from __future__ import annotations

import ast
import inspect
import os
from pathlib import Path

_EMPTY = inspect.Parameter.empty


def vllm_file(rel: str) -> Path | None:
    """``rel`` (e.g. "vllm/third_party/flashmla/flash_mla_interface.py") in a vLLM 0.33.0
    source tree or install on this machine, else None."""
    roots = [os.environ.get("ATTN_SELECT_VLLM_SRC", ""), "/work/vllm-src", "/tmp/vsrc"]
    roots += [str(p.parent) for p in Path("/tmp/vllm-venv/lib").glob("python3*/site-packages/vllm")]
    for root in roots:
        if root and (f := Path(root) / rel).exists():
            return f
    return None


def flashinfer_file(rel: str) -> Path | None:
    """``rel`` (e.g. "flashinfer/mla/_core.py") in the FlashInfer that vLLM's venv installed."""
    for site in Path("/tmp/vllm-venv/lib").glob("python3*/site-packages"):
        if (f := site / rel).exists():
            return f
    return None


def _find(tree: ast.AST, qualname: str) -> ast.FunctionDef:
    """The last definition of ``qualname`` ("f" or "Class.method"): overloads come first."""
    parts = qualname.split(".")
    scope = tree
    for cls in parts[:-1]:
        scope = next(n for n in ast.walk(scope) if isinstance(n, ast.ClassDef) and n.name == cls)
    body = scope.body if hasattr(scope, "body") else []
    fns = [n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == parts[-1]]
    assert fns, f"{qualname} not found"
    return fns[-1]


def _default(node: ast.AST | None):
    if node is None:
        return _EMPTY
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ast.unparse(node)  # a name or call: compared as text


def real_parameters(path: Path, qualname: str) -> list[tuple[str, str, object]]:
    """(name, kind, default) of each parameter, ``self`` left out; a default that
    is not a literal is its source text."""
    fn = _find(ast.parse(path.read_text()), qualname)
    a = fn.args
    out = []
    pos = a.posonlyargs + a.args
    defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
    for arg, d in zip(pos, defaults):
        out.append((arg.arg, "positional", _default(d)))
    if a.vararg:
        out.append((a.vararg.arg, "*", _EMPTY))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((arg.arg, "keyword", _default(d)))
    if a.kwarg:
        out.append((a.kwarg.arg, "**", _EMPTY))
    return out[1:] if out and out[0][0] in ("self", "cls") else out


def fake_parameters(fn) -> list[tuple[str, str, object]]:
    kinds = {inspect.Parameter.POSITIONAL_ONLY: "positional", inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
             inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.KEYWORD_ONLY: "keyword",
             inspect.Parameter.VAR_KEYWORD: "**"}
    return [(n, kinds[p.kind], p.default) for n, p in inspect.signature(fn).parameters.items() if n != "self"]


def same_parameters(fake, real) -> list[str]:
    """Differences between two parameter lists: names, kinds and order exactly;
    defaults where the real one is a literal."""
    diffs = []
    if [(n, k) for n, k, _ in fake] != [(n, k) for n, k, _ in real]:
        return [f"names/kinds differ:\n fake {[(n, k) for n, k, _ in fake]}\n real {[(n, k) for n, k, _ in real]}"]
    for (n, _, fd), (_, _, rd) in zip(fake, real):
        if isinstance(rd, str) and not isinstance(fd, str):
            continue  # a name default (torch.bfloat16, DEFAULT_FA_VERSION): names matter here
        if (fd is _EMPTY) != (rd is _EMPTY) or (rd is not _EMPTY and not isinstance(rd, str) and fd != rd):
            diffs.append(f"{n}: default {fd!r} != {rd!r}")
    return diffs


def call_keywords(path: Path, callee: str, within: str | None = None) -> list[frozenset]:
    """The keyword names of every call of ``callee`` (a name or an attribute's
    last part), inside class or function ``within`` when given; ``**x`` shows as "**"."""
    tree = ast.parse(path.read_text())
    scope = tree
    if within:
        scope = next(n for n in ast.walk(tree)
                     if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name == within)
    out = []
    for node in ast.walk(scope):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name == callee:
                out.append(frozenset(k.arg or "**" for k in node.keywords))
    return out


def call_positional_count(path: Path, callee: str, within: str | None = None) -> list[int]:
    tree = ast.parse(path.read_text())
    scope = tree if within is None else next(
        n for n in ast.walk(tree) if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name == within)
    out = []
    for node in ast.walk(scope):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name == callee:
                out.append(len(node.args))
    return out
