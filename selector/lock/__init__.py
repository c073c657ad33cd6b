"""Deployments and lockfiles: the inputs of a CI gate and what it expects.

A *deployments file* names each deployment's inputs (model or raw selector
config, device or capability, what-if overrides, installed kernels). A
*lockfile* records, per deployment and attention group, the backend vLLM
0.33.0 selects, the FlashAttention version, the error/warning text and every
candidate's reasons, and embeds each deployment's inputs so ``check`` can
recompute without the deployments file.

Reading keeps YAML node marks so every bad value is reported as
``file:line: problem``. ``make_lock`` and ``compare`` are pure. The
``Evaluator`` shares work across deployments: equal inputs are explained
once, models and devices are loaded once.

One idea per module, imported in dependency order:

- ``yamlmarks``: YAML with the line of every key and item; located errors.
- ``deployments``: the deployments file's models and ``parse_deployments``.
- ``lockfile``: the lockfile's models, ``parse_lockfile``, ``make_lock``, ``dump_lock``.
- ``evaluate``: the ``Evaluator`` (explain per deployment) and ``lock_deployments``.
- ``compare``: ``Diff`` and ``compare`` of a lock with what is evaluated now.
- ``check``: ``run_check`` and its ``CheckReport``.
"""

from attn_select.selector.lock.yamlmarks import BadInput, Loc, Located, dotted, load_yaml, validation_error
from attn_select.selector.lock.deployments import (
    KERNELS_SOURCE,
    Deployment,
    DeploymentInputs,
    DeploymentsFile,
    OverridesModel,
    SelectorModel,
    SGLangFlagsModel,
    given,
    parse_deployments,
)
from attn_select.selector.lock.lockfile import (
    GROUP_FIELDS,
    LOCK_HEADER,
    LOCK_SCHEMA,
    SGLANG_FIELDS,
    BackendName,
    Engine,
    LockDeployment,
    Lockfile,
    LockGroup,
    SGLangLock,
    dump_lock,
    make_lock,
    parse_lockfile,
    sglang_engine_id,
)
from attn_select.selector.lock.evaluate import Evaluator, lock_deployments, lock_groups, relative_model_path, sglang_lock
from attn_select.selector.lock.compare import (
    ABSENT,
    Diff,
    Recomputed,
    compare,
    compare_deployment,
    compare_group,
    compare_sglang,
    show_value,
)
from attn_select.selector.lock.check import CheckReport, accept_command, inputs_view, run_check

__all__ = [
    "ABSENT",
    "GROUP_FIELDS",
    "KERNELS_SOURCE",
    "LOCK_HEADER",
    "LOCK_SCHEMA",
    "SGLANG_FIELDS",
    "BackendName",
    "BadInput",
    "CheckReport",
    "Deployment",
    "DeploymentInputs",
    "DeploymentsFile",
    "Diff",
    "Engine",
    "Evaluator",
    "Loc",
    "Located",
    "LockDeployment",
    "LockGroup",
    "Lockfile",
    "OverridesModel",
    "Recomputed",
    "SGLangFlagsModel",
    "SGLangLock",
    "SelectorModel",
    "accept_command",
    "compare",
    "compare_deployment",
    "compare_group",
    "compare_sglang",
    "dotted",
    "dump_lock",
    "given",
    "inputs_view",
    "load_yaml",
    "lock_deployments",
    "lock_groups",
    "make_lock",
    "parse_deployments",
    "parse_lockfile",
    "relative_model_path",
    "run_check",
    "sglang_engine_id",
    "sglang_lock",
    "show_value",
    "validation_error",
]
