"""`attn-select explain -- vllm serve MODEL --flag ...`: a pasted vLLM
command line gives the report its flags would give, names every flag it
ignores, and rejects what vLLM's own parser rejects."""

import json

import pytest

from tests.cli.helpers import doc, run

H100 = ("explain", "--device", "h100")


def line_doc(capsys, *argv):
    """(exit code, JSON) with --format json before the pasted line (after --
    every word is the line's)."""
    rc, out, _ = run(capsys, argv[0], "--format", "json", *argv[1:])
    return rc, json.loads(out)


def one_line_error(rc, out, err):
    assert rc == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


def test_a_serve_line_is_the_same_as_the_flags(capsys):
    _, flags = doc(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--tp", "2",
                   "--backend", "FLASHINFER", "--kv-cache-dtype", "fp8")
    rc, line = line_doc(capsys, *H100, "--", "vllm", "serve", "llama-3.1-8b", "-tp", "2",
                   "--attention-backend", "FLASHINFER", "--kv-cache-dtype", "fp8")
    assert rc == 0
    assert line == flags  # nothing ignored: no input_notes either


def test_ignored_flags_are_named_in_one_note(capsys):
    rc, d = line_doc(capsys, *H100, "--", "vllm", "serve", "llama-3.1-8b", "--port", "8000",
                "--gpu-memory-utilization", "0.9", "--enforce-eager", "--served-model-name", "a", "b",
                "--hf-overrides", '{"x": 1}')
    assert rc == 0
    notes = d["input_notes"]
    assert notes[-1] == ("ignored (attn-select's model of vLLM's selection does not read them): "
                         "--port, --gpu-memory-utilization, --enforce-eager, --served-model-name")
    assert any(n.startswith("not modelled, may change vLLM's selection: --hf-overrides") for n in notes)


def test_the_text_report_shows_the_notes(capsys):
    rc, out, _ = run(capsys, *H100, "--", "vllm", "serve", "llama-3.1-8b", "--port", "8000")
    assert rc == 0
    assert "note     ignored (attn-select's model of vLLM's selection does not read them): --port" in out


def test_api_server_form_and_flexible_spellings(capsys):
    _, flags = doc(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--tp", "2", "--flash-attn-version", "2",
                   "--max-model-len", "4096")
    rc, d = line_doc(capsys, *H100, "--", "python3", "-m", "vllm.entrypoints.openai.api_server", "--model=llama-3.1-8b",
                "--tensor_parallel_size=2", "--attention-config.flash_attn_version", "2", "--max-model", "4096")
    assert rc == 0
    assert d["groups"] == flags["groups"] and d["overrides"] == flags["overrides"]


