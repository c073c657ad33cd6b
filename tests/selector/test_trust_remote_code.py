"""vLLM's --trust-remote-code: a config.json whose config class or model
class only the checkpoint's own code has (auto_map) is refused by vLLM 0.33.0
without it, and so by attn-select; with it (explain's --trust-remote-code, a
pasted `vllm serve ... --trust-remote-code`, a deployment's
``trust_remote_code: true``) its fields are read as given.

Where vLLM refuses: transformers' AutoConfig.from_pretrained (get_config
passes trust_remote_code=False without the flag) when auto_map names an
AutoConfig and config.json's model_type has no class of its own (transformers'
CONFIG_MAPPING, where vLLM has registered its _CONFIG_REGISTRY first); the
model registry's Transformers backend when an unregistered architecture has
only auto_map's remote AutoModel class. The differential cases run vLLM's
own engine config (tests/selector/model_oracle.py; marker ``vllm``, skipped
without a vLLM 0.33.0 python).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attn_select.selector import lock as L
from attn_select.selector.config import Capability
from attn_select.selector.errors import UserError
from attn_select.selector.model import facts_from_path, model_facts
from tests.cli.helpers import run

from . import model_cases_archs
from .model_oracle_client import facts_agreeing_with_vllm, run_model_oracle

H100 = Capability(9, 0)
REFUSED = "contains custom code which must be executed to correctly load the model"

ORION = {"architectures": ["OrionForCausalLM"], "model_type": "orion",
         "auto_map": {"AutoConfig": "configuration_orion.OrionConfig",
                      "AutoModelForCausalLM": "modeling_orion.OrionForCausalLM"},
         "hidden_size": 2048, "intermediate_size": 4096, "num_attention_heads": 16, "num_key_value_heads": 16,
         "num_hidden_layers": 2, "vocab_size": 1000, "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}
# a model type transformers knows, an architecture neither vLLM nor transformers has: only the
# remote AutoModel class could build it
REMOTE_MODEL_ONLY = {"architectures": ["FooForCausalLM"], "model_type": "llama",
                     "auto_map": {"AutoModelForCausalLM": "modeling_foo.FooForCausalLM"},
                     "hidden_size": 1024, "intermediate_size": 2048, "num_attention_heads": 8,
                     "num_key_value_heads": 8, "num_hidden_layers": 2, "vocab_size": 1000,
                     "torch_dtype": "bfloat16"}


def _facts(config: dict, **kw):
    return model_facts(config, name="m", capability=H100, **kw)


# --- the config class ------------------------------------------------------------------


def test_a_remote_config_class_is_refused_without_trust_remote_code():
    with pytest.raises(UserError, match=f"{REFUSED}.*configuration_orion.OrionConfig.*pass --trust-remote-code"):
        _facts(ORION)
    f = _facts(ORION, trust_remote_code=True)
    assert f.architecture == "OrionForCausalLM" and f.head_size == 128
    assert any("with --trust-remote-code vLLM loads auto_map's remote AutoConfig" in n for n in f.notes)


def test_a_remote_config_class_without_a_model_type_is_refused_too():
    # AutoConfig: no model_type is no local class, so the remote one needs trust
    config = {k: v for k, v in ORION.items() if k != "model_type"}
    with pytest.raises(UserError, match=f"{REFUSED}.*a config with no model_type"):
        _facts(config)


@pytest.mark.parametrize("model_type,arch", [
    ("phi3", "Phi3ForCausalLM"),  # microsoft/Phi-3-mini-4k-instruct: transformers' own class is used
    ("kimi_k2", "DeepseekV3ForCausalLM"),  # vLLM registers its class before AutoConfig
])
def test_a_remote_config_class_beside_a_known_model_type_needs_no_trust(model_type, arch):
    config = {**ORION, "model_type": model_type, "architectures": [arch]}
    if model_type == "kimi_k2":
        config.update(kv_lora_rank=128, q_lora_rank=256, qk_nope_head_dim=64, qk_rope_head_dim=32, v_head_dim=64,
                      n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=128)
    assert _facts(config).architecture == arch
    trusted = _facts(config, trust_remote_code=True)
    # trusted, transformers takes the remote class over its own (not over vLLM's registered ones): said in a note
    said = any("in place of its own class" in n for n in trusted.notes)
    assert said == (model_type == "phi3") and not any("in place of" in n for n in _facts(config).notes)


@pytest.mark.parametrize("auto_map,words", [(["AutoConfig"], "list indices must be integers"),
                                             ("AutoConfig", "string indices must be integers")])
@pytest.mark.parametrize("trust", [False, True])
def test_an_auto_map_that_is_no_mapping_fails_autoconfig_whatever_the_model_type(auto_map, words, trust):
    llama = {**REMOTE_MODEL_ONLY, "architectures": ["LlamaForCausalLM"], "auto_map": auto_map}
    with pytest.raises(UserError, match=f"auto_map is .*, not a mapping.*{words}"):
        _facts(llama, trust_remote_code=trust)
    assert _facts({**llama, "auto_map": "x"}).architecture == "LlamaForCausalLM"  # no AutoConfig named: not read


# --- the model class -------------------------------------------------------------------


def test_a_remote_model_class_is_used_only_with_trust_remote_code():
    with pytest.raises(UserError, match=r"are not supported for now.*remote AutoModel class.*--trust-remote-code"):
        _facts(REMOTE_MODEL_ONLY)
    f = _facts(REMOTE_MODEL_ONLY, trust_remote_code=True)
    assert f.architecture == "FooForCausalLM" and any("not in vLLM 0.33.0's model registry" in n for n in f.notes)


# --- the command line ------------------------------------------------------------------


def _folder(tmp_path: Path, config: dict, code: bool = True) -> Path:
    """A model folder with config.json and, with ``code``, the remote code files its auto_map
    names (vLLM loads them from the folder; attn-select only checks that they are there)."""
    folder = tmp_path / "orion"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    for kind, ref in config.get("auto_map", {}).items() if code else ():
        module, cls = ref.split(".")
        base = "PretrainedConfig" if kind == "AutoConfig" else "PreTrainedModel"
        (folder / f"{module}.py").write_text(f"from transformers import {base}\n\n\nclass {cls}({base}):\n"
                                             f"    \"\"\"The checkpoint's remote class (a test folder's stand-in).\"\"\"\n")
    return folder


@pytest.mark.parametrize("config, module, content, words", [
    (ORION, "configuration_orion.py", None, "does not appear to have a file named configuration_orion.py"),
    (ORION, "configuration_orion.py", "", "configuration_orion.py in .* defines no OrionConfig"),
    (ORION, "configuration_orion.py", "class OrionConfig(:\n", "configuration_orion.py in .* is not valid Python"),
    (REMOTE_MODEL_ONLY, "modeling_foo.py", None,
     "are not supported for now.*AutoModelForCausalLM: .* does not appear to have a file named modeling_foo.py"),
    (REMOTE_MODEL_ONLY, "modeling_foo.py", "def FooForCausalLM_():\n    class FooForCausalLM:\n        pass\n",
     "are not supported for now.*AutoModelForCausalLM: modeling_foo.py in .* defines no FooForCausalLM"),
    (REMOTE_MODEL_ONLY, "modeling_foo.py", "x\0", "AutoModelForCausalLM: modeling_foo.py in .* is not valid Python"),
])
def test_a_local_folder_holds_the_remote_code_its_auto_map_names(tmp_path, capsys, config, module, content, words):
    """transformers loads auto_map's classes from the model folder: with --trust-remote-code a named
    module file that is not there, is not Python or does not define the class fails vLLM's load
    (AutoConfig: OSError, SyntaxError, AttributeError; AutoModel: no class, so the architecture is
    not supported). A Hugging Face id is not checked (vLLM downloads the files)."""
    folder = _folder(tmp_path, config)
    assert run(capsys, "explain", folder, "--device", "h100", "--trust-remote-code")[0] == 0
    if content is None:
        (folder / module).unlink()
    else:
        (folder / module).write_bytes(content.encode())
    rc, out, err = run(capsys, "explain", folder, "--device", "h100", "--trust-remote-code")
    assert rc == 2 and not out and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert __import__("re").search(words, err), err
    assert facts_from_path(folder, name="m", capability=H100, trust_remote_code=True, from_hub_cache=True)


@pytest.mark.parametrize("source", [
    "from .common import OrionConfig\n",
    "import transformers as OrionConfig\n",
    "try:\n    from fast import OrionConfig\nexcept ImportError:\n    OrionConfig = dict\n",
    "if True:\n    class OrionConfig(dict):\n        pass\n",
    "from .common import *\n",
    "def __getattr__(name):\n    return dict\n",
    "globals()['OrionConfig'] = dict\n",
    "OrionConfig: type = dict\n",
])
def test_a_remote_module_that_may_bind_the_class_is_taken(tmp_path, source):
    """Read, never run: any top-level binding of the name, in any branch, or a way of binding it
    at run time the statements do not show, counts as defining it."""
    from attn_select.selector.model.remote_code import remote_module_problem

    (tmp_path / "configuration_orion.py").write_text(source)
    assert remote_module_problem("configuration_orion.OrionConfig", tmp_path) is None
    (tmp_path / "configuration_orion.py").write_text(source.replace("OrionConfig", "Other"))
    expected = None if ("*" in source or "__getattr__" in source or "globals" in source) else "defines no"
    got = remote_module_problem("configuration_orion.OrionConfig", tmp_path)
    assert (got is None) if expected is None else expected in got


def test_explain_refuses_in_one_line_and_takes_the_flag(tmp_path, capsys):
    folder = _folder(tmp_path, ORION)
    rc, out, err = run(capsys, "explain", folder, "--device", "h100")
    assert rc == 2 and not out and len(err.strip().splitlines()) == 1
    assert REFUSED in err and "pass --trust-remote-code" in err and "Traceback" not in err
    rc, out, _ = run(capsys, "explain", folder, "--device", "h100", "--trust-remote-code")
    assert rc == 0 and "OrionForCausalLM" in out


def test_a_pasted_vllm_serve_line_carries_the_flag(tmp_path, capsys):
    folder = _folder(tmp_path, ORION)
    rc, out, _ = run(capsys, "explain", "--device", "h100", "--", "vllm", "serve", folder, "--trust-remote-code")
    assert rc == 0 and "OrionForCausalLM" in out and "ignored" not in out  # read, not named as ignored
    rc, _, err = run(capsys, "explain", "--device", "h100", "--", "vllm", "serve", folder)
    assert rc == 2 and REFUSED in err
    rc, _, err = run(capsys, "explain", "--device", "h100", "--", "vllm", "serve", folder, "--trust-remote-code",
                     "--no-trust-remote-code")
    assert rc == 2 and REFUSED in err
    rc, _, err = run(capsys, "explain", "--device", "h100", "--trust-remote-code", "--", "vllm", "serve", folder,
                     "--no-trust-remote-code")
    assert rc == 2 and "give it once" in err


def test_a_deployment_says_trust_remote_code_and_its_lock_keeps_it(tmp_path):
    _folder(tmp_path, ORION)
    text = "deployments:\n  - name: orion\n    model: orion\n    device: h100\n"
    deps, doc = L.parse_deployments(text, "deployments.yaml")
    with pytest.raises(UserError, match=f"deployments\\[0\\].model.*{REFUSED}.*--trust-remote-code"):
        L.lock_deployments(deps, doc, tmp_path, tmp_path)
    deps, doc = L.parse_deployments(text + "    trust_remote_code: true\n", "deployments.yaml")
    lock, paths = L.lock_deployments(deps, doc, tmp_path, tmp_path)
    dumped = L.dump_lock(lock, paths)
    assert "trust_remote_code: true" in dumped
    relock, relock_doc = L.parse_lockfile(dumped, "x.lock")
    assert L.run_check(relock, relock_doc, tmp_path).ok


def test_trust_remote_code_needs_a_model():
    text = "deployments:\n  - name: raw\n    selector: {head_size: 128}\n    capability: '9.0'\n" \
           "    trust_remote_code: true\n"
    with pytest.raises(UserError, match="'trust_remote_code' needs 'model'"):
        L.parse_deployments(text, "deployments.yaml")


# --- against vLLM ----------------------------------------------------------------------


def _untrusted(case: dict) -> dict:
    return {**case, "trust_remote_code": False}


def _vllm_cases() -> list[tuple[dict, str | None]]:
    remote = {c["name"]: c for c in model_cases_archs.cases()}
    return [
        (_untrusted(remote["orion-14b like"]), REFUSED),
        (_untrusted(remote["telechat2-7b like"]), REFUSED),
        (_untrusted(remote["phi-3.5-vision like"]), REFUSED),
        ({"name": "orion, the remote class not shipped", "config": ORION}, REFUSED),
        ({"name": "orion trusted, the remote class not shipped", "config": ORION, "trust_remote_code": True},
         "does not appear to have a file named configuration_orion.py"),
        ({"name": "remote AutoModel only", "config": REMOTE_MODEL_ONLY}, "are not supported for now"),
        ({"name": "remote AutoModel only, trusted, its file not shipped", "config": REMOTE_MODEL_ONLY,
          "trust_remote_code": True}, "are not supported for now"),
        *[({"name": f"remote AutoModel only, trusted, its file {what}", "config": REMOTE_MODEL_ONLY,
            "trust_remote_code": True, "files": {"modeling_foo.py": source}}, refusal)
          for what, source, refusal in (
              ("empty", "", "are not supported for now"),
              ("not Python", "def (:\n", "are not supported for now"),
              ("with another class", "from transformers import PreTrainedModel\n\n\nclass Bar(PreTrainedModel):\n"
                                     "    pass\n", "are not supported for now"),
              ("with the class", "from transformers import PreTrainedModel\n\n\n"
                                 "class FooForCausalLM(PreTrainedModel):\n    pass\n", None))],
        *[({"name": f"orion trusted, its configuration file {what}", "config": ORION, "trust_remote_code": True,
            "files": {"configuration_orion.py": source, "modeling_orion.py": ""}}, refusal)
          for what, source, refusal in (("empty", "", "has no attribute 'OrionConfig'"),
                                        ("not Python", "def (:\n", "SyntaxError"))],
        ({"name": "auto_map a list", "config": {**REMOTE_MODEL_ONLY, "architectures": ["LlamaForCausalLM"],
                                                "auto_map": ["AutoConfig"]}}, "list indices must be integers"),
        ({"name": "auto_map a string, trusted", "trust_remote_code": True, "config": {
            **REMOTE_MODEL_ONLY, "architectures": ["LlamaForCausalLM"], "auto_map": "AutoConfig"}},
         "string indices must be integers"),
        ({"name": "auto_map a string naming no AutoConfig", "config": {
            **REMOTE_MODEL_ONLY, "architectures": ["LlamaForCausalLM"], "auto_map": "x"}}, None),
        # trusted: both read it (the stand-in configuration class keeps config.json's fields)
        (remote["orion-14b like"], None),
    ]


@pytest.fixture(scope="module")
def oracle():
    cases = _vllm_cases()
    return list(zip(cases, run_model_oracle([c for c, _ in cases], timeout=900)))


def _ours(case: dict, folder: Path):
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(case["config"]))
    for rel, content in case.get("files", {}).items():
        (folder / rel).write_text(content if isinstance(content, str) else json.dumps(content))
    return lambda: facts_from_path(folder, name=case["name"], capability=H100,
                                   trust_remote_code=case.get("trust_remote_code", False))


@pytest.mark.vllm
def test_refusals_and_answers_match_vllm(oracle, tmp_path):
    for i, ((case, refusal), res) in enumerate(oracle):
        facts_agreeing_with_vllm(res, _ours(case, tmp_path / f"m{i}"), refusal)


# --- run and tune read the model too ---------------------------------------------------

TINY_REMOTE = {"architectures": ["OrionForCausalLM"], "model_type": "orion",
               "auto_map": {"AutoConfig": "configuration_orion.OrionConfig"}, "hidden_size": 128,
               "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 128,
               "vocab_size": 100, "max_position_embeddings": 256, "torch_dtype": "float32"}


def test_run_and_tune_take_the_flag(tmp_path, capsys):
    folder = _folder(tmp_path, TINY_REMOTE)
    cpu = ["--device", "cpu", "--no-timing", "--shapes", "decode", "--checks", "1", "--backend", "TRITON_ATTN"]
    rc, _, err = run(capsys, "run", folder, *cpu)
    assert rc == 2 and REFUSED in err and "pass --trust-remote-code" in err
    rc, out, _ = run(capsys, "run", folder, *cpu, "--trust-remote-code")
    assert rc == 0 and "TRITON_ATTN" in out
    rc, _, err = run(capsys, "tune", folder, "--device", "cpu", "--max-seconds", "0", "--no-cache")
    assert rc == 2 and REFUSED in err
    rc, _, err = run(capsys, "tune", folder, "--device", "cpu", "--max-seconds", "0", "--no-cache",
                     "--trust-remote-code")
    assert REFUSED not in err


def test_a_fanned_out_run_checks_the_model_with_the_flag(tmp_path):
    from attn_select.cli.fanout import check_inputs

    folder = _folder(tmp_path, TINY_REMOTE)
    run_args = {"model": str(folder), "device": "cpu", "shapes": "decode"}
    with pytest.raises(UserError, match=REFUSED):
        check_inputs(run_args)
    check_inputs({**run_args, "trust_remote_code": True})


def test_check_ray_runs_a_deployment_with_its_trust_remote_code(tmp_path):
    from attn_select.cli.fleet.ray_check import _run_kwargs
    from attn_select.selector.lock.deployments import DeploymentInputs

    trusted = DeploymentInputs(model="orion", device="h100", trust_remote_code=True)
    run_args, _ = _run_kwargs(trusted, tmp_path, {"shapes": "decode"}, "h100")
    assert run_args["trust_remote_code"] is True
    plain, _ = _run_kwargs(DeploymentInputs(model="orion", device="h100"), tmp_path, {"shapes": "decode"}, "h100")
    assert "trust_remote_code" not in plain
