"""Hostile input (issue 16): every class of bad input a fuzz run found ends
as exactly one line on stderr and exit 2, with no traceback and no internal
error, in bounded time and memory.

Each case runs ``attn-select ARGV`` (``cli.app.main``) in a forked child of
this process: the package is already imported, so a case costs a
fraction of a second, and the child's address space is capped (``RLIMIT_AS``) and
its wall clock limited (``SIGALRM``), so a hang or a runaway allocation
fails the case instead of stalling the machine. The limits are guards, not
timings: a fixed case answers in well under a second.
"""

from __future__ import annotations

import errno
import io
import json
import os
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from attn_select.cli.app import main
from attn_select.selector.profiles import MODELS_DIR

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs fork, /proc and RLIMIT_AS (Linux)")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "profiles" / "lock" / "deployments.yaml"

MEMORY_HEADROOM = 768 << 20  # bytes of address space a case may add to this process's
WALL_LIMIT_S = 60  # a guard against hangs only (a loaded CI host is slow); a case takes a fraction of a second


@dataclass
class Outcome:
    rc: int | None  # None: the child was killed (signal) or did not report
    out: str = ""
    err: str = ""
    died: str = ""


def _vm_size() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def run_bounded(argv: list[str], cwd: Path, setup: Callable[[], None] | None = None) -> Outcome:
    """``main(argv)`` in a forked child with capped memory and wall clock."""
    import resource

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(r)
            signal.alarm(WALL_LIMIT_S)  # SIGALRM's default action ends the child
            limit = _vm_size() + MEMORY_HEADROOM
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
            os.chdir(cwd)
            if setup is not None:
                setup()
            rc = main([str(a) for a in argv])
            report = {"rc": rc, "out": sys.stdout.getvalue()[:20_000], "err": sys.stderr.getvalue()[:200_000]}
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the case
            import traceback

            report = {"rc": None, "died": "".join(traceback.format_exception(exc))[-4000:]}
        data = json.dumps(report).encode()
        while data:
            data = data[os.write(w, data):]
        os._exit(0)
    os.close(w)
    chunks = []
    with os.fdopen(r, "rb") as fh:
        while chunk := fh.read(65536):
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        return Outcome(None, died=f"killed by {name} (SIGALRM: past {WALL_LIMIT_S} s)")
    if not chunks:
        return Outcome(None, died="the child reported nothing")
    return Outcome(**json.loads(b"".join(chunks)))


# --- inputs ---------------------------------------------------------------------

LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
         "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
         "torch_dtype": "bfloat16"}
NO_DTYPE = {k: v for k, v in LLAMA.items() if k != "torch_dtype"}  # the safetensors headers are read
MISTRAL_PARAMS = {"dim": 4096, "n_layers": 32, "head_dim": 128, "hidden_dim": 14336, "n_heads": 32,
                  "n_kv_heads": 8, "norm_eps": 1e-05, "vocab_size": 32768, "rope_theta": 1000000.0}
MODELOPT = {"name": "modelopt", "version": "0.29.0"}


def nested(depth: int, leaf: object = 1) -> str:
    """JSON nested ``depth`` deep, written as text (json.dumps would recurse)."""
    return "[" * depth + json.dumps(leaf) + "]" * depth


def nested_objects(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


GEMMA3_TEXT = {"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "hidden_size": 1024,
               "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 128, "num_hidden_layers": 2,
               "vocab_size": 1000, "sliding_window": 512, "torch_dtype": "bfloat16"}


def folder(tmp: Path, config: dict | str | None = None, **files: bytes | str | dict) -> Path:
    """A model folder ``tmp/m`` with config.json and the named files."""
    m = tmp / "m"
    m.mkdir(exist_ok=True)
    if config is not None:
        files["config.json"] = config
    for name, body in files.items():
        path = m / name.replace("__", ".")
        if isinstance(body, dict):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode()
        path.write_bytes(body)
    return m


def safetensors(header: bytes | str | dict, length: int | None = None) -> bytes:
    if isinstance(header, dict):
        header = json.dumps(header)
    if isinstance(header, str):
        header = header.encode()
    return (len(header) if length is None else length).to_bytes(8, "little") + header + b"\0" * 8


def grown(path: Path, size: int) -> Path:
    """``path`` made ``size`` bytes long (a sparse tail of NULs: the size
    alone must be refused, before anything is read)."""
    os.truncate(path, size)
    return path


def explain(target: object) -> list[str]:
    return ["explain", str(target), "--capability", "9.0"]


def deployments(tmp: Path, text: str, name: str = "d.yaml") -> Path:
    path = tmp / name
    path.write_text(text)
    return path


LAUGHS = (  # ten levels of nine aliases: 9**10 values once expanded, from 400 bytes
    "a: &a [x, x, x, x, x, x, x, x, x]\n"
    + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n"
        for p, c in zip("abcdefghi", "bcdefghij")
    )
    + "deployments: [{name: n, model: llama-3.1-8b, device: h100, overrides: {dtype: *j}}]\n"
)

LOCK_HEAD = "schema: attn-select.lock/1\nengine: {name: vllm, version: 0.33.0}\n"


def _hub_cache_with_huge_ref(tmp: Path) -> str:
    repo = tmp / "hub" / "models--org--big"
    (repo / "snapshots").mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").touch()
    grown(repo / "refs" / "main", 3 << 30)
    return "org/big"


def _hub_cache_env() -> None:
    os.environ["HF_HUB_CACHE"] = os.path.abspath("hub")  # the child runs in tmp


def tune_workload(tmp: Path, body: str | bytes) -> list[str]:
    path = tmp / "w.yaml"
    path.write_bytes(body.encode() if isinstance(body, str) else body)
    return ["tune", "llama-3.1-8b", "--device", "cpu", "--workload", str(path)]


def _denied(predicate: Callable[[str], bool]) -> Callable[[], None]:
    """A setup that makes opening matching paths fail with EACCES, as for a
    chmod 000 file; tests run as root in CI, where chmod does not stop reads."""

    def setup() -> None:
        import builtins
        import io as io_module

        real_open = io_module.open

        def open_(file, *args, **kwargs):
            if isinstance(file, (str, os.PathLike)) and predicate(os.fspath(file)):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(file))
            return real_open(file, *args, **kwargs)

        builtins.open = io_module.open = open_

    return setup


