"""selector/hub_cache.py: Hugging Face ids found in a stand-in local cache
(tmp_path), the way huggingface_hub finds them: the cache folder's
environment precedence, refs/<branch> -> snapshots/<commit>, --revision as a
branch, tag or commit, the models--org--name folder as a path, and one line
with the fetch command when the id is not cached."""

import json
from pathlib import Path

import pytest

from attn_select.selector import hub_cache
from attn_select.selector.errors import UserError
from attn_select.selector.profiles import load_model, load_model_profile

COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER = "fedcba9876543210fedcba9876543210fedcba98"


def profile_config(name: str) -> dict:
    return load_model_profile(name)[1]["config"]


def cache_repo(hub: Path, repo_id: str, config: dict, commit: str = COMMIT, ref: str | None = "main") -> Path:
    """A repo in a stand-in hub cache, laid out as huggingface_hub writes it
    (blobs + snapshot symlinks)."""
    repo = hub / ("models--" + repo_id.replace("/", "--"))
    blob = repo / "blobs" / f"blob-{commit[:8]}"
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_text(json.dumps(config), encoding="utf-8")
    snap = repo / "snapshots" / commit
    snap.mkdir(parents=True, exist_ok=True)
    (snap / "config.json").symlink_to(Path("..") / ".." / "blobs" / blob.name)
    if ref is not None:
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / ref).write_text(commit, encoding="utf-8")  # no newline, as huggingface_hub writes it
    return repo


@pytest.fixture
def no_hf_env(monkeypatch, tmp_path):
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def test_cache_folder_precedence():
    assert hub_cache.cache_dir({"HF_HUB_CACHE": "/a", "HF_HOME": "/b"}) == Path("/a")
    assert hub_cache.cache_dir({"HUGGINGFACE_HUB_CACHE": "/l", "HF_HOME": "/b"}) == Path("/l")
    assert hub_cache.cache_dir({"HF_HOME": "/b", "XDG_CACHE_HOME": "/x"}) == Path("/b/hub")
    assert hub_cache.cache_dir({"XDG_CACHE_HOME": "/x"}) == Path("/x/huggingface/hub")
    assert hub_cache.cache_dir({}) == Path("~/.cache/huggingface/hub").expanduser()
    assert hub_cache.cache_dir({"HF_HOME": "~/hf"}) == Path("~/hf/hub").expanduser()


def test_an_id_is_read_from_refs_main(no_hf_env, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    cache_repo(tmp_path / "hub", "acme/llama-like", profile_config("llama-3.1-8b"))
    facts = load_model("acme/llama-like")
    expected = load_model("llama-3.1-8b")
    assert facts.name == "acme/llama-like"
    assert facts.groups == expected.groups and facts.architecture == expected.architecture


def test_hf_home_is_used_when_hf_hub_cache_is_unset(no_hf_env, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    cache_repo(tmp_path / "hf" / "hub", "acme/m", profile_config("llama-3.1-8b"))
    assert load_model("acme/m").architecture == "LlamaForCausalLM"


def test_hf_hub_cache_wins_over_hf_home(no_hf_env, monkeypatch, tmp_path):
    cache_repo(tmp_path / "hf" / "hub", "acme/m", profile_config("llama-3.1-8b"))
    cache_repo(tmp_path / "hub", "acme/m", profile_config("gemma-3-27b"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert load_model("acme/m").model_type == load_model("gemma-3-27b").model_type


def test_default_cache_under_home(no_hf_env, tmp_path):
    cache_repo(tmp_path / "home" / ".cache" / "huggingface" / "hub", "acme/m", profile_config("llama-3.1-8b"))
    assert load_model("acme/m").architecture == "LlamaForCausalLM"


def test_revision_branch_tag_and_commit(no_hf_env, monkeypatch, tmp_path):
    hub = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    cache_repo(hub, "acme/m", profile_config("llama-3.1-8b"))
    cache_repo(hub, "acme/m", profile_config("gemma-3-27b"), commit=OTHER, ref="v2")
    gemma = load_model("gemma-3-27b").model_type
    assert load_model("acme/m").architecture == "LlamaForCausalLM"
    assert load_model("acme/m", revision="v2").model_type == gemma
    assert load_model("acme/m", revision=OTHER).model_type == gemma
    with pytest.raises(UserError) as e:
        load_model("acme/m", revision="v3")
    msg = str(e.value)
    assert "revision 'v3' is not in the Hugging Face cache" in msg
    assert "hf download acme/m config.json --revision v3" in msg and "\n" not in msg


def test_a_ref_to_a_missing_snapshot(no_hf_env, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    repo = cache_repo(tmp_path / "hub", "acme/m", profile_config("llama-3.1-8b"))
    (repo / "refs" / "main").write_text(OTHER, encoding="utf-8")
    with pytest.raises(UserError, match=r"revision 'main' \(commit fedcba987654\) is not in the Hugging Face cache"):
        load_model("acme/m")


def test_no_exist_marker(no_hf_env, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    repo = cache_repo(tmp_path / "hub", "acme/m", profile_config("llama-3.1-8b"))
    (repo / ".no_exist" / COMMIT).mkdir(parents=True)
    (repo / ".no_exist" / COMMIT / "config.json").write_text("")
    with pytest.raises(UserError, match="records that this revision has no config.json"):
        load_model("acme/m")


def test_the_repo_folder_given_as_a_path(no_hf_env, tmp_path):
    repo = cache_repo(tmp_path / "elsewhere", "Qwen/Qwen3-32B", profile_config("llama-3.1-8b"))
    facts = load_model(str(repo))
    assert facts.architecture == "LlamaForCausalLM" and facts.name == str(repo)
    with pytest.raises(UserError, match="revision 'v9'"):
        load_model(str(repo), revision="v9")


def test_download_dir_replaces_the_cache(no_hf_env, tmp_path):
    cache_repo(tmp_path / "dl", "acme/m", profile_config("llama-3.1-8b"))
    assert load_model("acme/m", cache_dir=str(tmp_path / "dl")).architecture == "LlamaForCausalLM"


def test_an_id_that_is_not_cached_says_how_to_fetch_its_config(no_hf_env, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(UserError) as e:
        load_model("acme/not-here")
    msg = str(e.value)
    assert "not a local file or folder, nor in the Hugging Face cache" in msg and str(tmp_path / "hub") in msg
    assert "hf download acme/not-here config.json" in msg and "huggingface-cli download" in msg
    assert "\n" not in msg


def test_an_uncached_id_that_a_profile_comes_from_uses_the_profile(no_hf_env, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    source = load_model_profile("llama-3.1-8b")[1]["source"]
    assert load_model(source).name == "llama-3.1-8b"
    # a cached copy is what vLLM would read: it wins
    cache_repo(tmp_path / "hub", source, profile_config("gemma-3-27b"))
    assert load_model(source).name == source


def test_a_local_folder_wins_over_an_id(no_hf_env, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    cache_repo(tmp_path / "hub", "acme/m", profile_config("gemma-3-27b"))
    local = tmp_path / "acme" / "m"
    local.mkdir(parents=True)
    (local / "config.json").write_text(json.dumps(profile_config("llama-3.1-8b")))
    monkeypatch.chdir(tmp_path)
    assert load_model("acme/m").architecture == "LlamaForCausalLM"


def test_revision_with_a_profile_is_an_error(no_hf_env):
    with pytest.raises(UserError, match="built-in profile, which has no revisions"):
        load_model("llama-3.1-8b", revision="main")
