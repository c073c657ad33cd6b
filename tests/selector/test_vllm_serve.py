"""selector/vllm_serve.py: the pasted vllm serve line's parser, and its
option table against vLLM's own parser (when a python with vLLM is there)."""

import subprocess
from pathlib import Path

import pytest

from attn_select.selector import vllm_serve
from attn_select.selector.errors import UserError
from attn_select.selector.overrides import FIELDS
from .model_oracle_client import vllm_python

ROOT = Path(__file__).resolve().parents[2]


def parse(line: str) -> vllm_serve.ServeLine:
    return vllm_serve.parse_serve_line(vllm_serve.command_tokens(line, None))


def test_every_vllm_flag_an_overrides_field_names_is_a_vllm_option():
    for f in FIELDS:
        for flag in f.what_if.vllm_flags:
            assert flag in vllm_serve._table(), f"{f.name}: vLLM 0.33.0's vllm serve has no {flag}"
    for flag in (*vllm_serve.NOT_MODELLED, *vllm_serve._LOAD_OPTIONS, "--attention-config",
                 "--model", "--config"):
        assert flag in vllm_serve._table(), flag


def test_what_a_line_sets():
    line = parse("vllm serve org/m -tp 4 -dcp 2 -pcp 2 --dtype half --kv-cache-dtype fp8 --block-size 32 "
                 "--max-model-len 1K --revision v2 --download-dir /d --disable-sliding-window --language-model-only")
    assert line.model == "org/m"
    assert line.values == {"dtype": "half", "kv_cache_dtype": "fp8", "block_size": 32, "tp": 4, "dcp_size": 2,
                           "max_model_len": 1024, "pcp_size": 2}
    assert line.load == {"revision": "v2", "cache_dir": "/d", "disable_sliding_window": True, "mm_inputs": False}
    assert line.notes == ()


def test_on_off_options_read_their_negative_spellings():
    assert parse("vllm serve m --enable-sliding-window").load == {"disable_sliding_window": False}
    assert parse("vllm serve m --no-language-model-only").load == {"mm_inputs": True}


def test_flexible_argument_parser_rewrites():
    line = parse("vllm serve m --tensor_parallel_size 2 -O3 --attention-config.flash_attn_version=3 "
                 "--attention_config.use_non_causal true --max-model-len=-1")
    assert line.values == {"tp": 2, "flash_attn_version": 3, "use_non_causal": True, "max_model_len": -1}
    assert line.notes == ("ignored (attn-select's model of vLLM's selection does not read them): "
                          "--optimization-level",)


def test_the_last_of_a_repeated_option_wins_as_in_argparse():
    assert parse("vllm serve m -tp 2 --tensor-parallel-size 8").values == {"tp": 8}


def test_model_sources():
    # vllm serve: the positional (vLLM moves --model to the front); api_server reads --model
    assert parse("vllm serve --model a").model == "a"
    line = parse("python -m vllm.entrypoints.openai.api_server b --model a")
    assert line.model == "a" and "ignored: the positional 'b'" in line.notes[0]
    line = parse("vllm serve --port 1")
    assert line.model == vllm_serve.DEFAULT_MODEL and "vLLM's default" in line.notes[0]
    assert parse("python -m vllm.entrypoints.cli.main serve x").model == "x"


def test_environment_assignments_are_named():
    line = parse("VLLM_USE_V1=1 CUDA_VISIBLE_DEVICES=0 vllm serve m")
    assert line.notes == ("not read: the environment assignments VLLM_USE_V1, CUDA_VISIBLE_DEVICES",)


def test_nargs_plus_takes_every_value_up_to_the_next_option():
    line = parse("vllm serve m --served-model-name a b c -tp 2")
    assert line.values == {"tp": 2}


def test_not_a_serve_line():
    assert vllm_serve.command_tokens("llama-3.1-8b", None) is None
    assert vllm_serve.command_tokens("vllm bench m", None) is None
    with pytest.raises(UserError):
        vllm_serve.command_tokens("llama-3.1-8b", ["x"])


