"""The CI gate's engine handling and wording (issue 16): `check
--deployments` keeps the engine `lock --engine` recorded, `lock --engine
both` locks a raw selector config for vLLM only, lock and check count the
same attention groups, counted nouns agree, and a local model folder that
vanished is reported as a missing folder."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import yaml

from attn_select.selector.profiles import MODELS_DIR
from tests.cli.helpers import run

EXAMPLE = Path(__file__).resolve().parents[2] / "profiles" / "lock" / "deployments.yaml"
RAW = "custom-head-256-sinks"  # the example's raw `selector:` deployment


def model_deployments(tmp: Path) -> Path:
    """The example's deployments that name a model (SGLang resolves those)."""
    doc = yaml.safe_load(EXAMPLE.read_text())
    doc["deployments"] = [d for d in doc["deployments"] if "model" in d]
    path = tmp / "models.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_check_deployments_keeps_the_engine_lock_recorded(tmp_path, capsys):
    deps, lock = model_deployments(tmp_path), tmp_path / "s.lock"
    assert run(capsys, "lock", deps, "--engine", "sglang", "-o", lock)[0] == 0
    rc, out, err = run(capsys, "check", lock, "--deployments", deps)
    assert rc == 0 and err == "", out  # was 6 false differences: vLLM's groups against SGLang's lock
    assert out.startswith("ok  7 SGLang resolutions in 7 deployments match")


def test_the_accept_command_keeps_the_engine(tmp_path, capsys):
    deps, lock = model_deployments(tmp_path), tmp_path / "s.lock"
    run(capsys, "lock", deps, "--engine", "sglang", "-o", lock)
    moved = tmp_path / "b200.yaml"
    moved.write_text(deps.read_text().replace("device: h100", "device: b200"))
    rc, out, _ = run(capsys, "check", lock, "--deployments", moved)
    assert rc == 1
    accept = re.search(r"accept with: (.*)\)$", out.splitlines()[-1]).group(1)
    assert accept == f"attn-select lock {moved} --engine sglang -o {lock}"
    # running it makes check pass, with the engine still SGLang's
    assert run(capsys, *accept.split()[1:])[0] == 0
    assert run(capsys, "check", lock, "--deployments", moved)[0] == 0
    assert all(d["inputs"]["engine"] == "sglang" for d in yaml.safe_load(lock.read_text())["deployments"])


def test_lock_engine_both_locks_a_raw_selector_config_for_vllm_only(tmp_path, capsys):
    lock = tmp_path / "both.lock"
    rc, _, err = run(capsys, "lock", EXAMPLE, "--engine", "both", "-o", lock)
    assert rc == 0, err  # was: internal error: ValidationError ... engine both needs 'model'
    assert err.count("\n") == 1 and f"{RAW}: a raw 'selector' config, locked for vLLM only" in err
    doc = {d["name"]: d for d in yaml.safe_load(lock.read_text())["deployments"]}
    assert "engine" not in doc[RAW]["inputs"] and "sglang" not in doc[RAW] and doc[RAW]["groups"]
    others = [d for name, d in doc.items() if name != RAW]
    assert all(d["inputs"]["engine"] == "both" and d["sglang"] and d["groups"] for d in others)
    for extra in ([], ["--deployments", str(EXAMPLE)], ["--engine", "both", "--deployments", str(EXAMPLE)]):
        rc, out, _ = run(capsys, "check", lock, *extra)
        assert rc == 0, out


def test_lock_engine_both_to_stdout_notes_the_vllm_only_deployment(tmp_path, capsys):
    rc, out, err = run(capsys, "lock", EXAMPLE, "--engine", "both")
    assert rc == 0 and out.startswith("# attn-select lockfile")
    assert err == f"note: {RAW}: a raw 'selector' config, locked for vLLM only (SGLang resolves from a model's config)\n"


def test_lock_and_check_count_the_same_groups(tmp_path, capsys):
    lock = tmp_path / "both.lock"
    _, _, err = run(capsys, "lock", EXAMPLE, "--engine", "both", "-o", lock)
    deployments, groups, sglang = map(int, re.search(
        r"(\d+) deployments, (\d+) attention groups, (\d+) SGLang resolutions", err).groups())
    _, out, _ = run(capsys, "check", lock)
    assert out.startswith(f"ok  {groups} attention groups and {sglang} SGLang resolutions in {deployments} "
                          "deployments match")
    _, out, _ = run(capsys, "check", lock, "--format", "json")
    doc = json.loads(out)
    assert (doc["deployments"], doc["groups"], doc["sglang_resolutions"]) == (deployments, groups, sglang)
    _, out, _ = run(capsys, "check", lock, "--format", "github")
    assert out.splitlines()[-1] == (f"attn-select check: {groups} attention groups and {sglang} SGLang "
                                    f"resolutions match {lock}")


def test_one_deployment_is_counted_in_the_singular(tmp_path, capsys):
    deps, lock = tmp_path / "one.yaml", tmp_path / "one.lock"
    deps.write_text("- {name: a, model: llama-3.1-8b, device: h100}\n")
    _, _, err = run(capsys, "lock", deps, "-o", lock)
    assert err == f"wrote {lock}: 1 deployment, 1 attention group\n"
    _, out, _ = run(capsys, "check", lock)
    assert out.startswith(f"ok  1 attention group in 1 deployment matches {lock}")
    deps.write_text("- {name: a, model: llama-3.1-8b, device: b200}\n")
    rc, out, _ = run(capsys, "check", lock, "--deployments", deps)
    assert rc == 1
    assert re.match(r"\d+ differences in 1 of 1 attention group \(1 of 1 deployment\) against ",
                    out.splitlines()[-1]), out


def test_a_vanished_local_model_folder_is_reported_as_missing(tmp_path, capsys):
    config = yaml.safe_load((MODELS_DIR / "llama-3.1-8b.yaml").read_text())["config"]
    for name in ("mymodel", "models/llama"):
        (tmp_path / name).mkdir(parents=True)
        (tmp_path / name / "config.json").write_text(json.dumps(config))
    deps, lock = tmp_path / "d.yaml", tmp_path / "x.lock"
    deps.write_text("- {name: bare, model: mymodel, device: h100}\n- {name: nested, model: models/llama, device: h100}\n")
    assert run(capsys, "lock", deps, "-o", lock)[0] == 0
    shutil.rmtree(tmp_path / "models")
    rc, _, err = run(capsys, "check", lock)
    assert rc == 2 and err.count("\n") == 1
    assert f"no file or folder {tmp_path / 'models' / 'llama'} exists" in err
    shutil.rmtree(tmp_path / "mymodel")
    rc, _, err = run(capsys, "check", lock)
    assert rc == 2 and err.count("\n") == 1
    assert f"no file or folder {tmp_path / 'mymodel'} exists" in err


def test_a_missing_model_path_in_a_deployments_file_is_named(tmp_path, capsys):
    deps = tmp_path / "d.yaml"
    deps.write_text("- {name: a, model: ./models/gone, device: h100}\n")
    rc, _, err = run(capsys, "lock", deps)
    assert rc == 2 and err.count("\n") == 1
    assert err.startswith(f"error: {deps}:1: deployments[0].model: the model folder or file "
                          f"{tmp_path / 'models' / 'gone'} does not exist")