def test_the_line_as_one_quoted_argument(capsys):
    _, flags = doc(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--backend", "TRITON_ATTN")
    rc, d = line_doc(capsys, *H100, "vllm serve llama-3.1-8b --attention-config '{\"backend\": \"TRITON_ATTN\"}'")
    assert rc == 0 and d == flags


@pytest.mark.parametrize("nl", ["\n", "\r\n"])
def test_a_multi_line_paste_with_line_continuations(capsys, nl):
    """A serve command copied from a README or a shell script, pasted as
    one quoted argument: the shell's backslash-newline continuations are
    removed before splitting, as sh does (it was 'unrecognized arguments: '
    with an invisible newline word)."""
    _, flags = doc(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--tp", "2", "--dtype", "half")
    pasted = f"vllm serve llama-3.1-8b \\{nl}  --tensor-parallel-size 2 \\{nl}  --dtype half{nl}"
    rc, d = line_doc(capsys, *H100, pasted)
    assert rc == 0 and d == flags


def test_model_reading_flags_of_the_line(capsys):
    _, plain = doc(capsys, "explain", "gemma-3-27b", "--device", "h100")
    rc, d = line_doc(capsys, *H100, "--", "vllm", "serve", "gemma-3-27b", "--disable-sliding-window")
    assert rc == 0
    assert any("--disable-sliding-window" in n for n in d["model"]["notes"])
    assert len(d["groups"]) < len(plain["groups"])  # no sliding group any more


def test_engine_both_takes_the_line_for_vllm(capsys):
    rc, d = line_doc(capsys, *H100, "--engine", "both", "--", "vllm", "serve", "llama-3.1-8b",
                "--attention-backend", "FLASHINFER", "-tp", "2")
    assert rc == 0
    assert d["vllm"]["groups"][0]["selected"] == "FLASHINFER" and d["sglang"]["model"]["tp"] == 2


@pytest.mark.parametrize("line, words", [
    (["vllm", "serve", "llama-3.1-8b", "--no-such-flag", "1"], ["unrecognized arguments: --no-such-flag"]),
    (["vllm", "serve", "llama-3.1-8b", "--backend", "FLASHINFER"], ["unrecognized arguments: --backend"]),
    (["vllm", "serve", "llama-3.1-8b", "--max", "1"], ["ambiguous option: --max could match"]),
    (["vllm", "serve", "llama-3.1-8b", "-tp"], ["argument --tensor-parallel-size: expected one argument"]),
    (["vllm", "serve", "llama-3.1-8b", "-tp", "two"], ["invalid int value: 'two'"]),
    (["vllm", "serve", "llama-3.1-8b", "--dtype", "bf16"], ["unknown dtype 'bf16'"]),
    (["vllm", "serve", "llama-3.1-8b", "--enforce-eager=yes"], ["ignored explicit argument 'yes'"]),
    (["vllm", "serve", "llama-3.1-8b", "--config", "x.yaml"], ["does not read vLLM's YAML config files"]),
    (["vllm", "serve", "a", "b"], ["unrecognized arguments: b"]),
    (["vllm", "serve", "llama-3.1-8b", "--attention-backend", "FLASHINFER", "-ac", '{"backend": "TRITON_ATTN"}'],
     ["mutually exclusive"]),
    (["vllm", "serve", "llama-3.1-8b", "-ac", '{"mla_prefill_backend": "X"}'], ["mla_prefill_backend"]),
])
def test_what_vllm_rejects_is_one_line(capsys, line, words):
    err = one_line_error(*run(capsys, *H100, "--", *line))
    for w in words:
        assert w in err


def test_a_value_given_before_and_in_the_line_is_an_error(capsys):
    err = one_line_error(*run(capsys, *H100, "--tp", "2", "--", "vllm", "serve", "llama-3.1-8b", "-tp", "4"))
    assert "--tp" in err and "-tp" in err and "once" in err


def test_engine_sglang_rejects_a_vllm_line(capsys):
    err = one_line_error(*run(capsys, *H100, "--engine", "sglang", "--", "vllm", "serve", "llama-3.1-8b"))
    assert "vLLM's" in err


def test_extra_arguments_without_a_vllm_command_are_an_error(capsys):
    err = one_line_error(*run(capsys, "explain", "llama-3.1-8b", "extra", "--device", "h100"))
    assert "unexpected arguments after MODEL" in err and "-- vllm serve" in err


@pytest.mark.parametrize("flags, words", [
    (["--seed", "x"], "argument --seed: invalid int value: 'x'"),
    (["--seed=x"], "argument --seed: invalid int value: 'x'"),
    (["--gpu-memory-utilization", "abc"], "argument --gpu-memory-utilization: invalid float value: 'abc'"),
    (["-pp", "two"], "argument --pipeline-parallel-size: invalid int value: 'two'"),
    (["--cudagraph-capture-sizes", "1", "2", "x"], "argument --cudagraph-capture-sizes: invalid int value: 'x'"),
    # vLLM's human_readable_int and optional_type(int) convert these; the values were only noted before
    (["--max-num-batched-tokens", "1.5K"], "argument --max-num-batched-tokens: invalid int value: '1.5K'"),
    (["--max-num-active-seqs", "many"], "argument --max-num-active-seqs: invalid int value: 'many'"),
    # argparse's choices
    (["--scheduling-policy", "lifo"], "argument --scheduling-policy: invalid choice: 'lifo' (choose from fcfs, priority)"),
    (["--max-lora-rank", "12"], "argument --max-lora-rank: invalid choice: '12'"),
])
def test_a_value_vllms_parser_refuses_is_refused_for_a_noted_option_too(capsys, flags, words):
    """argparse converts these with type=int / type=float and refuses the line
    (vllm serve exits 2); the options were only noted and the line accepted."""
    err = one_line_error(*run(capsys, "explain", "--device", "h100", "--", "vllm", "serve", "llama-3.1-8b", *flags))
    assert words in err, err


@pytest.mark.parametrize("flags, words", [
    (["--gpu-memory-utilization", "2.5"],
     "--gpu-memory-utilization: '2.5' is refused by vLLM 0.33.0 (CacheConfig.gpu_memory_utilization must be "
     "greater than 0 and at most 1)"),
    (["--max-num-seqs", "-5"], "(SchedulerConfig.max_num_seqs must be at least 1)"),
    (["--max-num-batched-tokens=0"], "(SchedulerConfig.max_num_batched_tokens must be at least 1)"),
    (["--watermark", "1"], "(SchedulerConfig.watermark must be at least 0 and less than 1)"),
    (["--spec-tokens", "0"], "(SpeculativeConfig.num_speculative_tokens must be greater than 0)"),
])
def test_a_value_vllms_config_refuses_is_refused_for_a_noted_option_too(capsys, flags, words):
    """vLLM's parser takes these, then its config classes refuse them (pydantic
    Field bounds; vllm serve does not start); the options were only noted."""
    err = one_line_error(*run(capsys, "explain", "--device", "h100", "--", "vllm", "serve", "llama-3.1-8b", *flags))
    assert words in err and "give a value in that range" in err, err


@pytest.mark.parametrize("flags", [["--seed", "5"], ["--seed", "1_000"], ["--gpu-memory-utilization", "0.9"],
                                   ["--gpu-memory-utilization", "1e-1"], ["--gpu-memory-utilization", "1"],
                                   ["--max-num-seqs", "1"], ["--max-num-batched-tokens", "8k"],
                                   ["--max-num-active-seqs", "None"], ["--scheduling-policy", "priority"],
                                   ["--moe-backend", "Deep-GEMM"], ["--max-lora-rank", "+16"]])
def test_what_vllms_parser_converts_is_still_taken(capsys, flags):
    rc, _, err = run(capsys, "explain", "--device", "h100", "--", "vllm", "serve", "llama-3.1-8b", *flags)
    assert rc == 0, err
