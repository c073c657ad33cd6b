"""The MLA PCP+DCP refusal against vLLM 0.33.0's source: which layer class
opts in (``supports_pcp_dcp``), and which architectures build it on CUDA.
Layers are not built by the oracles with more than one rank, so the fact is
read from the source (tests/vllm_source.py; skipped without it)."""

from __future__ import annotations

import re

import pytest

from attn_select.selector import explain as explain_mod
from tests.vllm_source import vllm_source

SRC = vllm_source()
pytestmark = pytest.mark.skipif(not SRC.exists(), reason="vLLM 0.33.0 source not unpacked")


def test_mla_attention_refuses_pcp_with_dcp_unless_its_class_opts_in():
    text = (SRC / "model_executor" / "layers" / "attention" / "mla_attention.py").read_text()
    assert "supports_pcp_dcp: ClassVar[bool] = False" in text
    assert "if self.use_pcp and self.impl.dcp_world_size > 1 and not self.supports_pcp_dcp:" in text
    assert 'f"{type(self).__name__} does not support PCP+DCP."' in text
    assert explain_mod.MLA_PCP_DCP_LAYER_ERROR == "NotImplementedError: MLAAttention does not support PCP+DCP."


def test_only_deepseek_v32s_attention_opts_in_and_its_cuda_archs_are_mirrored():
    opting = sorted(str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                    if "supports_pcp_dcp: ClassVar[bool] = True" in p.read_text(errors="replace"))
    assert opting == ["models/deepseek_v32/attention.py"]
    init = (SRC / "models" / "deepseek_v32" / "__init__.py").read_text()
    cuda = init.split("if current_platform.is_cuda():", 1)[1].split("elif", 1)[0]
    archs = set(re.findall(r"import DeepseekV32ForCausalLM(?: as (\w+))?", cuda))
    assert {a or "DeepseekV32ForCausalLM" for a in archs} == explain_mod._PCP_DCP_MLA_ARCHS
    assert "DeepseekV32Attention(" in (SRC / "models" / "deepseek_v32" / "nvidia" / "model.py").read_text()
