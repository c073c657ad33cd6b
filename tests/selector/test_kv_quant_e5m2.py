"""vLLM 0.33.0's fp8_e5m2 refusal when the attention layers are built:
``_init_kv_cache_quant`` (model_executor/layers/attention/attention.py:157-221)
raises "fp8_e5m2 kv-cache is not supported with fp8 checkpoints." for a layer
whose kv_cache_dtype is fp8_e5m2 when the quantization config's
get_quant_method gives it a KV-cache method, except compressed-tensors
without a kv_cache_scheme. The facts are in selector/quant_methods.py."""

from __future__ import annotations

import pytest

from attn_select.selector.config import Capability, Kernels
from attn_select.selector.device import Device
from attn_select.selector.errors import UserError
from attn_select.selector.explain import Overrides, explain
from attn_select.selector.model_facts import AttentionGroup, LayerAttention, ModelFacts
from attn_select.selector.quant_methods import checkpoint_quant, kv_method_refuses_e5m2, resolved_method
from tests.vllm_source import vllm_source

H100 = Capability(9, 0)
REFUSAL = ("vLLM 0.33.0 refuses this deployment when it builds its layers: Attention.__init__ (_init_kv_cache_quant), layer 0: "
           "fp8_e5m2 kv-cache is not supported with fp8 checkpoints.")

FP8 = {"quant_method": "fp8", "activation_scheme": "dynamic"}
CT_WEIGHT_ONLY = {"quant_method": "compressed-tensors", "config_groups": {}}
CT_KV = {**CT_WEIGHT_ONLY, "kv_cache_scheme": {"type": "float", "num_bits": 8, "strategy": "tensor"}}
MODELOPT_FP8 = {"quant_method": "modelopt", "quantization": {"quant_algo": "FP8"}}
# config.json's flat form with its quantized_layers map (get_quant_config reads
# hf_quant_config.json instead when the map is not at the top level)
MIXED = {"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION",
         "quantized_layers": {"model.layers.0.mlp.down_proj": {"quant_algo": "FP8"}}}
MIXED_KV = {**MIXED, "kv_cache_scheme": {"type": "float", "num_bits": 8, "dynamic": False}}
AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}
GPTQ = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True}


def dense(q: dict | None, layers: tuple[AttentionGroup, ...] | None = None) -> ModelFacts:
    attn = LayerAttention(head_size=128, head_size_v=128, num_heads=32, num_kv_heads=8)
    return ModelFacts(name="m", architecture="LlamaForCausalLM", model_type="llama", dtype="bfloat16",
                      num_layers=4, tp=1, groups=layers or (AttentionGroup("full", (0, 1, 2, 3), attn),),
                      head_size=128, num_heads=32, num_kv_heads=8,
                      quantization=resolved_method(q, "llama"), checkpoint_quant=checkpoint_quant(q))


def deepseek_v3(q: dict | None) -> ModelFacts:
    attn = LayerAttention(head_size=576, head_size_v=512, num_heads=128, num_kv_heads=1, use_mla=True,
                          qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, kv_lora_rank=512)
    return ModelFacts(name="m", architecture="DeepseekV3ForCausalLM", model_type="deepseek_v3",
                      dtype="bfloat16", num_layers=4, tp=1, groups=(AttentionGroup("mla", (0, 1, 2, 3), attn),),
                      head_size=576, num_heads=128, num_kv_heads=1,
                      quantization=resolved_method(q, "deepseek_v3"), checkpoint_quant=checkpoint_quant(q))


def run(model: ModelFacts, kv: str | None, **ov):
    return explain(model, Device(name="H100", capability=H100, source="test"), Kernels(),
                   Overrides(kv_cache_dtype=kv, **ov))


@pytest.mark.parametrize("q", [FP8, CT_KV, MODELOPT_FP8, MIXED_KV,
                               {"quant_method": "quark", "export": {"kv_cache_group": []}}],
                         ids=["fp8", "ct-kv-scheme", "modelopt-fp8", "modelopt-mixed-kv", "quark"])
def test_a_kv_method_refuses_fp8_e5m2(q):
    with pytest.raises(UserError) as exc:
        run(dense(q), "fp8_e5m2")
    assert str(exc.value) == REFUSAL


@pytest.mark.parametrize("kv", [None, "auto", "fp8", "fp8_e4m3"])
def test_an_fp8_checkpoint_takes_the_other_cache_dtypes(kv):
    r = run(dense(FP8), kv)
    assert r.ok and all(g.layer_error is None for g in r.groups)


@pytest.mark.parametrize("q", [None, CT_WEIGHT_ONLY, MIXED, AWQ, GPTQ],
                         ids=["unquantized", "ct-weight-only", "modelopt-mixed-no-kv", "awq", "gptq"])
def test_no_kv_method_keeps_fp8_e5m2(q):
    r = run(dense(q), "fp8_e5m2")
    assert r.ok and r.groups[0].cfg.kv_cache_dtype == "fp8_e5m2"


def test_online_fp8_on_an_unquantized_checkpoint_keeps_fp8_e5m2():
    # -q fp8 without a quantization_config builds OnlineQuantizationConfig,
    # which gives Attention no method (online/base.py)
    r = run(dense(None), "fp8_e5m2", quantization="fp8")
    assert r.ok