def _folder_denied(folder_name: str) -> Callable[[], None]:
    """A setup that makes a folder unlistable and its entries unstattable
    (a chmod 000 folder, for a non-root user)."""

    def setup() -> None:
        real_stat, real_scandir = os.stat, os.scandir

        def inside(path) -> bool:
            return isinstance(path, (str, os.PathLike)) and f"/{folder_name}/" in os.path.abspath(os.fspath(path))

        def stat(path, *args, **kwargs):
            if inside(path):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
            return real_stat(path, *args, **kwargs)

        def scandir(path=".", *args, **kwargs):
            if inside(os.path.join(os.fspath(path), "x")):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
            return real_scandir(path, *args, **kwargs)

        os.stat, os.scandir = stat, scandir

    return setup


@dataclass
class Case:
    make: Callable[[Path], list[str]]  # builds the inputs under tmp, returns argv
    setup: Callable[[], None] | None = None
    words: tuple[str, ...] = ()  # what the one line must say (lower case)
    not_words: tuple[str, ...] = field(default=())


def _lock_then_check(tmp: Path, lock_text: str) -> list[str]:
    path = tmp / "x.lock"
    path.write_text(lock_text)
    return ["check", str(path)]


CASES: dict[str, Case] = {
    # --- config.json / params.json / hf_quant_config.json ---
    "config.json nested 100,000 deep": Case(
        lambda t: explain(folder(t, nested(100_000))), words=("nested",)),
    "config.json objects nested 100,000 deep": Case(
        lambda t: explain(folder(t, nested_objects(100_000))), words=("nested",)),
    "config.json integer of 5,000 digits": Case(
        lambda t: explain(folder(t, json.dumps(LLAMA)[:-1] + ', "vocab_size": ' + "9" * 5000 + "}")),
        words=("digits",)),
    "config.json use_mla nested 600 deep": Case(
        lambda t: explain(folder(t, json.dumps(LLAMA)[:-1] + ', "use_mla": ' + nested(600) + "}")),
        words=("nested",)),
    "quantization_config.quantization null": Case(
        lambda t: explain(folder(t, {**LLAMA, "quantization_config": {"producer": MODELOPT, "quantization": None}})),
        words=("quantization_config.quantization",)),
    "quantization_config.quantization a string": Case(
        lambda t: explain(folder(t, {**LLAMA, "quantization_config": {"producer": MODELOPT, "quantization": "FP8"}})),
        words=("quantization_config.quantization",)),
    "quantization_config.quantization a list": Case(
        lambda t: explain(folder(t, {**LLAMA, "quantization_config": {"producer": MODELOPT, "quantization": ["FP8"]}})),
        words=("quantization_config.quantization",)),
    "quantization_config.producer a string": Case(
        lambda t: explain(folder(t, {**LLAMA, "quantization_config": {"producer": "modelopt",
                                                                       "quantization": {"quant_algo": "FP8"}}})),
        words=("quantization_config.producer",)),
    "compressed-style modelopt with a null quantization": Case(
        lambda t: explain(folder(t, {**LLAMA, "quantization_config": {"quant_method": "modelopt",
                                                                       "quantization": None}})),
        words=("quantization_config.quantization",)),
    "hf_quant_config.json quantization null": Case(
        lambda t: explain(folder(t, LLAMA, hf_quant_config__json={"producer": MODELOPT, "quantization": None})),
        words=("hf_quant_config.json", "quantization")),
    "hf_quant_config.json producer a string": Case(
        lambda t: explain(folder(t, LLAMA, hf_quant_config__json={"producer": "modelopt",
                                                                  "quantization": {"quant_algo": "FP8"}})),
        words=("hf_quant_config.json", "producer")),
    "hf_quant_config.json nested 100,000 deep": Case(
        lambda t: explain(folder(t, LLAMA, hf_quant_config__json=nested(100_000))), words=("nested",)),
    "num_hidden_layers 100,000,000": Case(
        lambda t: explain(folder(t, {**LLAMA, "num_hidden_layers": 100_000_000})),
        words=("num_hidden_layers", "at most")),
    "text_config num_hidden_layers 100,000,000": Case(
        lambda t: explain(folder(t, {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
                                     "torch_dtype": "bfloat16",
                                     "text_config": {"model_type": "gemma3_text", "num_hidden_layers": 10**8}})),
        words=("num_hidden_layers", "at most")),
    "params.json n_layers 100,000,000": Case(
        lambda t: explain(folder(t, params__json={**MISTRAL_PARAMS, "n_layers": 10**8, "dtype": "bfloat16"},
                                 consolidated__safetensors=safetensors({}))),
        words=("at most",)),
    "a pattern field of the wrong kind (Gemma3TextConfig computes with it)": Case(
        lambda t: explain(folder(t, {"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
                                     "torch_dtype": "bfloat16", "sliding_window_pattern": "x"})),
        words=("wrong kind", "TypeError")),
    "a window field of the wrong kind (ModernBertConfig computes with it)": Case(
        lambda t: explain(folder(t, {"architectures": ["ModernBertModel"], "model_type": "modernbert",
                                     "hidden_size": 768, "num_attention_heads": 12, "num_hidden_layers": 4,
                                     "global_attn_every_n_layers": 3, "local_attention": None,
                                     "torch_dtype": "float32"})),
        words=("wrong kind", "TypeError")),
    # LlamaAttention takes getattr(config, "num_key_value_heads", heads): 0 is a division by zero in
    # vLLM, and had been read as "no value" (32 KV heads)
    "num_key_value_heads 0 (Llama)": Case(lambda t: explain(folder(t, {**LLAMA, "num_key_value_heads": 0})),
                                          words=("0 key/value heads", "num_key_value_heads")),
    "num_key_value_heads 0 (Qwen3)": Case(
        lambda t: explain(folder(t, {**LLAMA, "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
                                     "num_key_value_heads": 0})),
        words=("0 key/value heads",)),
    # a GGUF file was read as JSON ("invalid JSON: Expecting value"), a folder of them had "no config.json"
    "a .gguf file as MODEL": Case(lambda t: ((t / "m.gguf").write_bytes(b"GGUF\3\0\0\0" + b"\0" * 64),
                                             explain(t / "m.gguf"))[1], words=("gguf checkpoint", "config.json")),
    "a GGUF file without the suffix as MODEL": Case(lambda t: ((t / "model").write_bytes(b"GGUF\3\0\0\0"),
                                                              explain(t / "model"))[1], words=("gguf checkpoint",)),
    "a FIFO as MODEL": Case(lambda t: (os.mkfifo(t / "fifo"), explain(t / "fifo"))[1],
                            words=("not a regular file",), not_words=("has no config.json",)),
    "config.json a FIFO in the model folder": Case(
        lambda t: (folder(t), os.mkfifo(t / "m" / "config.json"), explain(t / "m"))[2],
        words=("config.json is not a regular file",)),
    "/dev/zero as MODEL": Case(lambda t: explain("/dev/zero"), words=("not a regular file",)),
    "a folder of GGUF files as MODEL": Case(lambda t: explain(folder(t, None, q4__gguf=b"GGUF\3\0\0\0")),
                                            words=("gguf files", "config.json")),
    # refs/main holds a 40-character commit hash; a 3 GB one was read whole (6 GB of memory)
    "a hub cache refs/main of 3 GB": Case(lambda t: explain(_hub_cache_with_huge_ref(t)), setup=_hub_cache_env,
                                          words=("org/big", "not in the hugging face cache")),
    "config.json of 40 MB": Case(lambda t: explain(grown(folder(t, LLAMA) / "config.json", 40 << 20).parent),
                                 words=("mib",)),
    "params.json nested 100,000 deep": Case(
        lambda t: explain(folder(t, params__json=nested(100_000), consolidated__safetensors=safetensors({}))),
        words=("nested",)),
    "params.json integer of 5,000 digits": Case(
        lambda t: explain(folder(t, params__json='{"dim": ' + "7" * 5000 + "}",
                                 consolidated__safetensors=safetensors({}))),
        words=("digits",)),
    # --- safetensors headers (the config names no dtype, so they are read) ---
    "safetensors header length 2**64-1": Case(
        lambda t: explain(folder(t, NO_DTYPE, model__safetensors=safetensors(b"{}", 2**64 - 1))),
        words=("model.safetensors", "header")),
    "safetensors header length 2**40": Case(
        lambda t: explain(folder(t, NO_DTYPE, model__safetensors=safetensors(b"{}", 2**40))),
        words=("model.safetensors", "header")),
    "safetensors header body a list": Case(
        lambda t: explain(folder(t, NO_DTYPE, model__safetensors=safetensors(b"[1, 2, 3]"))),
        words=("model.safetensors",)),
    "safetensors header nested 5,000 deep": Case(
        lambda t: explain(folder(t, NO_DTYPE, model__safetensors=safetensors(nested_objects(5000)))),
        words=("model.safetensors", "nested")),
    "safetensors dtype a list": Case(
        lambda t: explain(folder(t, NO_DTYPE, model__safetensors=safetensors(
            {"w": {"dtype": ["F16"], "shape": [1], "data_offsets": [0, 2]}}))),
        words=("model.safetensors", "dtype")),
    "safetensors header shorter than 8 bytes": Case(
        lambda t: explain(folder(t, NO_DTYPE, model__safetensors=b"\1\2")), words=("model.safetensors",)),
    "consolidated.safetensors header length 2**64-1 (Mistral folder)": Case(
        lambda t: explain(folder(t, params__json=MISTRAL_PARAMS,
                                 consolidated__safetensors=safetensors(b"{}", 2**64 - 1))),
        words=("consolidated.safetensors", "header")),
    # --- folders and names ---
    "params.json unreadable (EACCES)": Case(
        lambda t: explain(folder(t, params__json=MISTRAL_PARAMS, consolidated__safetensors=safetensors({}))),
        setup=_denied(lambda p: p.endswith("params.json")), words=("params.json", "permission denied")),
    "config.json unreadable (EACCES)": Case(
        lambda t: explain(folder(t, LLAMA)),
        setup=_denied(lambda p: p.endswith("config.json")), words=("config.json", "permission denied")),
    "model folder unreadable (EACCES on its entries)": Case(
        lambda t: explain(folder(t, LLAMA)), setup=_folder_denied("m"), words=("permission denied",)),
    "300-character model name": Case(lambda t: explain("x" * 300), words=("too long",)),
    "300-character model path": Case(lambda t: explain("./" + "x" * 300), words=("too long",)),
    "300-character hub-like id": Case(lambda t: explain("org/" + "x" * 300), words=("no such file or folder",),
                                      not_words=("download",)),
    "symlink loop": Case(lambda t: (os.symlink("loop", t / "loop"), explain("loop"))[1],
                         words=("loop",), not_words=("profile", "download")),
    "symlink loop, ./ path": Case(lambda t: (os.symlink("loop", t / "loop"), explain("./loop"))[1],
                                  words=("loop",), not_words=("profile", "download")),
    "symlink loop, trailing slash": Case(lambda t: (os.symlink("loop", t / "loop"), explain("loop/"))[1],
                                         words=("loop",), not_words=("profile", "download")),
    # Python 3.11's Path.resolve raises RuntimeError (not OSError) on a loop
    "symlink loop as a deployment's model (lock)": Case(
        lambda t: (os.symlink("loop", t / "loop"), ["lock", deployments(t, "- {name: a, model: loop, device: h100}\n")])[1],
        words=("d.yaml:1", "loops back"), not_words=("profile",)),
    "symlink loop as a deployment's model, ./ path (check --deployments)": Case(
        lambda t: (os.symlink("loop", t / "loop"),
                   ["check", ROOT / "profiles" / "lock" / "attn-select.lock", "--deployments",
                    deployments(t, "- {name: a, model: ./loop, device: h100}\n")])[1],
        words=("d.yaml:1", "loops back")),
    "a home folder of an unknown user": Case(lambda t: explain("~nosuchuser0/x"), words=("home folder",)),
    "a dangling symlink": Case(lambda t: (os.symlink("/nonexistent/x", t / "m"), explain("m"))[1],
                               words=("symbolic link", "does not exist"), not_words=("profile",)),
    "missing model/ with a trailing slash": Case(
        lambda t: explain("model/"), words=("no such file or folder",), not_words=("download",)),
    "a NUL in the model name": Case(lambda t: explain("a\0b"), words=("nul",)),
    "a NUL in the deployments file name": Case(lambda t: ["lock", "d\0.yaml"], words=("nul",)),
    "a NUL in a deployments file's model path": Case(
        lambda t: ["lock", deployments(t, '- {name: a, model: "m\\0/x", device: h100}\n')], words=("\\x00",)),
    "a terminal escape in a device name": Case(
        lambda t: ["lock", deployments(t, '- {name: a, model: llama-3.1-8b, device: "\\e[31mred"}\n')],
        words=("\\x1b[31mred",), not_words=("\x1b",)),
    "1 MB model name": Case(lambda t: explain("y" * 1_000_000), words=("too long",)),
    # --- command-line values ---
    "--flash-attn-version 5": Case(
        lambda t: ["explain", "llama-3.1-8b", "--device", "h100", "--flash-attn-version", "5"],
        words=("--flash-attn-version", "2, 3 or 4")),
    "--flash-attn-version 0": Case(
        lambda t: ["explain", "llama-3.1-8b", "--device", "h100", "--flash-attn-version", "0"],
        words=("--flash-attn-version", "2, 3 or 4")),
    "--flash-attn-version -1": Case(
        lambda t: ["explain", "llama-3.1-8b", "--device", "h100", "--flash-attn-version", "-1"],
        words=("--flash-attn-version", "2, 3 or 4")),
    "--block-size 0": Case(
        lambda t: ["explain", "llama-3.1-8b", "--device", "h100", "--block-size", "0"], words=("--block-size",)),
    "--capability in full-width digits": Case(
        lambda t: ["explain", "llama-3.1-8b", "--capability", "\uff19.\uff10"], words=("--capability",)),
    "--capability in full-width digits, no dot": Case(
        lambda t: ["explain", "llama-3.1-8b", "--capability", "\uff19\uff10"], words=("--capability",)),
    "capability in full-width digits in a deployments file": Case(
        lambda t: ["lock", deployments(t, "- {name: a, model: llama-3.1-8b, capability: \"\uff19.\uff10\"}\n")],
        words=("capability",)),
    # --- usage errors: one line like every other error ---
    "usage: unknown option": Case(lambda t: ["explain", "llama-3.1-8b", "--bogus"],
                                  words=("--bogus", "attn-select explain --help")),
    # click splits -pxp into -p -x -p and named only -p; the word as typed is named
    "usage: unknown short option of several letters": Case(
        lambda t: ["explain", "llama-3.1-8b", "--device", "h100", "-pxp", "2"],
        words=("no such option: -pxp (see attn-select explain --help)",)),
    "usage: bad integer": Case(lambda t: ["explain", "llama-3.1-8b", "--tp", "four"],
                               words=("--tp", "attn-select explain --help")),
    "usage: bad choice": Case(lambda t: ["explain", "llama-3.1-8b", "--format", "yaml"],
                              words=("--format", "attn-select explain --help")),
    "usage: missing argument": Case(lambda t: ["lock"], words=("deployments", "attn-select lock --help")),
    # click's FloatRange lets nan through (every comparison is false): a timeout that never expires
    "--engine-timeout nan": Case(lambda t: ["explain", "llama-3.1-8b", "--device", "h100", "--engine-timeout", "nan"],
                                 words=("--engine-timeout", "not a number of seconds")),
    # doctor took "" for "this Python"; explain and check refuse it
    "--vllm-python empty (doctor)": Case(lambda t: ["doctor", "--vllm-python", ""], words=("--vllm-python", "no such file")),
    "--import-timeout nan (doctor)": Case(lambda t: ["doctor", "--import-timeout", "nan"],
                                          words=("--import-timeout", "not a number of seconds")),
    "--worker-timeout nan (check)": Case(
        lambda t: ["check", ROOT / "profiles" / "lock" / "attn-select.lock", "--worker-timeout", "nan"],
        words=("--worker-timeout", "not a number of seconds")),
    "--max-seconds nan (tune)": Case(lambda t: ["tune", "llama-3.1-8b", "--device", "cpu", "--max-seconds", "nan"],
                                     words=("--max-seconds", "not a number of seconds")),
    "usage: unknown command": Case(lambda t: ["frobnicate"], words=("frobnicate", "attn-select --help")),
    "usage: option needs a value": Case(lambda t: ["check", "x.lock", "--format"],
                                        words=("--format", "attn-select check --help")),
    # --- deployments files and lockfiles ---
    "recursive YAML alias (lock)": Case(
        lambda t: ["lock", deployments(t, "deployments: &a [*a]\n")], words=("alias",)),
    "recursive YAML alias in a mapping (lock)": Case(
        lambda t: ["lock", deployments(t, "deployments:\n  - &d {name: a, overrides: *d}\n")], words=("alias",)),
    "billion laughs (lock)": Case(lambda t: ["lock", deployments(t, LAUGHS)], words=("alias",)),
    "billion laughs (check)": Case(lambda t: _lock_then_check(t, LOCK_HEAD + LAUGHS), words=("alias",)),
    "billion laughs (check --deployments)": Case(
        lambda t: ["check", ROOT / "profiles" / "lock" / "attn-select.lock", "--deployments",
                   deployments(t, LAUGHS)], words=("alias",)),
    # a tag on a list or mapping was dropped and the list read as data
    "YAML python tag on a list (lock)": Case(
        lambda t: ["lock", deployments(t, "- {name: a, model: !!python/object/apply:os.system [echo], device: h100}\n")],
        words=("d.yaml:1", "[0].model", "yaml tag")),
    "YAML python tag on a mapping (check)": Case(
        lambda t: _lock_then_check(t, "!!python/object:os.system {schema: attn-select.lock/1}\n"),
        words=("x.lock:1", "yaml tag")),
    "YAML set tag (lock)": Case(
        lambda t: ["lock", deployments(t, "- {name: a, model: !!set {x: null}, device: h100}\n")],
        words=("d.yaml:1", "yaml tag")),
    "100,000 deployments and no alias (lock)": Case(
        lambda t: ["lock", deployments(t, "".join(f"- {{name: d{i}, model: llama-3.1-8b, device: h100}}\n"
                                                  for i in range(100_000)))],
        words=("100,000 values", "split it"), not_words=("alias",)),
    "YAML nested 100,000 deep": Case(
        lambda t: ["lock", deployments(t, "deployments: " + "[" * 100_000 + "]" * 100_000 + "\n")],
        words=("nesting depth",)),
    "YAML integer of 5,000 digits": Case(
        lambda t: ["lock", deployments(t, "- {name: a, model: llama-3.1-8b, device: h100, overrides: {tp: "
                                       + "9" * 5000 + "}}\n")], words=("digits",)),
    "YAML unknown tag": Case(
        lambda t: ["lock", deployments(t, "- {name: a, model: !!python/name:os.system x, device: h100}\n")],
        words=("d.yaml:1",)),
    "YAML bad timestamp": Case(
        lambda t: ["lock", deployments(t, "- {name: a, model: llama-3.1-8b, device: h100, when: 2001-13-45}\n")],
        words=("d.yaml:1",)),
    "deployments file of 40 MB": Case(
        lambda t: ["lock", grown(deployments(t, "- {name: a}\n"), 40 << 20)], words=("mib",)),
    # -o naming an input replaced it with the output (the lockfile with check's report)
    "check -o the lockfile itself": Case(
        lambda t: (_lock_then_check(t, (ROOT / "profiles" / "lock" / "attn-select.lock").read_text())
                   + ["-o", str(t / "x.lock")]), words=("is the lockfile itself",)),
    "check -o the deployments file": Case(
        lambda t: ["check", ROOT / "profiles" / "lock" / "attn-select.lock", "--deployments",
                   deployments(t, EXAMPLE.read_text()), "-o", t / "d.yaml"],
        words=("is the deployments file itself",)),
    # the model path is written relative to -o's folder: Path.resolve raised RuntimeError on a loop
    "lock -o into a symlink loop": Case(
        lambda t: (os.symlink("loop", t / "loop"), folder(t, LLAMA),
                   ["lock", deployments(t, "- {name: a, model: ./m, device: h100}\n"), "-o", t / "loop" / "x.lock"])[2],
        words=("cannot write lockfile", "loop/x.lock")),
    "lock -o the deployments file": Case(
        lambda t: ["lock", deployments(t, EXAMPLE.read_text()), "-o", t / "d.yaml"],
        words=("is the deployments file itself",)),
    "flash_attn_version 5 in a deployments file": Case(
        lambda t: ["lock", deployments(t, "- {name: a, model: llama-3.1-8b, device: h100, "
                                       "overrides: {flash_attn_version: 5}}\n")], words=("2, 3 or 4",)),
    "max_model_len 1e12 in a deployments file": Case(
        lambda t: ["lock", deployments(t, "- {name: a, model: llama-3.1-8b, device: h100, "
                                       "overrides: {max_model_len: 1e12}}\n")],
        words=("max_model_len: '1e12' is not a length", "32k")),
    "a raw selector deployment with lock --engine sglang": Case(
        lambda t: ["lock", EXAMPLE, "--engine", "sglang"], words=("custom-head-256-sinks", "engine: vllm")),
    # --- tune --workload FILE (read with yaml.safe_load and no bounds before) ---
    "workload file not UTF-8 (tune)": Case(
        lambda t: tune_workload(t, b"workload:\n- decode: 1x16\xff\n"), words=("w.yaml:2", "utf-8")),
    "workload file a FIFO (tune)": Case(
        lambda t: (os.mkfifo(t / "w.yaml"), ["tune", "llama-3.1-8b", "--device", "cpu", "--workload", t / "w.yaml"])[1],
        words=("regular file",)),
    "workload file nested 100,000 deep (tune)": Case(
        lambda t: tune_workload(t, "workload: " + "[" * 100_000 + "]" * 100_000 + "\n"), words=("nesting",)),
    "workload file billion laughs (tune)": Case(
        lambda t: tune_workload(t, LAUGHS.replace("deployments: [{name: n, model: llama-3.1-8b, device: h100, "
                                                  "overrides: {dtype: *j}}]", "workload: *j")),
        words=("alias",)),
    "workload file python tag (tune)": Case(
        lambda t: tune_workload(t, "workload: !!python/object/apply:os.system [decode:1x16]\n"), words=("yaml tag",)),
    "workload file bad date (tune)": Case(
        lambda t: tune_workload(t, "workload:\n- {decode: 2001-13-45}\n"), words=("w.yaml:2", "month")),
    "workload file duplicate key (tune)": Case(
        lambda t: tune_workload(t, "workload:\n- {decode: 1x16, decode: 2x16}\n"), words=("duplicate key",)),
    "workload weight of 5,000 digits (tune)": Case(
        lambda t: tune_workload(t, "workload:\n- {decode: 1x16, weight: " + "9" * 5000 + "}\n"), words=("digits",)),
    "workload weight inf (tune)": Case(
        lambda t: tune_workload(t, "workload:\n- {decode: 1x16, weight: .inf}\n"), words=("finite",)),
    "workload weight inf on the command line (tune)": Case(
        lambda t: ["tune", "llama-3.1-8b", "--device", "cpu", "--workload", "decode:1x16@inf"], words=("finite",)),
    "workload of 1,000 items (tune)": Case(
        lambda t: tune_workload(t, "workload:\n" + "".join(f"- decode: {i + 1}x16\n" for i in range(1000))),
        words=("1,000 workload items", "give fewer")),
    "a NUL in --workload (tune)": Case(
        lambda t: ["tune", "llama-3.1-8b", "--device", "cpu", "--workload", "decode:1x16\0"], words=("--workload",)),
    # a grid of 20,000 x 20,000 values was built in memory (4e8 shapes) before anything ran
    "--batches of 20,000 values (tune)": Case(
        lambda t: ["tune", "llama-3.1-8b", "--device", "cpu", "--batches", ",".join(map(str, range(1, 20_001)))],
        words=("--batches", "20,000 values")),
    "a sweep of 64 x 64 x 4 points (tune)": Case(
        lambda t: ["tune", "llama-3.1-8b", "--device", "cpu", "--batches", ",".join(map(str, range(1, 65))),
                   "--contexts", ",".join(map(str, range(1, 65))), "--page-sizes", "16,32,64,128"],
        words=("points", "give fewer values")),
    # an empty --backend ran every backend on every shape, as no --backend does
    "--backend empty (run)": Case(lambda t: ["run", "llama-3.1-8b", "--device", "cpu", "--backend", ""],
                                  words=("--backend", "names no backend")),
    "--backend a lone comma (run)": Case(lambda t: ["run", "llama-3.1-8b", "--device", "cpu", "--backend", ","],
                                         words=("--backend", "names no backend")),
    # "fp8xyz" passed the fp8* test, and the sweep ran nothing (exit 0, no recommendation)
    "--kv-cache-dtypes fp8xyz (tune)": Case(
        lambda t: ["tune", "llama-3.1-8b", "--device", "cpu", "--kv-cache-dtypes", "auto,fp8xyz", "--max-seconds", "0"],
        words=("--kv-cache-dtypes", "unknown kv-cache dtype 'fp8xyz'")),
    "--kv-cache-dtype fp8xyz (run --gpus)": Case(
        lambda t: ["run", "llama-3.1-8b", "--device", "cpu", "--gpus", "0", "--kv-cache-dtype", "fp8xyz"],
        words=("unknown kv-cache dtype 'fp8xyz'",)),
    # the JIT cache folders were created with no guard: NotADirectoryError, an internal error
    "--jit-cache on a file (run --gpus)": Case(
        lambda t: ((t / "f").write_text("x"),
                   ["run", "llama-3.1-8b", "--device", "cpu", "--gpus", "0", "--jit-cache", t / "f"])[1],
        words=("--jit-cache", "cannot create the jit cache folder", "not a directory")),
    "--jit-cache in a symlink loop (run --gpus)": Case(
        lambda t: (os.symlink("loop", t / "loop"),
                   ["run", "llama-3.1-8b", "--device", "cpu", "--gpus", "0", "--jit-cache", t / "loop"])[1],
        words=("--jit-cache", "symbolic links")),
    # each CPU slot is a worker process importing torch: 101 of them were started at once
    "--gpus index of 5,000 digits (run)": Case(
        lambda t: ["run", "llama-3.1-8b", "--device", "cpu", "--gpus", "9" * 5000], words=("--gpus", "not a gpu index")),
    "more CPU worker slots than CPUs (run --gpus)": Case(
        lambda t: ["run", "llama-3.1-8b", "--device", "cpu", "--gpus",
                   ",".join(map(str, range(max(2, os.cpu_count() or 1) + 1)))],
        words=("worker slots", "name fewer")),
    "--kernels empty (explain)": Case(lambda t: ["explain", "llama-3.1-8b", "--device", "h100", "--kernels", ""],
                                      words=("--kernels", "names no kernel", "none")),
    "--kernels a lone comma (matrix)": Case(lambda t: ["matrix", "--capability", "9.0", "--kernels", ","],
                                            words=("--kernels", "names no kernel")),
    "--contexts empty (tune)": Case(lambda t: ["tune", "llama-3.1-8b", "--device", "cpu", "--contexts", ""],
                                    words=("--contexts",)),
    # --- messages: the user's field names, values cut short ---
    "1 MB value of a config field": Case(
        lambda t: explain(folder(t, {**LLAMA, "architectures": "A" * 1_000_000})), words=("architectures",)),
    "1 MB value in a deployments file": Case(
        lambda t: ["lock", deployments(t, "- {name: a, model: llama-3.1-8b, device: " + "d" * 1_000_000 + "}\n")],
        words=("device",)),
    "1 MB backend in a deployments file": Case(
        lambda t: ["lock", deployments(t, "- {name: a, model: llama-3.1-8b, device: h100, overrides: {backend: "
                                       + "B" * 1_000_000 + "}}\n")], words=("backend",)),
    # Gemma-3's class declares use_bidirectional_attention (a bool); on Llama, which never reads it,
    # the same value refuses nothing, as in vLLM
    "a declared field's wrong type": Case(
        lambda t: explain(folder(t, {**GEMMA3_TEXT, "use_bidirectional_attention": 5})),
        words=("use_bidirectional_attention", "true or false"), not_words=(".bool", "use_bidirectional_attention.")),
    "a list item's wrong type": Case(
        lambda t: explain(folder(t, {**LLAMA, "architectures": ["LlamaForCausalLM", 7]})),
        words=("architectures[1]",), not_words=("architectures.1",)),
    "a multi-line value": Case(
        lambda t: ["lock", deployments(t, "- {name: a, model: llama-3.1-8b, device: \"h1\\n\\nh2\"}\n")],
        words=("device",)),
}


