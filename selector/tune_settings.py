"""The vLLM settings ``attn-select tune`` compares, and which of them vLLM accepts.

A setting is one ``Overrides`` value: what a deployer would pass to vLLM
(``--attention-backend``, ``--attention-config``). The candidates are every
backend and inner variant some vLLM setting can select: FLASH_ATTN at each
FlashAttention version, FLASHINFER with the trtllm-API kernels forced on and
off, TRITON_ATTN, FLEX_ATTENTION, and for MLA models every MLA backend
(those ``run`` has no adapter for are listed and skipped). vLLM's default (no overrides) comes first.

Each candidate goes through ``explain`` exactly as vLLM's selection would
take it (``validate``): a backend vLLM rejects for the model, an engine
config vLLM refuses, or an FA version vLLM would not run (it falls back, or
the layer refuses it) drops the setting, with the reason. Pure: no torch.
"""

from __future__ import annotations

import json
from typing import Callable, NamedTuple

from attn_select.backends import registry
from attn_select.selector.errors import UserError
from attn_select.selector.overrides import Overrides

DEFAULT_LABEL = "vLLM default"
FA_VERSIONS = (2, 3, 4)  # attention_config.flash_attn_version's values


class Setting(NamedTuple):
    """One vLLM setting: a label and the overrides it sets (vLLM's names)."""

    label: str
    backend: str | None = None
    flash_attn_version: int | None = None
    use_trtllm_attention: bool | None = None

    @property
    def is_default(self) -> bool:
        return self.backend is None and self.flash_attn_version is None and self.use_trtllm_attention is None

    def overrides(self, base: Overrides) -> Overrides:
        """``base`` (the run's dtype, tp, page size, KV dtype) with this setting."""
        return base._replace(backend=self.backend, flash_attn_version=self.flash_attn_version,
                             use_trtllm_attention=self.use_trtllm_attention)

    def attention_config(self) -> dict[str, object]:
        out: dict[str, object] = {}
        if self.flash_attn_version is not None:
            out["flash_attn_version"] = self.flash_attn_version
        if self.use_trtllm_attention is not None:
            out["use_trtllm_attention"] = self.use_trtllm_attention
        return out

    def vllm_flags(self) -> list[str]:
        """The setting as vLLM's own command-line flags."""
        flags = []
        if self.backend is not None:
            flags.append(f"--attention-backend {self.backend}")
        cfg = self.attention_config()
        if cfg:
            flags.append(f"--attention-config '{json.dumps(cfg)}'")
        return flags

    def to_dict(self) -> dict[str, object]:
        return dict(label=self.label, default=self.is_default, backend=self.backend,
                    flash_attn_version=self.flash_attn_version, use_trtllm_attention=self.use_trtllm_attention,
                    vllm_flags=self.vllm_flags())


def stand_ins() -> dict[str, str]:
    """Backend -> what ``attn-select run`` executes for it in place of vLLM's
    own kernel (``BackendSpec.run_stand_in``), for the backends where it does."""
    return {name: spec.run_stand_in for name, spec in registry.BACKENDS.items() if spec.run_stand_in}


def only_settings(candidates: list[Setting], wanted: str | None) -> list[Setting]:
    """``--settings``: the candidates named by a comma list of setting labels
    ("FLASHINFER trtllm off") or backend names (FLASHINFER: all its
    variants). vLLM's default always stays: every margin is measured
    against it. An unknown name is a one-line error listing the choices."""
    if wanted is None:
        return candidates
    names = [w.strip() for w in wanted.split(",") if w.strip()]
    if not names:
        raise UserError("--settings: give setting labels or backend names, e.g. FLASHINFER,TRITON_ATTN")
    known = {s.label.upper(): s.label for s in candidates} | {s.backend: s.backend for s in candidates if s.backend}
    for n in names:
        if n.upper() not in known:
            choices = ", ".join(dict.fromkeys([s.backend for s in candidates if s.backend] +
                                              [s.label for s in candidates if s.backend]))
            raise UserError(f"--settings: {n!r} is no setting tune compares here; choose from {choices}")
    up = {n.upper() for n in names}
    return [s for s in candidates if s.is_default or s.label.upper() in up or (s.backend or "").upper() in up]


class Dropped(NamedTuple):
    setting: Setting
    reason: str


def candidate_settings(use_mla: bool) -> list[Setting]:
    """vLLM's default, then every backend / inner variant a flag can select
    for this kind of layer (MHA or MLA), in vLLM's Hopper priority order."""
    out = [Setting(DEFAULT_LABEL)]
    if use_mla:
        # every MLA backend: the selector drops those vLLM rejects for the
        # model; one it accepts that run has no adapter for is listed, skipped
        for name, spec in registry.BACKENDS.items():
            if spec.is_mla:
                out.append(Setting(name, backend=name))
        return out
    for v in FA_VERSIONS:
        out.append(Setting(f"FLASH_ATTN fa{v}", backend="FLASH_ATTN", flash_attn_version=v))
    out.append(Setting("FLASHINFER trtllm on", backend="FLASHINFER", use_trtllm_attention=True))
    out.append(Setting("FLASHINFER trtllm off", backend="FLASHINFER", use_trtllm_attention=False))
    out.append(Setting("TRITON_ATTN", backend="TRITON_ATTN"))
    out.append(Setting("FLEX_ATTENTION", backend="FLEX_ATTENTION"))
    return out


def rejection(exp) -> str | None:
    """Why vLLM would not run this explanation (None: it would): a group with
    no selection, a layer that refuses it at init, an MLA prefill that fails,
    or an FA version override vLLM does not honour."""
    asked = exp.overrides.flash_attn_version
    for g in exp.groups:
        sel = g.selection
        if sel.selected is None:
            return f"{g.name}: {sel.error or 'nothing selected'}"
        if g.layer_error is not None:
            return f"{g.name}: the layer refuses it: {g.layer_error}"
        if g.mla_prefill is not None and g.mla_prefill.error is not None:
            return f"{g.name}: MLA prefill: {g.mla_prefill.error}"
        if asked is not None and sel.selected == "FLASH_ATTN" and g.fa_version.version != asked:
            got = g.fa_version.version
            return f"{g.name}: vLLM runs FA{got} instead of FA{asked} here" if got else \
                f"{g.name}: no FlashAttention build vLLM can run"
    return None


def validate(settings: list[Setting], explain_for: Callable[[Overrides], object], base: Overrides
             ) -> tuple[list[tuple[Setting, object]], list[Dropped]]:
    """Each setting through ``explain_for`` (the selector): the accepted ones
    with their explanation, and the dropped ones with vLLM's reason."""
    kept, dropped = [], []
    for s in settings:
        try:
            exp = explain_for(s.overrides(base))
        except UserError as e:
            dropped.append(Dropped(s, str(e)))
            continue
        why = rejection(exp)
        if why is not None:
            dropped.append(Dropped(s, why))
        else:
            kept.append((s, exp))
    return kept, dropped
