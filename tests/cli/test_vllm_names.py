"""vLLM's own flag names and values on explain's command line: the
--attention-backend that is vLLM's or SGLang's by engine, -tp /
--tensor-parallel-size / -dcp, --max-model-len (taken, noted as changing
nothing), --attention-config with vLLM's AttentionConfig fields, and vLLM's
--dtype values."""

import pytest

from tests.cli.helpers import doc, run

LLAMA = ("explain", "llama-3.1-8b", "--device", "h100")


def one_line_error(rc, out, err):
    assert rc == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


def test_attention_backend_is_vllms_flag_with_engine_vllm(capsys):
    # vLLM's name and attn-select's alias give the same report, byte for byte
    _, by_vllm_name, _ = run(capsys, *LLAMA, "--attention-backend", "FLASHINFER")
    _, by_alias, _ = run(capsys, *LLAMA, "--backend", "FLASHINFER")
    assert by_vllm_name == by_alias
    rc, d = doc(capsys, *LLAMA, "--attention-backend", "FLASHINFER")
    assert rc == 0 and d["groups"][0]["selected"] == "FLASHINFER"
    assert d["overrides"] == {"backend": "FLASHINFER"}


def test_attention_backend_takes_any_case_and_auto_as_vllm_does(capsys):
    # AttentionConfig.validate_backend_before: upper-cased enum lookup, "auto" = none
    rc, d = doc(capsys, *LLAMA, "--attention-backend", "flashinfer")
    assert rc == 0 and d["groups"][0]["selected"] == "FLASHINFER"
    rc, d = doc(capsys, *LLAMA, "--attention-backend", "auto")
    assert rc == 0 and d["overrides"] == {} and d["groups"][0]["selected"] == "FLASH_ATTN"


@pytest.mark.parametrize("args", [
    ["--attention-backend", " FLASH_ATTN"], ["--backend", "FLASHINFER "], ["--attention-backend", " auto"],
    ["--attention-config", '{"backend": " FLASH_ATTN"}'], ["--attention-config", '{"backend": "auto "}'],
])
def test_attention_backend_with_spaces_is_refused_as_vllm_refuses_it(capsys, args):
    # AttentionConfig.validate_backend_before: value.lower() == "auto", else
    # AttentionBackendEnum[value.upper()]: nothing strips the spaces
    err = one_line_error(*run(capsys, *LLAMA, *args))
    assert "nknown attention backend" in err


def test_mla_prefill_backend_with_spaces_is_refused_as_vllm_refuses_it(capsys):
    err = one_line_error(*run(capsys, "explain", "deepseek-v3", "--device", "h100", "--mla-prefill-backend",
                              " FLASH_ATTN"))
    assert "unknown MLA prefill backend ' FLASH_ATTN'" in err and "without the spaces" in err


def test_an_sglang_name_with_engine_vllm_says_so(capsys):
    err = one_line_error(*run(capsys, *LLAMA, "--attention-backend", "fa3"))
    assert "SGLang backend name" in err and "--engine sglang" in err


def test_attention_backend_and_its_alias_together_is_an_error(capsys):
    err = one_line_error(*run(capsys, *LLAMA, "--attention-backend", "FLASHINFER", "--backend", "TRITON_ATTN"))
    assert "--backend" in err and "once" in err


def test_attention_backend_keeps_sglangs_names_with_engine_sglang(capsys):
    rc, d = doc(capsys, *LLAMA, "--engine", "sglang", "--attention-backend", "triton")
    assert rc == 0 and d["attention_backend"] == "triton"


def test_engine_both_reads_upper_case_as_vllm_and_lower_case_as_sglang(capsys):
    _, plain = doc(capsys, *LLAMA, "--engine", "both")
    _, upper = doc(capsys, *LLAMA, "--engine", "both", "--attention-backend", "FLASHINFER")
    _, lower = doc(capsys, *LLAMA, "--engine", "both", "--attention-backend", "flashinfer")
    _, both = doc(capsys, *LLAMA, "--engine", "both", "--backend", "TRITON_ATTN", "--attention-backend", "triton")

    def sides(d):
        return d["vllm"]["groups"][0]["selected"], d["sglang"]["attention_backend"]

    assert sides(plain) == ("FLASH_ATTN", "fa3")
    assert sides(upper) == ("FLASHINFER", "fa3")
    assert sides(lower) == ("FLASH_ATTN", "flashinfer")
    assert sides(both) == ("TRITON_ATTN", "triton")


@pytest.mark.parametrize("spelling", [["-tp", "4"], ["--tensor-parallel-size", "4"], ["--tensor-parallel-size=4"]])
def test_tensor_parallel_size_spellings(capsys, spelling):
    _, ours = doc(capsys, *LLAMA, "--tp", "4")
    rc, theirs = doc(capsys, *LLAMA, *spelling)
    assert rc == 0 and theirs == ours
    assert theirs["model"]["tp"] == 4 and theirs["engine_context"]["model_num_heads"] == 8


