"""explain with a Hugging Face id from a stand-in local cache: the id,
--revision, the same in a pasted vllm serve line, and the one-line answer
when the id is not cached."""

import json

from tests.cli.helpers import doc, run
from tests.selector.test_hub_cache import OTHER, cache_repo, profile_config


def stand_in_cache(monkeypatch, tmp_path):
    for var in ("HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    hub = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    cache_repo(hub, "acme/m", profile_config("llama-3.1-8b"))
    cache_repo(hub, "acme/m", profile_config("gemma-3-27b"), commit=OTHER, ref="v2")
    return hub


def test_explain_a_cached_id_and_a_revision(capsys, monkeypatch, tmp_path):
    stand_in_cache(monkeypatch, tmp_path)
    _, llama = doc(capsys, "explain", "llama-3.1-8b", "--device", "h100")
    rc, d = doc(capsys, "explain", "acme/m", "--device", "h100")
    assert rc == 0 and d["model"]["name"] == "acme/m" and d["groups"] == llama["groups"]
    _, gemma = doc(capsys, "explain", "gemma-3-27b", "--device", "h100")
    rc, d = doc(capsys, "explain", "acme/m", "--device", "h100", "--revision", "v2")
    assert rc == 0 and d["groups"] == gemma["groups"]


def test_a_pasted_line_reads_the_cache_with_its_revision(capsys, monkeypatch, tmp_path):
    stand_in_cache(monkeypatch, tmp_path)
    _, gemma = doc(capsys, "explain", "gemma-3-27b", "--device", "h100")
    rc, out, _ = run(capsys, "explain", "--device", "h100", "--format", "json", "--",
                     "vllm", "serve", "acme/m", "--revision", "v2")
    assert rc == 0 and json.loads(out)["groups"] == gemma["groups"]


def test_an_id_that_is_not_cached_is_one_line(capsys, monkeypatch, tmp_path):
    stand_in_cache(monkeypatch, tmp_path)
    rc, out, err = run(capsys, "explain", "acme/other", "--device", "h100")
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert "hf download acme/other config.json" in err
    rc, out, err = run(capsys, "explain", "acme/m", "--device", "h100", "--revision", "nope")
    assert rc == 2 and err.count("\n") == 1 and "hf download acme/m config.json --revision nope" in err
