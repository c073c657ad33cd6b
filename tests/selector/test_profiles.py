"""Built-in model and device profiles, and resolving a MODEL argument."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attn_select.selector import profiles
from attn_select.selector.config import Capability
from attn_select.selector.errors import UserError
from attn_select.selector.profiles import (
    device_profile_names,
    load_device,
    load_model,
    model_profile_names,
)

CONFIGS = Path(__file__).resolve().parents[1] / "fixtures" / "configs"

MODELS = {
    "llama-3.1-8b", "llama-3.1-70b", "mistral-7b", "qwen3-8b", "qwen3-30b-a3b", "qwen3-next-80b-a3b",
    "gemma-2-9b", "gemma-3-27b", "gpt-oss-20b", "gpt-oss-120b", "phi-3-mini", "deepseek-v3", "deepseek-v3.2",
    "bert-base", "whisper-small",
}
DEVICES = {
    "t4": (7, 5), "a10g": (8, 6), "a100": (8, 0), "l4": (8, 9), "l40s": (8, 9), "rtx4090": (8, 9),
    "h100": (9, 0), "h200": (9, 0), "b200": (10, 0), "gb200": (10, 0), "b300": (10, 3), "rtx5090": (12, 0),
    "rtx-pro-6000": (12, 0), "gb10": (12, 1),
}

# name -> (group names, head size, query heads, KV heads) at tp=1
EXPECTED = {
    "llama-3.1-8b": (["full"], 128, 32, 8),
    "llama-3.1-70b": (["full"], 128, 64, 8),
    "mistral-7b": (["sliding"], 128, 32, 8),
    "qwen3-8b": (["full"], 128, 32, 8),
    "qwen3-30b-a3b": (["full"], 128, 32, 4),
    "qwen3-next-80b-a3b": (["full"], 256, 16, 2),
    "gemma-2-9b": (["sliding", "full"], 256, 16, 8),
    "gemma-3-27b": (["sliding", "full"], 128, 32, 16),
    "gpt-oss-20b": (["sliding", "full"], 64, 64, 8),
    "gpt-oss-120b": (["sliding", "full"], 64, 64, 8),
    "phi-3-mini": (["sliding"], 96, 32, 32),
    "deepseek-v3": (["mla"], 576, 128, 1),
    "deepseek-v3.2": (["sparse_mla"], 576, 128, 1),
    "bert-base": (["encoder"], 64, 12, 12),
    "whisper-small": (["decoder", "cross"], 64, 12, 12),
}


def test_profile_names():
    assert set(model_profile_names()) == MODELS
    assert set(device_profile_names()) == set(DEVICES)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_model_profile_parses(name):
    f = load_model(name)
    names, head, heads, kv = EXPECTED[name]
    assert [g.name for g in f.groups] == names
    a = f.groups[0].attn
    assert (a.head_size, a.num_heads, a.num_kv_heads) == (head, heads, kv)
    assert f.name == name and f.source and "/" in f.source
    covered = sorted(i for g in f.groups for i in g.layers) + sorted(i for o in f.other_layers for i in o.layers)
    if name != "whisper-small":  # whisper: decoder + cross share decoder layer numbers
        assert sorted(covered) == list(range(f.num_layers))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_profile_source_line_is_an_hf_repo(name):
    text = (profiles.MODELS_DIR / f"{name}.yaml").read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("source:"))
    org, repo = line.split(":", 1)[1].strip().split("/")
    assert org and repo


def test_profiles_match_the_real_config_fixtures():
    """A profile and the published config.json give the same facts."""
    pairs = {"llama-3.1-8b": "llama-3.1-8b", "gemma-3-27b": "gemma-3-27b-it", "gpt-oss-20b": "gpt-oss-20b",
             "deepseek-v3": "deepseek-v3", "whisper-small": "whisper-small", "bert-base": "bert-base-uncased"}
    for prof, folder in pairs.items():
        a, b = load_model(prof), load_model(str(CONFIGS / folder))
        assert a.groups == b.groups and a.other_layers == b.other_layers, prof
        assert (a.head_size, a.num_heads, a.num_kv_heads, a.dtype) == (b.head_size, b.num_heads, b.num_kv_heads,
                                                                       b.dtype), prof


@pytest.mark.parametrize("name", sorted(DEVICES))
def test_every_device_profile(name):
    d = load_device(name)
    assert (d.capability.major, d.capability.minor) == DEVICES[name]
    assert d.memory_gib and d.memory_gib > 0 and d.bandwidth_tbs and d.bandwidth_tbs > 0
    assert d.profile == name and d.source == f"profile {name}" and d.name


def test_device_names_are_spelling_insensitive():
    assert load_device("H100").profile == "h100"
    assert load_device("rtx-4090").profile == "rtx4090"
    assert load_device("RTX_PRO_6000").profile == "rtx-pro-6000"


def test_unknown_device_suggests_and_lists():
    with pytest.raises(UserError) as info:
        load_device("h1000")
    msg = str(info.value)
    assert "did you mean 'h100'" in msg and "rtx-pro-6000" in msg and "\n" not in msg


def test_unknown_model_profile_suggests():
    with pytest.raises(UserError, match="did you mean 'gemma-3-27b'"):
        load_model("gemma-3-72b")


def test_model_path_file_and_folder():
    by_file = load_model(str(CONFIGS / "llama-3.1-8b" / "config.json"))
    by_folder = load_model(str(CONFIGS / "llama-3.1-8b"))
    assert by_file.groups == by_folder.groups
    assert by_folder.name == str(CONFIGS / "llama-3.1-8b")


def test_hf_repo_id_of_a_profile_uses_the_profile():
    f = load_model("openai/gpt-oss-20b")
    assert f.name == "gpt-oss-20b" and f.source == "openai/gpt-oss-20b"


def test_unknown_repo_id_is_a_user_error():
    with pytest.raises(UserError, match="does not download"):
        load_model("someone/unknown-model")


def test_missing_path_is_a_user_error():
    with pytest.raises(UserError, match="no such file or folder"):
        load_model("./missing/config.json")


def test_capability_and_dtype_reach_the_parser():
    assert load_model("llama-3.1-8b", capability=Capability(7, 5)).dtype == "float16"
    assert load_model("llama-3.1-8b", dtype="float32").dtype == "float32"
    assert load_model("deepseek-v3", tp=8).groups[0].attn.num_heads == 16


def test_only_the_requested_profile_is_read(monkeypatch):
    read: list[str] = []
    original = profiles._load_yaml

    def spy(path):
        read.append(path.name)
        return original(path)

    monkeypatch.setattr(profiles, "_load_yaml", spy)
    load_model("qwen3-8b")
    load_device("h100")
    assert read == ["qwen3-8b.yaml", "h100.yaml"]


@pytest.fixture
def profile_dirs(tmp_path, monkeypatch):
    models, devices = tmp_path / "models", tmp_path / "devices"
    models.mkdir()
    devices.mkdir()
    monkeypatch.setattr(profiles, "MODELS_DIR", models)
    monkeypatch.setattr(profiles, "DEVICES_DIR", devices)
    return models, devices


def test_invalid_yaml_names_line(profile_dirs):
    models, _ = profile_dirs
    (models / "broken.yaml").write_text("source: a/b\nconfig:\n  model_type: [llama\n")
    with pytest.raises(UserError, match=r"broken\.yaml:\d+: YAML syntax error"):
        load_model("broken")


def test_model_profile_without_config(profile_dirs):
    models, _ = profile_dirs
    (models / "empty.yaml").write_text("source: a/b\n")
    with pytest.raises(UserError, match="field 'config'"):
        load_model("empty")


def test_device_profile_bad_values(profile_dirs):
    _, devices = profile_dirs
    (devices / "bad.yaml").write_text('name: X\ncapability: "9.0"\nmemory_gib: -1\nbandwidth_tbs: 1\n')
    with pytest.raises(UserError, match="field 'memory_gib'"):
        load_device("bad")
    (devices / "badcap.yaml").write_text('name: X\ncapability: "ninety"\nmemory_gib: 1\nbandwidth_tbs: 1\n')
    with pytest.raises(UserError, match="capability 'ninety'"):
        load_device("badcap")


def test_profile_config_errors_name_the_profile(profile_dirs):
    models, _ = profile_dirs
    cfg = json.loads((CONFIGS / "llama-3.1-8b" / "config.json").read_text())
    cfg["torch_dtype"] = "fp8"  # no torch dtype of that name: transformers cannot load it
    import yaml

    (models / "odd.yaml").write_text(yaml.safe_dump({"source": "a/b", "config": cfg}))
    with pytest.raises(UserError, match="profile odd: .*fp8"):
        load_model("odd")


def test_model_names_are_spelling_insensitive():
    assert load_model("Gemma3-27B").name == "gemma-3-27b"