def test_decode_context_parallel_size_spellings(capsys):
    # -tp 2: vLLM's ParallelConfig refuses a DCP size that does not divide TP
    rc, ours = doc(capsys, "explain", "deepseek-v3", "--device", "h100", "-tp", "2", "--dcp-size", "2")
    assert rc == 0 and ours["engine_context"]["dcp_size"] == 2
    for spelling in (["-dcp", "2"], ["--decode-context-parallel-size", "2"]):
        assert doc(capsys, "explain", "deepseek-v3", "--device", "h100", "-tp", "2", *spelling)[1] == ours


def test_prefill_context_parallel_size_spellings(capsys):
    rc, ours = doc(capsys, "explain", "deepseek-v3", "--device", "h100", "-tp", "2", "--pcp-size", "2")
    assert rc == 0 and ours["engine_context"]["pcp_size"] == 2
    assert all(g["selector_config"]["use_pcp"] for g in ours["groups"])
    for spelling in (["-pcp", "2"], ["--prefill-context-parallel-size", "2"]):
        assert doc(capsys, "explain", "deepseek-v3", "--device", "h100", "-tp", "2", *spelling)[1] == ours


def test_pcp_reaches_every_layer_as_use_pcp(capsys):
    # get_attn_backend passes prefill_context_parallel_size > 1 to every layer:
    # no MHA backend supports PCP in vLLM 0.33.0
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "h100", "-pcp", "2")
    assert rc == 1 and d["groups"][0]["selected"] is None
    assert all("PCP not supported" in c["reasons"] for c in d["groups"][0]["candidates"])


def test_mla_refuses_pcp_with_dcp_but_deepseek_v32s_layer_does_not(capsys):
    rc, out, err = run(capsys, "explain", "deepseek-v3", "--device", "h100", "-tp", "2", "-pcp", "2", "-dcp", "2")
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "MLAAttention does not support PCP+DCP" in err
    rc, d = doc(capsys, "explain", "deepseek-v3.2", "--device", "h100", "-tp", "2", "-pcp", "2", "-dcp", "2")
    assert rc == 0 and d["groups"][0]["selected"] is not None


def test_max_model_len_is_taken_and_noted_as_changing_nothing(capsys):
    _, before, _ = run(capsys, *LLAMA)
    rc, after, _ = run(capsys, *LLAMA, "--max-model-len", "32k")
    assert rc == 0
    added = [ln for ln in after.splitlines() if ln not in before.splitlines()]
    assert added[0].startswith("note     --max-model-len 32000: no effect on the selection")
    _, plain = doc(capsys, *LLAMA)
    rc, d = doc(capsys, *LLAMA, "--max-model-len", "32K")
    assert d["overrides"] == {"max_model_len": 32768} and len(d["input_notes"]) == 1
    assert d["groups"] == plain["groups"] and "input_notes" not in plain


@pytest.mark.parametrize("text", ["1.5K", "abc", "0", "-2", "9" * 500])
def test_max_model_len_bad_values_are_one_line(capsys, text):
    rc, _, err = run(capsys, *LLAMA, "--max-model-len", text)
    assert rc == 2 and "--max-model-len" in err


@pytest.mark.parametrize("text, reason", [
    ("abc", "is not a length; write it as 32768, 32k"),
    ("", "is not a length; write it as 32768, 32k"),
    ("1e12", "is not a length; write it as 32768, 32k"),
    ("0", "must be a positive integer or -1"),
    ("1.5K", "did you mean 1.5k?"),
])
def test_max_model_len_errors_say_what_to_write(capsys, text, reason):
    # click reported a ValueError from a parser as the bare value, without its reason
    err = one_line_error(*run(capsys, *LLAMA, "--max-model-len", text))
    assert reason in err, err


@pytest.mark.parametrize("text, value", [("1_000", 1000), ("+2048", 2048), (" 4096 ", 4096)])
def test_max_model_len_takes_what_vllms_int_takes(capsys, text, value):
    # human_readable_int ends in int(value): underscores and a sign are vLLM's too
    rc, d = doc(capsys, *LLAMA, "--max-model-len", text)
    assert rc == 0 and d["overrides"] == {"max_model_len": value}


@pytest.mark.parametrize("vllm, ours", [("half", "float16"), ("float", "float32"), ("float16", "float16")])
def test_vllm_dtype_values(capsys, vllm, ours):
    _, expected = doc(capsys, *LLAMA, "--dtype", ours)
    rc, d = doc(capsys, *LLAMA, "--dtype", vllm)
    assert rc == 0 and d["groups"] == expected["groups"] and d["model"]["dtype"] == ours


