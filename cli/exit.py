"""Exit codes, as ty documents them: 0 ok, 1 findings, 2 bad input, 101 internal error."""

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FINDINGS = 1  # a selection failed / differs from the lock / a run was wrong
    USAGE = 2  # bad input: options, files, names
    INTERNAL = 101  # a bug in attn-select