@pytest.mark.vllm
@pytest.mark.slow
def test_option_table_is_vllms_parser():
    out = subprocess.run([vllm_python(), str(ROOT / "tests" / "tools" / "vllm_serve_flags.py")],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    stored = (ROOT / "selector" / "vllm_serve_flags.py").read_text(encoding="utf-8")
    assert out.stdout == stored, "regenerate selector/vllm_serve_flags.py with tests/tools/vllm_serve_flags.py"


def test_option_table_is_generated_data():
    # the module is the generator's output format: header, one option a line
    text = (ROOT / "selector" / "vllm_serve_flags.py").read_text(encoding="utf-8")
    rows = vllm_serve.SERVE_OPTIONS.strip().splitlines()
    assert len(rows) > 300 and all(r.split()[0].partition(":")[0] in ("0", "1", "?", "+") for r in rows)
    kinds = {"", "int", "float", "hint"}
    assert all(r.split()[0].partition(":")[2] in kinds | {k + "?" for k in kinds - {""}} for r in rows)
    bounds = vllm_serve._bounds()
    assert len(bounds) > 20 and all(o in vllm_serve._table() and "." in where and b
                                    for o, rows in bounds.items() for where, b in rows)
    assert "tests/tools/vllm_serve_flags.py" in text
    spellings = [s.lstrip("!") for r in rows for s in r.split()[1:]]
    assert len(spellings) == len(set(spellings))  # each spelling names one option


# values around every bound and through every converter: numbers at, past and inside the bounds,
# human-readable ints, optional_type's "None" / "", and what float() takes that no bound holds for
_PROBE_VALUES = ("0", "1", "-1", "2", "0.5", "1.5", "65536", "2k", "1.5K", "1_000", "+3", "None", "", "nan",
                 "inf", "-inf", "abc")


@pytest.mark.vllm
@pytest.mark.slow
def test_noted_option_values_are_refused_where_vllm_refuses_them():
    """Every option with value bounds, a numeric converter or a list of choices,
    and no Overrides field of its own (those check their values themselves):
    attn-select refuses the line exactly where vLLM's parser or its engine
    config does (a pydantic ValidationError for a field's bound); a failure of
    vLLM's for another reason is not compared."""
    import json

    fields = vllm_serve._field_by_option()
    checked = {o.name for o in vllm_serve._table().values() if o.name not in fields and o.arity in ("1", "+")
               and (o.kind or o.name in vllm_serve._bounds() or o.name in vllm_serve._choices())}
    options = sorted(checked)
    assert {"--gpu-memory-utilization", "--max-num-batched-tokens", "--scheduling-policy"} <= checked
    # each option's own choices, mixed-case and dashed spellings of them, and the probe values
    listed = {o: sorted(vllm_serve._choices().get(o, ("-", ()))[1])[:3] for o in options}
    cases = [[o, v] for o in options
             for v in (*_PROBE_VALUES, *listed[o], *(c.upper().replace("_", "-") for c in listed[o]))]
    out = subprocess.run([vllm_python(), str(ROOT / "tests" / "selector" / "serve_value_oracle.py")],
                         input=json.dumps(cases), capture_output=True, text=True, timeout=1500)
    assert out.returncode == 0, out.stderr[-2000:]
    answers = json.loads(out.stdout)
    differ, compared = [], 0
    for (option, value), vllm in zip(cases, answers):
        if vllm["refused"] == "other":
            continue
        compared += 1
        try:
            parse(f"vllm serve m {option}={value}")
            ours = None
        except UserError as exc:
            ours = str(exc)
        if (ours is None) != (vllm["refused"] is None):
            differ.append((option, value, vllm["refused"], vllm["detail"][:120], ours))
    assert compared > len(cases) // 2
    assert not differ, "\n".join(map(str, differ))