def test_a_skipped_layer_builds_auto_and_the_first_refusing_layer_is_named():
    attn = LayerAttention(head_size=128, head_size_v=128, num_heads=32, num_kv_heads=8)
    groups = (AttentionGroup("kv-auto", (0,), attn._replace(kv_cache_dtype="auto")),
              AttentionGroup("full", (1, 2, 3), attn))
    with pytest.raises(UserError, match=r"Attention.__init__ \(_init_kv_cache_quant\), layer 1: fp8_e5m2"):
        run(dense(FP8, groups), "fp8_e5m2")
    only_skipped = (AttentionGroup("kv-auto", (0, 1, 2, 3), attn._replace(kv_cache_dtype="auto")),)
    assert run(dense(FP8, only_skipped), "fp8_e5m2").ok


def test_an_earlier_layers_selection_error_comes_first():
    # vLLM raises at the first layer it builds; a later layer's refusal stays
    # a layer error in the report
    # (an MLA layer first: no MLA backend takes fp8_e5m2)
    attn = LayerAttention(head_size=128, head_size_v=128, num_heads=32, num_kv_heads=8)
    mla = deepseek_v3(None).groups[0].attn
    r = run(dense(FP8, (AttentionGroup("mla", (0,), mla), AttentionGroup("full", (1, 2, 3), attn))), "fp8_e5m2")
    assert r.groups[0].selection.selected is None
    assert r.groups[1].layer_error == "ValueError: fp8_e5m2 kv-cache is not supported with fp8 checkpoints."
    assert not r.ok


@pytest.mark.parametrize("q", [FP8, MODELOPT_FP8], ids=["fp8", "modelopt-fp8"])
def test_mla_fails_selection_before_the_kv_method_is_asked(q):
    # MLAAttention selects its backend before _init_kv_cache_quant, and no
    # MLA backend takes fp8_e5m2: the selection error is vLLM's message,
    # even for ModelOpt, whose method MLAAttention would get
    r = run(deepseek_v3(q), "fp8_e5m2")
    assert r.groups[0].selection.selected is None and r.groups[0].layer_error is None


def test_which_classes_reach_mla():
    fp8, mo = checkpoint_quant(FP8), checkpoint_quant(MODELOPT_FP8)
    assert kv_method_refuses_e5m2("Fp8Config", fp8, use_mla=False)
    assert not kv_method_refuses_e5m2("Fp8Config", fp8, use_mla=True)
    assert kv_method_refuses_e5m2("ModelOptFp8Config", mo, use_mla=True)
    assert not kv_method_refuses_e5m2("ModelOptMixedPrecisionConfig", checkpoint_quant(MIXED_KV), use_mla=True)
    assert not kv_method_refuses_e5m2("CompressedTensorsConfig", checkpoint_quant(CT_KV), use_mla=True)
    assert not kv_method_refuses_e5m2("OnlineQuantizationConfig", None, use_mla=False)


@pytest.mark.parametrize(("q", "declared"), [
    (CT_WEIGHT_ONLY, False), (CT_KV, True), ({**CT_WEIGHT_ONLY, "kv_cache_scheme": None}, False),
    (MIXED, False), (MIXED_KV, True),
    # the flat (config.json) ModelOpt form reads only an 8-bit float scheme
    ({"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_scheme": {"type": "float", "num_bits": 8}}, True),
    ({"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_scheme": {"type": "float", "num_bits": 4}}, False),
    (FP8, False),
])
def test_kv_quant_declared_as_the_config_class_reads_it(q, declared):
    assert checkpoint_quant(q).kv_quant_declared is declared


def test_the_refusal_and_the_kv_methods_are_in_vllms_source():
    root = vllm_source()
    if not root.exists():
        pytest.skip("vLLM 0.33.0 source not unpacked")
    attn = (root / "model_executor/layers/attention/attention.py").read_text().splitlines()
    assert 'if layer.kv_cache_dtype == "fp8_e5m2":' in attn[204]
    assert '"fp8_e5m2 kv-cache is not supported with fp8 checkpoints."' in attn[218]
    quant = root / "model_executor/layers/quantization"
    for path, line, text in [("fp8.py", 206, "isinstance(layer, Attention)"),
                             ("modelopt.py", 232, "isinstance(layer, (Attention, MLAAttention))"),
                             ("modelopt.py", 1849, "isinstance(layer, Attention)"),
                             ("modelopt.py", 1850, "if self.kv_cache_quant_method"),
                             ("compressed_tensors/compressed_tensors.py", 213, "isinstance(layer, Attention)"),
                             ("quark/quark.py", 257, "issubclass(layer_type, Attention)")]:
        assert text in (quant / path).read_text().splitlines()[line - 1], (path, line)


def test_explain_cli_refuses_in_one_line(tmp_path, capsys):
    import json

    from tests.cli.helpers import run as cli

    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 1024,
              "num_attention_heads": 8, "num_key_value_heads": 8, "num_hidden_layers": 2,
              "intermediate_size": 2048, "vocab_size": 1024, "torch_dtype": "bfloat16",
              "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic"}}
    (tmp_path / "config.json").write_text(json.dumps(config))
    rc, out, err = cli(capsys, "explain", tmp_path / "config.json", "--device", "h100", "--kv-cache-dtype", "fp8_e5m2")
    assert rc == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert REFUSAL in err
    assert cli(capsys, "explain", tmp_path / "config.json", "--device", "h100", "--kv-cache-dtype", "fp8")[0] == 0
