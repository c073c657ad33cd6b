"""`--engine sglang` finds a config class as SGLang 0.5.23's get_config does
(selector/model/config_class.py): transformers 5.19's AutoConfig with
SGLang's registry, a remote AutoConfig only with --trust-remote-code, and a
model type neither has refused. The differential cases put the same configs
to SGLang's own ServerArgs resolution (tests/sglang_oracle; skipped without a
sglang 0.5.23 python)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attn_select.selector.config import Capability
from attn_select.selector.errors import UserError
from attn_select.selector.model import model_facts
from tests.test_sglang_differential import sglang_python

from .generated import assert_regenerates
from .sglang.helpers import sglang_answers

H100 = Capability(9, 0)
CUSTOM = "contains custom code which must be executed"
UNKNOWN = "Transformers does not recognize this architecture"


def _dense(model_type: str | None, arch: str = "LlamaForCausalLM", **extra) -> dict:
    cfg = {"architectures": [arch], "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 4,
           "num_hidden_layers": 2, "intermediate_size": 2048, "vocab_size": 1024, "max_position_embeddings": 4096,
           "torch_dtype": "bfloat16", **extra}
    if model_type is not None:
        cfg["model_type"] = model_type
    return cfg


REMOTE = {"auto_map": {"AutoConfig": "configuration_foo.FooConfig",
                       "AutoModelForCausalLM": "modeling_foo.FooForCausalLM"}}

# (name, config, trust_remote_code, SGLang's refusal: a piece of its error, or None when it loads)
CASES = [
    ("llama", _dense("llama"), False, None),
    ("unknown model type", _dense("foo_custom"), False, UNKNOWN),
    ("unknown model type, trusted, no remote class", _dense("foo_custom"), True, UNKNOWN),
    ("remote AutoConfig, untrusted", _dense("foo_custom", **REMOTE), False, CUSTOM),
    ("remote AutoConfig, no model_type, untrusted", _dense(None, **REMOTE), False, CUSTOM),
    ("remote AutoConfig beside a known type, untrusted", _dense("llama", **REMOTE), False, None),
    # trusted, AutoConfig loads the remote class first, even for a type it knows: its file must be there
    ("remote AutoConfig beside a known type, trusted, no file", _dense("llama", **REMOTE), True,
     "does not appear to have a file named configuration_foo.py"),
    ("remote AutoConfig, trusted, no file", _dense("foo_custom", **REMOTE), True,
     "does not appear to have a file named configuration_foo.py"),
    # transformers 5.20 has Molmo2's class (vLLM), 5.19 has not (SGLang)
    ("a model type only transformers 5.20 has", _dense("molmo2", arch="Molmo2ForConditionalGeneration"), False,
     UNKNOWN),
    # SGLang registers EXAONE's class, transformers 5.20 has none (vLLM refuses it)
    ("a model type only SGLang registers", _dense("exaone", arch="ExaoneForCausalLM"), False, None),
    ("LongCat by architecture, no model type", _dense(None, arch="LongcatFlashForCausalLM"), False, None),
]


def _ours(config: dict, trust: bool, folder: Path) -> str | None:
    try:
        model_facts(config, name="m", capability=H100, engine="sglang", trust_remote_code=trust, code_folder=folder)
    except UserError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("name,config,trust,refusal", CASES, ids=[c[0] for c in CASES])
def test_sglang_finds_a_config_class_as_sglang_does(name, config, trust, refusal, tmp_path):
    # config_class only: whether the rest of SGLang's resolution models the architecture is not asked here
    from attn_select.selector.model.config_class import SGLANG_LOADER, check_config_class

    if refusal is None:
        check_config_class(config, "config.json", trust, tmp_path, SGLANG_LOADER)
    else:
        with pytest.raises(UserError, match=refusal):
            check_config_class(config, "config.json", trust, tmp_path, SGLANG_LOADER)


def test_vllm_and_sglang_differ_where_their_transformers_and_registries_do():
    exaone = _dense("exaone", arch="ExaoneForCausalLM")
    with pytest.raises(UserError, match="vLLM 0.33.0"):
        model_facts(exaone, name="m", capability=H100)
    molmo2 = _dense("molmo2", arch="Molmo2ForConditionalGeneration")
    with pytest.raises(UserError, match=f"{UNKNOWN}.*transformers 5.19, which SGLang 0.5.23 installs"):
        model_facts(molmo2, name="m", capability=H100, engine="sglang")


def test_the_remote_class_loads_when_its_file_is_there(tmp_path):
    (tmp_path / "configuration_foo.py").write_text("from transformers import PretrainedConfig\n"
                                                   "class FooConfig(PretrainedConfig):\n    model_type = 'foo'\n")
    assert _ours(_dense("foo_custom", **REMOTE), True, tmp_path) is None


def test_explain_engine_sglang_refuses_in_one_line(capsys, tmp_path):
    from tests.cli.helpers import run

    (tmp_path / "config.json").write_text(json.dumps(_dense("foo_custom", **REMOTE)))
    rc, out, err = run(capsys, "explain", tmp_path, "--device", "h100", "--engine", "sglang")
    assert rc == 2 and not out and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert CUSTOM in err and "SGLang runs it only with trust_remote_code" in err


@pytest.mark.sglang
@pytest.mark.slow
def test_against_sglang():
    answers = sglang_answers([(c, {"trust_remote_code": True} if trust else {}) for _, c, trust, _ in CASES])
    for (name, config, trust, refusal), res in zip(CASES, answers):
        error = res["error"]
        refused_in_parse = error is not None and error.get("where") == "parse"
        assert refused_in_parse == (refusal is not None), (name, error)
        if refusal is not None:
            assert refusal in error["message"], (name, error["message"])


@pytest.mark.sglang
@pytest.mark.slow
def test_the_generated_table_is_sglangs():
    python, why = sglang_python()
    if python is None:
        pytest.skip(why)
    assert_regenerates(python, "sglang_config_types")


def test_explain_engine_both_reads_the_config_once_for_each_engine(capsys, tmp_path):
    """A model type only transformers 5.20 has loads for vLLM and not for SGLang (5.19): --engine both
    refuses with SGLang's reason, where it used to show vLLM's reading for SGLang too."""
    from tests.cli.helpers import run

    (tmp_path / "config.json").write_text(json.dumps(_dense("molmo2", arch="Molmo2ForConditionalGeneration")))
    rc, out, _ = run(capsys, "explain", tmp_path, "--device", "h100")
    assert rc == 0 and out
    rc, out, err = run(capsys, "explain", tmp_path, "--device", "h100", "--engine", "both")
    assert rc == 2 and not out and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "SGLang 0.5.23" in err and "5.19" in err