@pytest.fixture(scope="module", autouse=True)
def _warm():
    """Import what the commands import, once, before the first fork: each
    child then starts with it loaded, and the file stays fast."""
    import attn_select.cli.app as app
    import attn_select.selector.lock  # noqa: F401 - the gate's pydantic models
    import attn_select.selector.model.files  # noqa: F401 - the model folder reader
    from attn_select.selector.profiles import load_model

    app._register()
    load_model("llama-3.1-8b")


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_input_is_one_line_and_exit_2(name, tmp_path):
    case = CASES[name]
    argv = [str(a) for a in case.make(tmp_path)]
    got = run_bounded(argv, tmp_path, case.setup)
    assert got.rc is not None, f"{name}: {got.died}"
    err = got.err
    assert "Traceback" not in err and "internal error" not in err, err[:2000]
    assert got.rc == 2, (got.rc, err[:2000], got.out[:2000])
    assert err.count("\n") == 1 and err.endswith("\n"), f"not one line on stderr: {err[:2000]!r}"
    assert len(err) < 1000, f"{len(err)} characters: {err[:300]!r}"
    assert err.startswith("error: "), err
    line = err.lower()
    for word in case.words:
        assert word.lower() in line, (word, err)
    for word in case.not_words:
        assert word.lower() not in line, (word, err)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads a chmod 000 file")
