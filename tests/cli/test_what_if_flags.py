"""The what-if flags are one list: selector.overrides.Overrides. explain's
options, the deployments file's ``overrides:`` fields and the docs' lists
are built from it or checked against it, so none can drift."""

from pathlib import Path

import typer
from typer.testing import CliRunner

from attn_select.cli import explain as explain_cli
from attn_select.cli import run as run_cli
from attn_select.cli.options import what_if_options
from attn_select.selector.config import SELECTOR_FIELDS, Kernels
from attn_select.selector.lock.deployments import OverridesModel
from attn_select.selector.overrides import FIELDS, RAW_PANEL, WHAT_IF_PANEL, Overrides

ROOT = Path(__file__).resolve().parents[2]


def _options(app: typer.Typer) -> dict[str, object]:
    command = typer.main.get_command(app)
    return {p.name: p for p in command.params}


def test_every_field_has_its_what_if_metadata():
    assert tuple(f.name for f in FIELDS) == Overrides._fields
    assert {f.what_if.panel for f in FIELDS} == {WHAT_IF_PANEL, RAW_PANEL}
    # the raw panel is exactly the AttentionSelectorConfig fields explain does not set as engine flags
    raw = {f.name for f in FIELDS if f.what_if.panel == RAW_PANEL}
    assert raw == set(SELECTOR_FIELDS) - {"dtype", "kv_cache_dtype", "block_size"}


def test_explain_options_are_the_overrides_fields():
    options = _options(explain_cli.app)
    what_if = {n: p for n, p in options.items() if getattr(p, "rich_help_panel", None) in (WHAT_IF_PANEL, RAW_PANEL)}
    # --attention-config is vLLM's AttentionConfig: several fields at once
    assert set(what_if) == set(Overrides._fields) | {"attention_config"}
    for f in FIELDS:
        p = what_if[f.name]
        # vLLM's spellings are aliases; explain declares --attention-backend itself
        # (it is SGLang's flag too), so backend keeps only --backend
        aliases = [a for a in f.aliases if a != "--attention-backend"]
        assert p.opts == [f.flag, *aliases]
        assert p.secondary_opts == (["--no-" + f.flag[2:]] if f.switch else [])
        assert p.rich_help_panel == f.what_if.panel
        assert p.help == f.what_if.help
        assert p.default == f.default


def test_vllm_flag_names_are_aliases():
    options = _options(explain_cli.app)
    assert options["tp"].opts == ["--tp", "--tensor-parallel-size", "-tp"]
    assert options["dcp_size"].opts == ["--dcp-size", "--decode-context-parallel-size", "-dcp"]
    assert options["attention_backend"].opts == ["--attention-backend"]
    assert options["attention_config"].opts == ["--attention-config", "-ac"]


def test_run_shares_tp_and_dtype_with_explain():
    run, explain = _options(run_cli.app), _options(explain_cli.app)
    for name in ("tp", "dtype"):
        assert (run[name].opts, run[name].help) == (explain[name].opts, explain[name].help)
    assert run["backend"].opts == ["--backend", "--attention-backend"]  # vLLM's name for it too


def test_deployments_overrides_fields_are_the_overrides_fields():
    assert tuple(OverridesModel.model_fields) == Overrides._fields
    for f in FIELDS:
        assert OverridesModel.model_fields[f.name].default == f.default


def test_generated_options_reach_the_command_as_one_overrides():
    seen = []
    app = typer.Typer()

    @app.command()
    @what_if_options
    def cmd(name: str = "x", ov: Overrides = Overrides(), after: int = 0) -> None:
        seen.append((name, ov, after))

    args = ["--tp", "2", "--kv-cache-dtype", "fp8", "--no-use-mla", "--use-trtllm-attention",
            "--attn-type", "encoder", "--after", "3", "--name", "y"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert seen == [("y", Overrides(tp=2, kv_cache_dtype="fp8", use_mla=False, use_trtllm_attention=True,
                                   attn_type="encoder"), 3)]


def test_docs_name_every_what_if_and_kernel():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci_gate = (ROOT / "docs" / "ci-gate.md").read_text(encoding="utf-8")
    for f in FIELDS:
        assert f"`{f.flag}`" in readme, f"README's option table lacks {f.flag}"
        if f.what_if.panel == WHAT_IF_PANEL:
            assert f"`{f.name}`" in ci_gate, f"docs/ci-gate.md's overrides list lacks {f.name}"
    for name in Kernels.NAMES:
        assert f"`{name}`" in readme and f"`{name}`" in ci_gate, f"the --kernels list of the docs lacks {name}"


def test_kernel_names_are_the_kernels_fields():
    # --kernels, the reports and from_names all read Kernels.NAMES; each name is a field
    assert {n.replace("-", "_") for n in Kernels.NAMES} == set(Kernels._fields) - {"source"}
    assert Kernels.from_names(list(Kernels.NAMES), source="t").key() == Kernels().key()
    assert not any(Kernels.from_names(["none"], source="t").key())