def test_dtype_auto_is_the_models_dtype(capsys):
    _, plain = doc(capsys, *LLAMA)
    rc, d = doc(capsys, *LLAMA, "--dtype", "auto")
    assert rc == 0 and d["groups"] == plain["groups"]
    # without a model "auto" is the raw config's default, bfloat16
    rc, raw = doc(capsys, "explain", "--capability", "9.0", "--head-size", "128", "--dtype", "auto")
    assert rc == 0 and raw["groups"][0]["selector_config"]["dtype"] == "bfloat16"
    rc, raw = doc(capsys, "explain", "--capability", "9.0", "--head-size", "128", "--dtype", "half")
    assert raw["groups"][0]["selector_config"]["dtype"] == "float16"


def test_unknown_dtype_lists_vllms_choices(capsys):
    err = one_line_error(*run(capsys, *LLAMA, "--dtype", "bf16"))
    assert "auto, half, float16, bfloat16, float, float32" in err


def test_attention_config_is_the_same_as_the_flags(capsys):
    _, flags = doc(capsys, *LLAMA, "--backend", "FLASH_ATTN", "--flash-attn-version", "2", "--no-use-trtllm-attention")
    rc, d = doc(capsys, *LLAMA, "--attention-config",
                '{"backend": "flash_attn", "flash_attn_version": 2, "use_trtllm_attention": false}')
    assert rc == 0
    assert d["groups"] == flags["groups"]
    assert d["overrides"] == {"backend": "flash_attn", "flash_attn_version": 2, "use_trtllm_attention": False}
    # -ac is vLLM's short form; vLLM's defaults set nothing
    rc, d = doc(capsys, *LLAMA, "-ac", '{"use_non_causal": false, "backend": null, "flash_attn_version": 3.0}')
    assert rc == 0 and d["overrides"] == {"flash_attn_version": 3}


def test_attention_config_msa_alias_is_automatic_selection(capsys):
    """AttentionConfig.__post_init__ reads CUTLASS_MSA / TRITON_MSA as MiniMax-M3's
    decode kernel and sets backend None; --attention-backend assigns it afterwards,
    so there it stays a (not modelled) backend."""
    _, auto = doc(capsys, *LLAMA)
    rc, d = doc(capsys, *LLAMA, "--attention-config", '{"backend": "triton_msa"}')
    assert rc == 0 and d["groups"] == auto["groups"] and "backend" not in d["overrides"]
    err = one_line_error(*run(capsys, *LLAMA, "--attention-backend", "TRITON_MSA"))
    assert "attn-select does not model" in err


@pytest.mark.parametrize("text, words", [
    ('{"flash_attn_max_num_splits_for_cuda_graph": 16}',
     ["attention_config.flash_attn_max_num_splits_for_cuda_graph", "does not model"]),
    ('{"flash_attn_verison": 2}', ["flash_attn_verison", "Unexpected keyword argument", "flash_attn_version"]),
    ('{"flash_attn_version": 5}', ["flash_attn_version", "Input should be 2, 3 or 4"]),
    ('{"use_trtllm_attention": "maybe"}', ["use_trtllm_attention", "valid boolean"]),
    ('{"backend": "FLASH"}', ["attention_config.backend", "Unknown attention backend"]),
    ("{bad", ["Invalid JSON"]),
    ("[1]", ["Input should be an object"]),
    ("[" * 5000, ["Invalid JSON"]),
])
def test_attention_config_errors_are_one_line(capsys, text, words):
    err = one_line_error(*run(capsys, *LLAMA, "--attention-config", text))
    assert err.startswith("error: --attention-config") or "attention_config" in err
    for w in words:
        assert w in err


def test_attention_config_backend_and_attention_backend_are_exclusive(capsys):
    err = one_line_error(*run(capsys, *LLAMA, "--attention-backend", "FLASHINFER",
                              "--attention-config", '{"backend": "TRITON_ATTN"}'))
    assert "attention_backend and attention_config.backend are mutually exclusive" in err
    err = one_line_error(*run(capsys, *LLAMA, "--flash-attn-version", "3", "-ac", '{"flash_attn_version": 2}'))
    assert "--flash-attn-version" in err and "once" in err


def test_attention_config_mla_prefill_backend_is_the_what_if(capsys):
    """attention_config.mla_prefill_backend reaches the same field as --mla-prefill-backend."""
    code, out, _ = run(capsys, "explain", "deepseek-v3", "--device", "h100", "--format", "json",
                       "--attention-config", '{"mla_prefill_backend": "FLASHINFER"}')
    assert code == 1  # FLASHINFER's MLA prefill needs Blackwell: vLLM raises
    import json

    assert json.loads(out)["groups"][0]["mla_prefill"]["backend"] == "FLASHINFER"


def test_every_modelled_attention_config_field_has_a_type():
    """A field Overrides maps from AttentionConfig but the schema lacks would be
    dropped silently (the schema ignores extra keys)."""
    from attn_select.selector.attention_config import _schema
    from attn_select.selector.overrides import ATTENTION_CONFIG_FIELDS

    assert set(ATTENTION_CONFIG_FIELDS) == set(_schema()["fields"])