def test_a_real_chmod_000_params_json(tmp_path):
    """The same as the EACCES cases above, with a real permission bit."""
    m = folder(tmp_path, params__json=MISTRAL_PARAMS, consolidated__safetensors=safetensors({}))
    (m / "params.json").chmod(0)
    got = run_bounded(explain(m), tmp_path)
    assert got.rc == 2 and got.err.count("\n") == 1 and "permission denied" in got.err.lower(), got


def test_a_valid_model_still_explains_under_the_same_limits(tmp_path):
    """The guard itself lets a real model through (the limits are not so
    tight that every case fails for the wrong reason)."""
    profile = (MODELS_DIR / "llama-3.1-8b.yaml").read_text()
    assert "LlamaForCausalLM" in profile
    got = run_bounded(explain(folder(tmp_path, LLAMA)), tmp_path)
    assert got.rc == 0 and got.err == "", got
    assert "FLASH_ATTN" in got.out


def test_a_missing_required_package_is_one_line_naming_it(monkeypatch, capsys):
    # A broken install (pydantic_core not carried over to a machine): the error names the
    # distribution to install, exit 2, instead of "internal error" or a misleading message.
    import attn_select.selector.profiles as profiles

    def missing(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'pydantic_core'", name="pydantic_core")

    monkeypatch.setattr(profiles, "load_model", missing)
    assert main(["run", "llama-3.1-8b", "--device", "cpu"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: attn-select needs the Python package 'pydantic-core', which is not installed here: "
                   "pip install pydantic-core (or reinstall attn-select)"]


def test_a_missing_module_of_our_own_stays_an_internal_error(monkeypatch, capsys):
    import attn_select.selector.profiles as profiles

    def missing(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'attn_select.nowhere'", name="attn_select.nowhere")

    monkeypatch.setattr(profiles, "load_model", missing)
    assert main(["run", "llama-3.1-8b", "--device", "cpu"]) == 101
    assert capsys.readouterr().err.startswith("internal error: ModuleNotFoundError")


@pytest.mark.parametrize("argv, flag", [
    (["run", "llama-3.1-8b", "--device", "cpu", "--gpus", "0", "--windows", str(10**9)], "--windows"),
    (["tune", "llama-3.1-8b", "--device", "cpu", "--repeats", str(10**9)], "--repeats"),
])
def test_a_repeat_count_past_the_bound_is_refused_before_any_work(argv, flag, capsys):
    """--windows / --repeats 10**9 times every backend that many times (days):
    refused at parse time like --checks, one line, exit 2."""
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert flag in err and "1<=x<=100" in err, err


@pytest.mark.parametrize("command", ["run", "tune"])
def test_a_check_count_past_the_bound_is_refused_before_any_work(command, capsys):
    """--checks 10**9 would run for days (each check is a step and its float32
    reference): refused at parse time, one line, exit 2."""
    code = main([command, "llama-3.1-8b", "--device", "cpu", "--checks", str(10**9)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "--checks" in err and "1<=x<=100" in err


@pytest.mark.parametrize("name", ["my 'model", 'odd "name', "it's a model \"folder\""])
def test_a_model_folder_whose_name_has_spaces_and_quotes_is_read_as_a_folder(tmp_path, name):
    """MODEL with a space may be a pasted vllm serve line, but one that shlex
    cannot split (an unbalanced quote) and that starts no vLLM command is a
    path: the folder is read, not refused as a command line."""
    m = tmp_path / name
    m.mkdir()
    (m / "config.json").write_text(json.dumps(LLAMA))
    got = run_bounded(explain(name), tmp_path)
    assert got.rc == 0 and got.err == "", got
    assert "LlamaForCausalLM" in got.out
    got = run_bounded(explain(f"no {name}"), tmp_path)  # not there: the model loader's error, not shlex's
    assert got.rc == 2 and "command line" not in got.err and "profile" in got.err, got


@pytest.mark.parametrize("where", ["nope/x", "file.txt/x"])
def test_a_plot_path_in_no_folder_is_refused_before_the_sweep(tmp_path, monkeypatch, capsys, where):
    """tune --plot into a folder that is not there failed only when the plots
    were written, after the whole sweep (hours on a GPU)."""
    pytest.importorskip("matplotlib")
    import attn_select.cli.tune as tune

    def no_sweep(*args, **kwargs):
        raise AssertionError("the sweep ran before --plot was checked")

    monkeypatch.setattr(tune, "execute", no_sweep)
    (tmp_path / "file.txt").write_text("x")
    code = main(["tune", "llama-3.1-8b", "--device", "cpu", "--plot", str(tmp_path / where)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith("error: --plot ") and "is not an existing folder" in err, err


# attn-select in a fresh interpreter, for the tests of what standard output is
MAIN = (sys.executable, "-c", "import sys; from attn_select.cli.app import main; sys.exit(main(sys.argv[1:]))")


def _with_stdout_closed(argv: list[str]):
    """attn-select ARGV started with standard output closed, as `>&-` starts it."""
    import subprocess

    return subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", *MAIN, *argv], stderr=subprocess.PIPE, text=True,
                          timeout=120)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("argv", [
    ["explain", "llama-3.1-8b", "--device", "h100"],
    ["explain", "llama-3.1-8b", "--device", "h100", "--format", "json"],
    ["profiles"],
    ["explain", "--help"],  # rich writes the help
])
def test_a_full_standard_output_is_one_line_not_an_internal_error(argv):
    """> /dev/full (a full disk or quota): the report cannot be written. One
    line naming standard output and why, exit 2, as lock -o /dev/full is;
    and no second error from the interpreter's flush at exit."""
    import subprocess

    with open("/dev/full", "w") as full:
        got = subprocess.run([*MAIN, *argv], stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert got.returncode == 2, (got.returncode, got.stderr)
    assert got.stderr == "error: cannot write the report to standard output: No space left on device\n", got.stderr


@pytest.mark.parametrize("argv", [
    ["explain", "llama-3.1-8b", "--device", "h100"],
    ["explain", "llama-3.1-8b", "--device", "h100", "--format", "json"],
    ["explain", "--help"],  # rich writes the help
])
def test_a_closed_standard_output_is_one_line_not_a_silent_success(argv):
    """>&-: Python starts with sys.stdout None and click's echo wrote nothing,
    so the report was lost with exit 0. One line and exit 2, as > /dev/full."""
    got = _with_stdout_closed(argv)
    assert got.returncode == 2, (got.returncode, got.stderr)
    assert got.stderr == "error: cannot write the report to standard output: it is closed\n", got.stderr


def test_a_closed_standard_output_is_no_error_where_nothing_goes_to_it(tmp_path):
    """lock -o FILE writes its lockfile and its note (to stderr) and nothing to
    standard output: closed, it is not missed."""
    out = tmp_path / "x.lock"
    got = _with_stdout_closed(["lock", str(EXAMPLE), "-o", str(out)])
    assert got.returncode == 0 and got.stderr.startswith(f"wrote {out}:"), got.stderr
    assert out.stat().st_size > 0


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_a_closed_standard_output_lends_its_number_to_no_file(tmp_path):
    """With descriptor 1 closed, the first file opened would get it, and what a
    child process writes to its standard output would land in that file:
    main() holds descriptor 1 on /dev/null before the command opens anything."""
    import subprocess

    probe = ("import os, sys; from attn_select.cli.app import main; code = main(sys.argv[1:]); "
             "f = open(sys.argv[-1] + '.probe', 'w'); "
             "sys.stderr.write('fd1=' + os.readlink('/proc/self/fd/1') + ' file=' + str(f.fileno()) + chr(10)); "
             "sys.exit(code)")
    out = tmp_path / "x.lock"
    got = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-c", probe, "lock", str(EXAMPLE),
                          "-o", str(out)], stderr=subprocess.PIPE, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    line = got.stderr.strip().splitlines()[-1]
    assert line.startswith(f"fd1={os.devnull} file=") and line != f"fd1={os.devnull} file=1", got.stderr


@pytest.mark.parametrize("entry", [
    '"a string"', "[1, 2]", "{}", '{"nope": 1}', nested(100_000), "\xff\xfe", "{" * 3, "FIFO", "FOLDER",
])
def test_a_damaged_tune_cache_entry_is_measured_again(tmp_path, entry):
    """tune --cache-dir is the user's folder: an entry another version wrote,
    a damaged one, a FIFO or a folder in its place is a point to measure
    again, never a crash (a JSON string was an AttributeError) or a hang."""
    from attn_select.selector.tune_result import ResultCache

    key = "ab" + "0" * 30
    path = tmp_path / "ab" / f"{key}.json"
    path.parent.mkdir()
    if entry == "FIFO":
        os.mkfifo(path)
    elif entry == "FOLDER":
        path.mkdir()
    else:
        path.write_bytes(entry.encode("utf-8", "surrogateescape") if entry.isascii() else entry.encode("latin-1"))
    assert ResultCache(tmp_path).get(key) is None


@pytest.mark.parametrize("argv", [
    ["lock", str(EXAMPLE), "-o", "{t}/nope/x.lock"],
    ["check", str(ROOT / "profiles" / "lock" / "attn-select.lock"), "-o", "{t}/nope/report.txt"],
])
def test_an_output_in_no_folder_is_refused_before_any_work(tmp_path, monkeypatch, capsys, argv):
    """-o into a folder that is not there was found only when the file was
    written, after every deployment had been evaluated."""
    import attn_select.selector.lock as lock

    def no_work(*args, **kwargs):
        raise AssertionError("the deployments were evaluated before -o was checked")

    monkeypatch.setattr(lock, "lock_deployments", no_work)
    monkeypatch.setattr(lock, "run_check", no_work)
    code = main([a.format(t=tmp_path) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "No such file or directory" in err, err


@pytest.mark.parametrize("dtype", ["half", "float", "auto"])
@pytest.mark.parametrize("argv", [
    ["tune", "llama-3.1-8b", "--device", "cpu", "--max-seconds", "0"],
    ["run", "llama-3.1-8b", "--device", "cpu", "--gpus", "0"],
])
def test_vllms_dtype_names_are_taken_by_tune_and_a_fanned_out_run(monkeypatch, capsys, argv, dtype):
    """--dtype is vLLM's flag (help: auto, half, float16, bfloat16, float,
    float32), and explain and run take those; tune and run --gpus refused
    half, float and auto ("choose from float16, bfloat16, float32")."""
    import attn_select.cli.fanout as fanout
    import attn_select.cli.tune as tune

    class Ran(Exception):
        pass

    def past_the_checks(*args, **kwargs):
        raise Ran

    monkeypatch.setattr(tune, "run_target", past_the_checks, raising=False)
    monkeypatch.setattr("attn_select.cli.run.run_target", past_the_checks)
    monkeypatch.setattr(fanout, "check_shapes", past_the_checks, raising=False)
    try:
        code = main([*argv, "--dtype", dtype])
    except Ran:
        return
    err = capsys.readouterr().err
    assert code != 2 or "dtype" not in err, err


@pytest.mark.parametrize("argv", [
    ["tune", "llama-3.1-8b", "--device", "cpu"],
    ["run", "llama-3.1-8b", "--device", "cpu", "--gpus", "0"],
])
def test_an_unknown_dtype_is_still_refused_with_vllms_choices(capsys, argv):
    assert main([*argv, "--dtype", "bf16"]) == 2
    err = capsys.readouterr().err
    assert "unknown dtype 'bf16'; choose from auto, half, float16, bfloat16, float, float32" in err, err
