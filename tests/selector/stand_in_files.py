"""Stand-in files for differential cases whose build in vLLM loads a
tokenizer or processor (it reads special-token ids, never the vocabulary):
a three-token BPE tokenizer with the given special tokens added. They change
no attention layer."""

from __future__ import annotations


def _special(i: int, token: str) -> dict:
    return {"id": i, "content": token, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
            "special": True}


def tokenizer_json(tokens: tuple[str, ...]) -> dict:
    """tokenizer.json: vocabulary <unk>, a, b; ``tokens`` added as specials from id 3."""
    return {
        "version": "1.0", "truncation": None, "padding": None, "normalizer": None, "post_processor": None,
        "decoder": None, "added_tokens": [_special(i + 3, t) for i, t in enumerate(tokens)],
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {"<unk>": 0, "a": 1, "b": 2}, "merges": []}}


def tokenizer_files(tokens: tuple[str, ...], tokenizer_class: str, extra: dict, **named: str) -> dict:
    """tokenizer.json and a tokenizer_config.json naming the class, the
    processor's extra special tokens and the named ones (eos_token=...)."""
    return {
        "tokenizer.json": tokenizer_json(tokens),
        "tokenizer_config.json": {"tokenizer_class": tokenizer_class, "extra_special_tokens": extra, **named},
    }
