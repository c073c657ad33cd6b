"""Whether transformers could load an auto_map class from a local model folder.

With --trust-remote-code, transformers' get_class_from_dynamic_module imports
``module.py`` from the model folder and takes ``Class`` from it. vLLM 0.33.0
lets what that raises through for the AutoConfig (a missing file: "does not
appear to have a file named"; a file that is not Python: SyntaxError; a file
without the class: AttributeError), and its model registry catches it for an
AutoModel class (the architecture is then unsupported). attn-select never runs
the file: it reads its syntax tree and asks whether the module's top level
binds the name. A ``from x import *`` or a name bound in any branch of an
``if`` / ``try`` counts as bound (it may be); what the class does once built
is not checked. Packages the file imports that vLLM's environment lacks are
that environment's fact, not the model's, and are not checked either.
"""

from __future__ import annotations

import ast
from pathlib import Path

# a model's remote module is tens of KB; past this the tree is not built (bounded time and memory)
_MAX_MODULE_BYTES = 4 << 20


def remote_module_problem(ref: object, code_folder: Path | None) -> str | None:
    """What stops auto_map's ``module.Class`` loading from ``code_folder``, as a
    phrase (transformers' "F does not appear to have a file named modeling_x.py",
    "modeling_x.py in F is not valid
    Python (...)", "modeling_x.py in F defines no X"); None when it loads as far
    as can be told here, or is not checked (no local folder, a Hugging Face id,
    another repository's ``repo--module.Class``)."""
    if code_folder is None or not isinstance(ref, str) or "--" in ref or ref.count(".") != 1:
        return None
    module, cls = ref.split(".")
    path = code_folder / f"{module}.py"
    if not path.is_file():
        return f"{code_folder} does not appear to have a file named {module}.py"
    try:
        if path.stat().st_size > _MAX_MODULE_BYTES:
            return None
        tree = ast.parse(path.read_bytes(), filename=path.name)
    except (SyntaxError, ValueError) as exc:  # also a null byte, a bad coding cookie: the import fails too
        msg = getattr(exc, "msg", None) or str(exc)
        where = f", line {exc.lineno}" if getattr(exc, "lineno", None) else ""
        return f"{module}.py in {code_folder} is not valid Python ({msg}{where})"
    except (RecursionError, MemoryError, OSError):
        return None
    try:
        bound = _binds(tree.body, cls) or _binds_dynamically(tree, cls)
    except RecursionError:
        return None
    return None if bound else f"{module}.py in {code_folder} defines no {cls}"


def _binds(body: list[ast.stmt], name: str) -> bool:
    """Whether these statements, run at a module's top level, may bind ``name``
    (in any branch; not inside a def or class body, which bind their own scope)."""
    for node in body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name == name:
                return True
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                alias.name == "*" or (alias.asname or alias.name.split(".")[0]) == name for alias in node.names):
            return True
        if any(isinstance(n, ast.Name) and n.id == name for t in _targets(node) for n in ast.walk(t)):
            return True
        nested = [getattr(node, f, None) or [] for f in ("body", "orelse", "finalbody")]
        nested += [h.body for h in getattr(node, "handlers", ())]  # try / try*
        nested += [c.body for c in getattr(node, "cases", ())]  # match
        if any(_binds(b, name) for b in nested):
            return True
    return False


def _targets(node: ast.stmt) -> list[ast.expr]:
    """What a statement assigns to (names, tuples of names, attributes, subscripts)."""
    if isinstance(node, ast.Assign):
        return node.targets
    if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        return [node.target]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [i.optional_vars for i in node.items if i.optional_vars is not None]
    return []


def _binds_dynamically(tree: ast.Module, name: str) -> bool:
    """Whether the module may bind names at run time in ways its statements do not show: a module
    ``__getattr__`` (PEP 562), globals() / setattr / exec and kin, or an assignment expression to
    ``name`` anywhere."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in _DYNAMIC:
            return True
        if isinstance(node, ast.NamedExpr) and node.target.id == name:
            return True
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "__getattr__" for n in tree.body)


_DYNAMIC = frozenset({"globals", "locals", "vars", "setattr", "exec", "eval", "__import__"})
