"""Tiny random models of every family attnlab reads, built offline once per test worker.

``families`` (a session fixture) is a :class:`Families`: ``families.folder("qwen2")`` is a
Hugging Face folder (``config.json``, ``model.safetensors``, ``tokenizer.json``,
``tokenizer_config.json``) written by transformers' ``save_pretrained``;
``families.gguf("qwen2", "Q4_0")`` is the same model written as llama.cpp's
``convert_hf_to_gguf.py`` writes it, with gguf's writer; ``families.tokenizer_gguf("mistral")``
is a GGUF holding only a folder's tokenizer (its metadata, no tensors), for tokenizer oracles.
Each is built the first time it is asked for, into the session's temporary folder.

Every model is 2 or 3 layers of hidden size 64, feed-forward 256, its weights drawn
from ``torch.Generator().manual_seed(recipe.seed)`` in parameter-name order (2-D: normal with
std 1/√(inputs); 1-D: the initial value, 0 or 1, plus normal 0.1), float32. The tokenizers are
trained by ``tokenizers`` on :data:`CORPUS` (its BPE trainer is deterministic) or, for WordPiece,
written by hand. Same seed, same bytes, every run.

=============  ==========  ======  =====================================================================
name           model_type  layers  what is on
=============  ==========  ======  =====================================================================
smollm2        llama       2       SmolLM2-style: GQA 4/2, tied output, rope θ 100000, byte-level BPE
                                   split like llama.cpp's ``smollm`` (digits one by one), ChatML template
                                   (SmolLM2's own), specials first (ids 0..2); tokenizer_class
                                   PreTrainedTokenizerFast, so transformers keeps the digit split.
                                   GGUF: all kinds.
llama3         llama       3       Llama 3: MQA 4/1, untied output, ``rope_type: llama3`` (factor 8,
                                   original context 64), byte-level BPE with Llama 3's split, BOS
                                   ``<|begin_of_text|>`` added, Llama 3 chat template. Folder only
                                   (transformers drops a GGUF's llama3 rope factors).
mistral        mistral     2       sliding window 4, GQA 4/2, untied; SentencePiece-style BPE with byte
                                   fallback, "▁" prefix (Metaspace), ``<s>`` added; Mistral v0.1 template.
qwen2          qwen2       2       q/k/v biases, GQA 4/2, tied; byte-level BPE with Qwen2's split
                                   (specials last), Qwen2.5 chat template. GGUF: all kinds.
qwen3          qwen3       2       per-head q/k RMSNorm, head_dim 32 (≠ 64/4), GQA 4/2, untied; Qwen2's
                                   tokenizer and template.
phi3           phi3        2       fused ``qkv_proj`` and ``gate_up_proj``, MHA 4/4, untied;
                                   SentencePiece-style with ``<|user|>``…``<|end|>`` specials, the "▁"
                                   prefix from a normalizer (its tokenizer.json's form), Phi-3 template.
gemma          gemma       2       norms stored as 1 + w, GeGLU (tanh GELU), embeddings × √64, MQA 4/1,
                                   head_dim 32, tied; Gemma's SentencePiece-style tokenizer (no "▁"
                                   prefix, ``<bos>`` added), Gemma template (raises on a system turn).
gemma2         gemma2      3       soft-caps 50 (attention) and 30 (logits), sandwich norms, local
                                   (window 4) / global / local layers, head_dim 256 = query_pre_attn_scalar
                                   (llama.cpp and transformers agree on the scale), GQA 4/2, tied;
                                   Gemma's tokenizer and template. GGUF: all kinds (the Gemma GGUF:
                                   transformers reads no Gemma 1 GGUF).
gemma3         gemma3_text 3       per-head q/k RMSNorm, layers local/global/local (window 4), RoPE
                                   θ 10000 local and 1000000 global, query_pre_attn_scalar 16 (≠ head_dim
                                   32), GQA 4/2, tied; Gemma's tokenizer and template.
gpt2           gpt2        2       learned positions (1024: transformers reads a GPT-2 GGUF's table as
                                   1024 long), fused qkv ``Conv1D``, tanh GELU, biases, tied; byte-level
                                   BPE split like GPT-2. GGUF: all kinds.
bert           bert        2       token types, absolute positions, post-LN; WordPiece (by hand), lower-cased.
roberta        roberta     2       positions offset by padding_idx + 1; byte-level BPE, ``<s>``…``</s>``.
distilbert     distilbert  2       no token types; WordPiece (by hand).
=============  ==========  ======  =====================================================================

``families.folder("smollm2", "bfloat16")`` and ``("smollm2", "float16")``: the same weights
saved in that dtype (the float32 folder's values rounded). ``families.sharded(name)``: the
float32 folder with its weights in shards and an index; ``families.split_gguf(name, kind)``: a
GGUF cut into parts as ``gguf-split`` cuts one.

GGUF kinds (``families.gguf(name, kind)``), for smollm2, qwen2, gemma2 and gpt2:
``F32``, ``F16``, ``Q8_0``, ``Q4_0``, ``Q4_1``, ``Q5_0``: every 2-D weight but GPT-2's position
table in that type, quantised by ``gguf.quants.quantize`` ("pure", as ``llama-quantize --pure``);
1-D tensors F32. ``K``: everything F32 except each layer's ``ffn_down`` (256 inputs: one 256-value
super-block a row), layer 0 Q4_K, layer 1 Q5_K, layer 2 Q6_K, as random valid blocks (random
bytes, finite float16 scales): that file's weights are its own, not the folder's. transformers reads
every one of them (``gguf_file=``); the F32 file gives back the folder's weights exactly (Gemma 2's
norms to float32's rounding of (1 + w) − 1).
The metadata is what ``convert_hf_to_gguf.py`` writes: tensor names from gguf's
``TensorNameMap``, Llama's q/k rows permuted (``LlamaModel.permute``), Gemma's norms stored as
1 + w, GPT-2's Conv1D weights transposed and its output written beside the embedding, no
``output.weight`` for tied models, the tokenizer as tokens, types, merges (byte-level) or scores
(SentencePiece-style: -id for normal pieces, 0 for the rest), special ids, ``add_bos_token`` and
the chat template.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

# -- the text every tokenizer learns from --------------------------------------------------------

CORPUS = [
    "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs on.",
    "Attention weights sum to one: each query shares its attention among the keys.",
    "The keys and the values come from the same tokens, and the queries look at them.",
    "In 2017, eight authors wrote 'Attention Is All You Need'. It has 15 pages and 6 tables.",
    "Numbers like 3.14159, 42 and 1000000 are split one digit at a time by some tokenizers.",
    "def attention(q, k, v):\n    scores = q @ k.T / sqrt(d)\n    return softmax(scores) @ v\n",
    "Hello, world! Hello again, world. Good morning, good evening and good night.",
    "Les élèves écrivent une phrase en français; die Schüler schreiben einen Satz.",
    "Emoji and other scripts: 😀 🚀 北京 東京 Москва — all bytes in the end.",
    "Whitespace matters:  two spaces,   three spaces,\ttabs,\nnew lines\n\nand blank lines.",
    "A model reads tokens, not letters; a tokenizer turns text into ids and back again.",
    "She said: \"I'm sure you'll see we've done it, they're here and it's done.\"",
] * 3

# A sample of text for comparing tokenizers: every kind of character the corpus has and some it has not.
SAMPLES = [
    "Hello world",
    " leading space and trailing space ",
    "Attention is all you need.",
    "Numbers: 12345 and 3.14159 and 2017",
    "Unseen words: zyxwvut qqq jjj",
    "Ünïcödé, 北京, 😀🚀 and ✓",
    "tabs\tand\nnew lines\n\n  indented",
    "I'm sure they'll say it's fine",
    "",
]

# Llama 3's split (tiktoken's cl100k pattern), as its tokenizer.json writes it.
LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# Qwen2's split: Llama 3's with digits one at a time.
QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

# -- chat templates, as the families' tokenizer_config.json files spell them ----------------------

SMOLLM2_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, "
    "trained by Hugging Face<|im_end|>\n' }}"
    "{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

LLAMA3_TEMPLATE = (
    "{% set loop_messages = messages %}{% for message in loop_messages %}"
    "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'"
    "+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}"
    "{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
)

MISTRAL_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token + ' ' }}"
    "{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}"
)

QWEN2_TEMPLATE = """{%- if tools %}
    {{- '<|im_start|>system\\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n\
You are provided with function signatures within <tools></tools> XML tags:\\n<tools>" }}
    {%- for tool in tools %}
        {{- "\\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments \
within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\": \
<args-json-object>}\\n</tool_call><|im_end|>\\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}
    {%- else %}
        {{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. \
You are a helpful assistant.<|im_end|>\\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) \
or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\\n<tool_call>\\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\\n<tool_response>\\n' }}
        {{- message.content }}
        {{- '\\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
{%- endif %}
"""

GEMMA_TEMPLATE = (
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}"
    "{{ raise_exception('System role not supported') }}{% endif %}"
    "{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if (message['role'] == 'assistant') %}{% set role = 'model' %}"
    "{% else %}{% set role = message['role'] %}{% endif %}"
    "{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}"
)

PHI3_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] == 'system' %}"
    "{{'<|system|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'user' %}"
    "{{'<|user|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'assistant' %}"
    "{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}"
)

TEMPLATES = {
    "smollm2": SMOLLM2_TEMPLATE,
    "llama3": LLAMA3_TEMPLATE,
    "mistral": MISTRAL_TEMPLATE,
    "qwen2": QWEN2_TEMPLATE,
    "gemma": GEMMA_TEMPLATE,
    "phi3": PHI3_TEMPLATE,
}


# -- tokenizers -----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Vocab:
    """How a recipe's tokenizer is made and named.

    ``kind``: "byte" (byte-level BPE), "spm" (SentencePiece-style BPE with byte fallback) or
    "wordpiece". ``split`` (byte-level): "gpt2", "smollm", "llama3", "qwen2" or "roberta".
    ``front``: special tokens with the first ids; ``back``: special tokens after the learned ones.
    ``bos``/``eos``/``unk``/``pad``: their spellings (``None``: none); ``add_bos``: BOS starts
    every encoding; ``prefix`` (spm): a "▁" is put before the text (Llama, Mistral, Phi-3; not Gemma).
    """

    kind: str
    size: int = 400
    split: str = "gpt2"
    front: tuple[str, ...] = ()
    back: tuple[str, ...] = ()
    bos: str | None = None
    eos: str | None = None
    unk: str | None = None
    pad: str | None = None
    add_bos: bool = False
    prefix: bool = True
    legacy: bool = False  # spm: the "▁" prefix from a normalizer (Llama 2's and Phi-3's tokenizer.json)
    gguf_pre: str | None = None  # tokenizer.ggml.pre, as convert_hf_to_gguf.py names the split


def _byte_level(vocab: Vocab):
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    byte = pre_tokenizers.ByteLevel
    pre = {
        "gpt2": byte(add_prefix_space=False, use_regex=True),
        "roberta": byte(add_prefix_space=False, use_regex=True),
        "smollm": pre_tokenizers.Sequence(
            [pre_tokenizers.Digits(individual_digits=True), byte(add_prefix_space=False, use_regex=True)]
        ),
        "llama3": pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(LLAMA3_SPLIT), behavior="isolated", invert=False),
                byte(add_prefix_space=False, trim_offsets=True, use_regex=False),
            ]
        ),
        "qwen2": pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False),
                byte(add_prefix_space=False, trim_offsets=False, use_regex=False),
            ]
        ),
    }[vocab.split]
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab.size,
        special_tokens=list(vocab.front),
        initial_alphabet=byte.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(CORPUS, trainer)
    if vocab.back:
        tokenizer.add_special_tokens(list(vocab.back))
    if vocab.split == "roberta":
        tokenizer.post_processor = processors.RobertaProcessing(
            (vocab.eos, tokenizer.token_to_id(vocab.eos)), (vocab.bos, tokenizer.token_to_id(vocab.bos))
        )
    elif vocab.add_bos:
        tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{vocab.bos}:0 $A:0",
            pair=f"{vocab.bos}:0 $A:0 {vocab.bos}:1 $B:1",
            special_tokens=[(vocab.bos, tokenizer.token_to_id(vocab.bos))],
        )
    else:
        tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    return tokenizer


def _sentencepiece(vocab: Vocab):
    """A BPE over "▁"-joined text with 256 ``<0xNN>`` byte pieces to fall back on, as Llama 2 has.

    It is trained on words (so no piece spans two), then rebuilt with the specials first, the
    byte pieces next and the learned pieces in their learned order, and run as SentencePiece
    runs: over the whole text, unknown characters as their UTF-8 bytes.
    """
    from tokenizers import (
        AddedToken,
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
        trainers,
    )

    scheme = "first" if vocab.prefix else "never"
    learner = Tokenizer(models.BPE())
    learner.normalizer = normalizers.Replace(" ", "▁")
    learner.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme=scheme, split=True)
    learner.train_from_iterator(
        CORPUS, trainers.BpeTrainer(vocab_size=vocab.size, show_progress=False, special_tokens=[])
    )
    learned = sorted(learner.get_vocab().items(), key=lambda kv: kv[1])
    names = list(vocab.front) + [f"<0x{b:02X}>" for b in range(256)]
    names += [name for name, _ in learned if name not in names]
    table = {name: index for index, name in enumerate(names)}
    merges = [tuple(m) for m in json.loads(learner.to_str())["model"]["merges"]]
    tokenizer = Tokenizer(
        models.BPE(vocab=table, merges=merges, unk_token=vocab.unk, fuse_unk=True, byte_fallback=True)
    )
    if vocab.legacy:
        tokenizer.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
        steps = [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
        steps.append(decoders.Strip(" ", 1, 0))
    elif vocab.prefix:
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(
            replacement="▁", prepend_scheme="first", split=False
        )
        steps = [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
        steps.append(decoders.Strip(" ", 1, 0))
    else:
        tokenizer.normalizer = normalizers.Replace(" ", "▁")
        steps = [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
    tokenizer.decoder = decoders.Sequence(steps)
    tokenizer.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in vocab.front])
    if vocab.back:
        tokenizer.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in vocab.back])
    if vocab.add_bos:
        tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{vocab.bos}:0 $A:0",
            pair=f"{vocab.bos}:0 $A:0 {vocab.bos}:1 $B:1",
            special_tokens=[(vocab.bos, table[vocab.bos])],
        )
    return tokenizer


# WordPiece pieces, written out: its trainer is not deterministic.
_WORDS = (
    "the a an and of to in is are was it its at on for with as by from that this one two "
    "attention query key value keys values token tokens model weight weights sum head heads "
    "hello world good morning night fox dog quick brown lazy jumps over run runs"
).split()


def _wordpiece(vocab: Vocab):
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    chars = list("abcdefghijklmnopqrstuvwxyz0123456789.,;:!?'\"-()@#$%&*/")
    names = specials + chars + ["##" + c for c in chars if c.isalnum()] + _WORDS
    names += ["##s", "##ing", "##ed", "##er", "##ly", "##tion"]
    table = {name: index for index, name in enumerate(dict.fromkeys(names))}
    tokenizer = Tokenizer(models.WordPiece(vocab=table, unk_token="[UNK]", max_input_chars_per_word=100))
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0",
        pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", table["[CLS]"]), ("[SEP]", table["[SEP]"])],
    )
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    tokenizer.add_special_tokens(specials)
    return tokenizer


def build_tokenizer(vocab: Vocab):
    """The ``tokenizers.Tokenizer`` a :class:`Vocab` describes."""
    return {"byte": _byte_level, "spm": _sentencepiece, "wordpiece": _wordpiece}[vocab.kind](vocab)


def tokenizer_config(vocab: Vocab, *, template: str | None, tokenizer_class: str) -> dict[str, Any]:
    """``tokenizer_config.json`` as the Hub's files of that family write it."""
    config: dict[str, Any] = {"tokenizer_class": tokenizer_class, "model_max_length": 128}
    for name in ("bos", "eos", "unk", "pad"):
        value = getattr(vocab, name)
        if value is not None:
            config[f"{name}_token"] = value
    if vocab.kind == "spm":
        config["add_bos_token"] = vocab.add_bos
        config["add_eos_token"] = False
    if vocab.kind == "wordpiece":
        config.update(do_lower_case=True, cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
    if template is not None:
        config["chat_template"] = template
    return config


# -- the recipes ----------------------------------------------------------------------------------

CHATML = ("<|im_start|>", "<|im_end|>")


@dataclass(frozen=True, kw_only=True)
class Recipe:
    """One tiny model: its transformers config (``config``), tokenizer and template, seed, GGUF kinds."""

    name: str
    model_type: str
    config: dict[str, Any]
    vocab: Vocab
    template: str | None = None
    tokenizer_class: str = "PreTrainedTokenizerFast"
    seed: int = 0
    causal: bool = True
    gguf_arch: str | None = None  # general.architecture of its GGUF files (None: no GGUF)
    notes: dict[str, Any] = field(default_factory=dict)


_COMMON = {"hidden_size": 64, "intermediate_size": 256, "max_position_embeddings": 128}

_SPM_LLAMA = Vocab(
    kind="spm", front=("<unk>", "<s>", "</s>"), bos="<s>", eos="</s>", unk="<unk>", add_bos=True
)
_SPM_GEMMA = Vocab(
    kind="spm",
    front=("<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "<start_of_turn>", "<end_of_turn>"),
    bos="<bos>",
    eos="<eos>",
    unk="<unk>",
    pad="<pad>",
    add_bos=True,
    prefix=False,
)
_QWEN = Vocab(
    kind="byte",
    split="qwen2",
    back=("<|endoftext|>", *CHATML),
    eos="<|im_end|>",
    pad="<|endoftext|>",
    gguf_pre="qwen2",
)

RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in [
        Recipe(
            name="smollm2",
            model_type="llama",
            seed=1,
            config=dict(
                _COMMON,
                num_hidden_layers=2,
                num_attention_heads=4,
                num_key_value_heads=2,
                tie_word_embeddings=True,
                rms_norm_eps=1e-5,
                rope_parameters={"rope_type": "default", "rope_theta": 100000.0},
            ),
            vocab=Vocab(
                kind="byte",
                split="smollm",
                front=("<|endoftext|>", *CHATML),
                bos="<|im_start|>",
                eos="<|im_end|>",
                unk="<|endoftext|>",
                pad="<|im_end|>",
                gguf_pre="smollm",
            ),
            template=SMOLLM2_TEMPLATE,
            # SmolLM2's own files say GPT2Tokenizer, which transformers 5 rebuilds with GPT-2's split,
            # dropping tokenizer.json's digit step; this name has it read tokenizer.json as written.
            tokenizer_class="PreTrainedTokenizerFast",
            gguf_arch="llama",
        ),
        Recipe(
            name="llama3",
            model_type="llama",
            seed=2,
            config=dict(
                _COMMON,
                num_hidden_layers=3,
                num_attention_heads=4,
                num_key_value_heads=1,
                tie_word_embeddings=False,
                rms_norm_eps=1e-5,
                rope_parameters={
                    "rope_type": "llama3",
                    "rope_theta": 500000.0,
                    "factor": 8.0,
                    "low_freq_factor": 1.0,
                    "high_freq_factor": 4.0,
                    "original_max_position_embeddings": 64,
                },
            ),
            vocab=Vocab(
                kind="byte",
                split="llama3",
                back=(
                    "<|begin_of_text|>",
                    "<|end_of_text|>",
                    "<|start_header_id|>",
                    "<|end_header_id|>",
                    "<|eot_id|>",
                ),
                bos="<|begin_of_text|>",
                eos="<|eot_id|>",
                add_bos=True,
                gguf_pre="llama-bpe",
            ),
            template=LLAMA3_TEMPLATE,
        ),
        Recipe(
            name="mistral",
            model_type="mistral",
            seed=3,
            config=dict(
                _COMMON,
                num_hidden_layers=2,
                num_attention_heads=4,
                num_key_value_heads=2,
                sliding_window=4,
                tie_word_embeddings=False,
            ),
            vocab=_SPM_LLAMA,
            template=MISTRAL_TEMPLATE,
            tokenizer_class="LlamaTokenizer",
            gguf_arch="llama",
        ),
        Recipe(
            name="qwen2",
            model_type="qwen2",
            seed=4,
            config=dict(
                _COMMON,
                num_hidden_layers=2,
                num_attention_heads=4,
                num_key_value_heads=2,
                tie_word_embeddings=True,
                rms_norm_eps=1e-6,
            ),
            vocab=_QWEN,
            template=QWEN2_TEMPLATE,
            tokenizer_class="Qwen2Tokenizer",
            gguf_arch="qwen2",
        ),
        Recipe(
            name="qwen3",
            model_type="qwen3",
            seed=5,
            config=dict(
                _COMMON,
                num_hidden_layers=2,
                num_attention_heads=4,
                num_key_value_heads=2,
                head_dim=32,
                tie_word_embeddings=False,
            ),
            vocab=_QWEN,
            template=QWEN2_TEMPLATE,
            tokenizer_class="Qwen2Tokenizer",
            gguf_arch="qwen3",
        ),
        Recipe(
            name="phi3",
            model_type="phi3",
            seed=6,
            config=dict(
                _COMMON,
                num_hidden_layers=2,
                num_attention_heads=4,
                num_key_value_heads=4,
                tie_word_embeddings=False,
                sliding_window=None,
                pad_token_id=None,
            ),
            vocab=Vocab(
                kind="spm",
                front=("<unk>", "<s>", "</s>"),
                back=("<|assistant|>", "<|end|>", "<|system|>", "<|user|>", "<|endoftext|>"),
                bos="<s>",
                eos="<|endoftext|>",
                unk="<unk>",
                add_bos=False,
                legacy=True,
            ),
            template=PHI3_TEMPLATE,
            tokenizer_class="LlamaTokenizer",
            gguf_arch="phi3",
        ),
        Recipe(
            name="gemma",
            model_type="gemma",
            seed=7,
            config=dict(
                _COMMON,
                num_hidden_layers=2,
                num_attention_heads=4,
                num_key_value_heads=1,
                head_dim=32,
                hidden_activation="gelu_pytorch_tanh",
                tie_word_embeddings=True,
            ),
            vocab=_SPM_GEMMA,
            template=GEMMA_TEMPLATE,
            tokenizer_class="GemmaTokenizer",
        ),
        Recipe(
            name="gemma2",
            model_type="gemma2",
            seed=8,
            config=dict(
                _COMMON,
                num_hidden_layers=3,
                num_attention_heads=4,
                num_key_value_heads=2,
                head_dim=256,
                query_pre_attn_scalar=256,
                sliding_window=4,
                layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                attn_logit_softcapping=50.0,
                final_logit_softcapping=30.0,
                tie_word_embeddings=True,
            ),
            vocab=_SPM_GEMMA,
            template=GEMMA_TEMPLATE,
            tokenizer_class="GemmaTokenizer",
            gguf_arch="gemma2",
        ),
        Recipe(
            name="gemma3",
            model_type="gemma3_text",
            seed=9,
            config=dict(
                _COMMON,
                num_hidden_layers=3,
                num_attention_heads=4,
                num_key_value_heads=2,
                head_dim=32,
                query_pre_attn_scalar=16,
                sliding_window=4,
                layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                rope_parameters={
                    "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                    "full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
                },
                tie_word_embeddings=True,
            ),
            vocab=_SPM_GEMMA,
            template=GEMMA_TEMPLATE,
            tokenizer_class="GemmaTokenizer",
        ),
        Recipe(
            name="gpt2",
            model_type="gpt2",
            seed=10,
            config=dict(
                n_embd=64, n_layer=2, n_head=4, n_inner=256, n_positions=1024, tie_word_embeddings=True
            ),
            vocab=Vocab(
                kind="byte",
                split="gpt2",
                back=("<|endoftext|>",),
                bos="<|endoftext|>",
                eos="<|endoftext|>",
                unk="<|endoftext|>",
                gguf_pre="gpt-2",
            ),
            tokenizer_class="GPT2Tokenizer",
            gguf_arch="gpt2",
        ),
        Recipe(
            name="bert",
            model_type="bert",
            seed=11,
            causal=False,
            config=dict(_COMMON, num_hidden_layers=2, num_attention_heads=4, type_vocab_size=2),
            vocab=Vocab(kind="wordpiece", unk="[UNK]", pad="[PAD]"),
            tokenizer_class="BertTokenizer",
        ),
        Recipe(
            name="roberta",
            model_type="roberta",
            seed=12,
            causal=False,
            config=dict(
                _COMMON,
                num_hidden_layers=2,
                num_attention_heads=4,
                max_position_embeddings=130,
                type_vocab_size=1,
                pad_token_id=1,
                bos_token_id=0,
                eos_token_id=2,
            ),
            vocab=Vocab(
                kind="byte",
                split="roberta",
                front=("<s>", "<pad>", "</s>", "<unk>"),
                back=("<mask>",),
                bos="<s>",
                eos="</s>",
                unk="<unk>",
                pad="<pad>",
            ),
            tokenizer_class="RobertaTokenizer",
        ),
        Recipe(
            name="distilbert",
            model_type="distilbert",
            seed=13,
            causal=False,
            config=dict(dim=64, hidden_dim=256, n_layers=2, n_heads=4, max_position_embeddings=128),
            vocab=Vocab(kind="wordpiece", unk="[UNK]", pad="[PAD]"),
            tokenizer_class="DistilBertTokenizer",
        ),
    ]
}

GGUF_FAMILIES = ("smollm2", "qwen2", "gemma2", "gpt2")
GGUF_KINDS = ("F32", "F16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "K")
# Every tokenizer a GGUF can hold, and an architecture transformers reads (RoBERTa has none).
TOKENIZER_GGUFS = tuple(n for n, r in RECIPES.items() if r.vocab.kind != "wordpiece" and n != "roberta")


# -- models ---------------------------------------------------------------------------------------


def _quiet():
    """transformers' own notices (logging and warnings) are not the tests' business."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    return warnings.catch_warnings()


def hf_config(recipe: Recipe, tokenizer):
    """The recipe's transformers config, its vocabulary size and special ids from ``tokenizer``."""
    from transformers import AutoConfig

    vocab = recipe.vocab
    ids = {
        f"{name}_token_id": tokenizer.token_to_id(getattr(vocab, name))
        for name in ("bos", "eos", "pad")
        if getattr(vocab, name) is not None and recipe.model_type not in ("bert", "distilbert")
    }
    settings = {**ids, **recipe.config, "vocab_size": tokenizer.get_vocab_size(with_added_tokens=True)}
    return AutoConfig.for_model(recipe.model_type, **settings)


def _randomize(model, seed: int) -> None:
    """Draw every parameter anew, in name order: 2-D ~ N(0, 1/inputs); 1-D: initial value + N(0, 0.01)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    conv1d = {n for n, m in model.named_modules() if type(m).__name__ == "Conv1D"}
    with torch.no_grad():
        for name, p in sorted(model.named_parameters(), key=lambda item: item[0]):
            noise = torch.randn(p.shape, generator=generator, dtype=torch.float32)
            if p.ndim >= 2:
                inputs = p.shape[0] if name.rsplit(".", 1)[0] in conv1d else p.shape[-1]
                p.copy_(noise / inputs**0.5)
            else:
                p.copy_(p.detach().float() + 0.1 * noise)


def build_model(recipe: Recipe, tokenizer):
    """The recipe's transformers model, float32, weights drawn from its seed, in eval mode."""
    import torch
    from transformers import AutoModel, AutoModelForCausalLM

    torch.manual_seed(recipe.seed)  # anything transformers draws itself (buffers, none today)
    config = hf_config(recipe, tokenizer)
    maker = AutoModelForCausalLM if recipe.causal else AutoModel
    model = maker.from_config(config, dtype=torch.float32, attn_implementation="eager")
    _randomize(model, recipe.seed)
    if getattr(config, "tie_word_embeddings", False) and recipe.causal:
        model.tie_weights()
    return model.eval()


def write_folder(recipe: Recipe, folder: Path, *, dtype: str = "float32") -> Path:
    """Save the recipe's model (``save_pretrained``, safetensors) and tokenizer files in ``folder``."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(recipe.vocab)
    with _quiet():
        warnings.simplefilter("ignore")
        model = build_model(recipe, tokenizer)
        if dtype != "float32":
            model = model.to(getattr(torch, dtype))
        model.save_pretrained(folder)
    tokenizer.save(str(folder / "tokenizer.json"))
    config = tokenizer_config(recipe.vocab, template=recipe.template, tokenizer_class=recipe.tokenizer_class)
    if recipe.name == "qwen3":  # newer transformers save the template beside the config, as a file
        (folder / "chat_template.jinja").write_text(config.pop("chat_template"), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    (folder / "generation_config.json").unlink(missing_ok=True)  # not a file attnlab reads
    return folder


# -- GGUF -----------------------------------------------------------------------------------------


def _token_types(recipe: Recipe, tokenizer) -> tuple[list[str], list[int], list[float] | None]:
    """Tokens, llama.cpp token types and (SentencePiece-style) scores, in id order."""
    from gguf import TokenType

    vocab = tokenizer.get_vocab(with_added_tokens=True)
    tokens = [name for name, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    assert [vocab[t] for t in tokens] == list(range(len(tokens))), "ids must run 0..n-1"
    added = tokenizer.get_added_tokens_decoder()
    specials = {t.content for t in added.values() if t.special}
    types, scores = [], []
    for index, token in enumerate(tokens):
        if token == recipe.vocab.unk and recipe.vocab.kind == "spm":
            kind = TokenType.UNKNOWN
        elif token in specials:
            kind = TokenType.CONTROL
        elif index in added:
            kind = TokenType.USER_DEFINED
        elif recipe.vocab.kind == "spm" and token.startswith("<0x") and len(token) == 6:
            kind = TokenType.BYTE
        else:
            kind = TokenType.NORMAL
        types.append(int(kind))
        scores.append(-float(index) if kind == TokenType.NORMAL else 0.0)
    return tokens, types, (scores if recipe.vocab.kind == "spm" else None)


def add_tokenizer(writer, recipe: Recipe, tokenizer) -> None:
    """The tokenizer as ``convert_hf_to_gguf.py`` writes it (``_set_vocab_gpt2``, ``_sentencepiece``)."""
    vocab = recipe.vocab
    tokens, types, scores = _token_types(recipe, tokenizer)
    if vocab.kind == "byte":
        writer.add_tokenizer_model("gpt2")
        writer.add_tokenizer_pre(vocab.gguf_pre or "default")
        writer.add_token_list(tokens)
        writer.add_token_types(types)
        merges = json.loads(tokenizer.to_str())["model"]["merges"]
        writer.add_token_merges([" ".join(m) if isinstance(m, list) else m for m in merges])
    elif vocab.kind == "spm":
        writer.add_tokenizer_model("llama")
        writer.add_tokenizer_pre("default")
        writer.add_token_list(tokens)
        writer.add_token_scores(scores)
        writer.add_token_types(types)
    else:
        raise ValueError(f"{recipe.name}: a {vocab.kind} tokenizer has no GGUF form here")
    for name in ("bos", "eos", "unk", "pad"):
        token = getattr(vocab, name)
        if token is not None:
            getattr(writer, f"add_{name}_token_id")(tokenizer.token_to_id(token))
    writer.add_add_bos_token(vocab.add_bos)
    if vocab.kind == "spm":
        writer.add_add_eos_token(False)
    if recipe.template is not None:
        writer.add_chat_template(recipe.template)


def _hparams(writer, recipe: Recipe, config) -> None:
    """The model's hyper-parameters under the architecture's keys (``set_gguf_parameters``)."""
    if recipe.model_type == "gpt2":
        writer.add_context_length(config.n_positions)
        writer.add_embedding_length(config.n_embd)
        writer.add_feed_forward_length(config.n_inner)
        writer.add_block_count(config.n_layer)
        writer.add_head_count(config.n_head)
        writer.add_layer_norm_eps(config.layer_norm_epsilon)
        return
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_block_count(config.num_hidden_layers)
    writer.add_head_count(config.num_attention_heads)
    writer.add_head_count_kv(config.num_key_value_heads)
    writer.add_rope_freq_base(config.rope_parameters["rope_theta"])
    writer.add_layer_norm_rms_eps(config.rms_norm_eps)
    if recipe.gguf_arch == "llama":
        writer.add_vocab_size(config.vocab_size)
        writer.add_rope_dimension_count(head_dim)
    if recipe.model_type == "gemma2":
        writer.add_key_length(head_dim)
        writer.add_value_length(head_dim)
        writer.add_attn_logit_softcapping(config.attn_logit_softcapping)
        writer.add_final_logit_softcapping(config.final_logit_softcapping)
        writer.add_sliding_window(config.sliding_window)


def _permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """``LlamaModel.permute``: a head's rows from rotate-half order to llama.cpp's interleaved pairs."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def gguf_tensors(recipe: Recipe, model) -> list[tuple[str, np.ndarray]]:
    """(GGUF name, float32 array in NumPy order) for every tensor ``convert_hf_to_gguf.py`` writes."""
    import gguf

    config = model.config
    arch = {"llama": gguf.MODEL_ARCH.LLAMA, "qwen2": gguf.MODEL_ARCH.QWEN2}.get(recipe.gguf_arch)
    arch = arch or {"gemma2": gguf.MODEL_ARCH.GEMMA2, "gpt2": gguf.MODEL_ARCH.GPT2}[recipe.gguf_arch]
    n_layers = config.n_layer if recipe.model_type == "gpt2" else config.num_hidden_layers
    names = gguf.get_tensor_name_map(arch, n_layers)
    tied = bool(getattr(config, "tie_word_embeddings", False))
    out = []
    for hf_name, tensor in model.state_dict().items():
        if hf_name == "lm_head.weight" and (tied or recipe.model_type == "gpt2"):
            continue
        name = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        assert name is not None, f"{recipe.name}: no GGUF name for {hf_name}"
        w = tensor.detach().float().numpy().copy()
        if recipe.gguf_arch == "llama" and name.endswith("attn_q.weight"):
            w = _permute(w, config.num_attention_heads)
        elif recipe.gguf_arch == "llama" and name.endswith("attn_k.weight"):
            w = _permute(w, config.num_key_value_heads)
        if recipe.model_type == "gemma2" and name.endswith("norm.weight"):
            w = w + 1  # stored as the multiplier itself
        if recipe.model_type == "gpt2" and w.ndim == 2 and name.startswith("blk."):
            w = w.T.copy()  # Conv1D keeps (inputs, outputs)
        out.append((name, w))
        if recipe.model_type == "gpt2" and name == "token_embd.weight":
            out.append(("output.weight", w))
    return out


_FILE_TYPES = {"F32": 0, "F16": 1, "Q4_0": 2, "Q4_1": 3, "Q8_0": 7, "Q5_0": 8, "K": 15}
_K_TYPES = ("Q4_K", "Q5_K", "Q6_K")


def random_blocks(qtype: str, rows: int, columns: int, rng: np.random.Generator) -> np.ndarray:
    """``rows`` rows of random valid ``qtype`` blocks: random bytes, every float16 scale finite and small."""
    import gguf

    kind = gguf.GGMLQuantizationType[qtype]
    per_block, block_bytes = gguf.GGML_QUANT_SIZES[kind]
    assert columns % per_block == 0
    blocks = rng.integers(0, 256, size=(rows * columns // per_block, block_bytes), dtype=np.uint8)
    size = 0.0002 if qtype == "Q6_K" else 0.001  # weights of about ±1 (Q6_K: d · int8 scale · 6-bit q)
    scales = (rng.standard_normal((blocks.shape[0], 2)) * size).astype(np.float16).view(np.uint8)
    if qtype in ("Q4_K", "Q5_K"):  # d and dmin lead the block
        blocks[:, :4] = scales
    else:  # Q6_K: d ends it
        blocks[:, -2:] = scales[:, :2]
    return blocks.reshape(rows, -1)


def write_gguf(recipe: Recipe, model, tokenizer, path: Path, kind: str, *, split: int = 0) -> Path:
    """Write the model as a GGUF of ``kind`` (see the module docstring) at ``path``.

    ``split``: at most that many tensors a file, as ``gguf-split`` cuts one (``name-00001-of-0000n.gguf``,
    the metadata in the first); the first part's path is returned.
    """
    import gguf
    from gguf.quants import quantize

    writer = gguf.GGUFWriter(str(path), recipe.gguf_arch, split_max_tensors=split)
    writer.add_type("model")
    writer.add_name(f"attnlab tiny {recipe.name}")
    writer.add_file_type(_FILE_TYPES[kind])
    writer.add_quantization_version(gguf.GGML_QUANT_VERSION)
    _hparams(writer, recipe, model.config)
    add_tokenizer(writer, recipe, tokenizer)
    rng = np.random.default_rng(recipe.seed)
    for name, w in gguf_tensors(recipe, model):
        if w.ndim < 2 or name.endswith("norm.weight") or name == "position_embd.weight" or kind == "F32":
            writer.add_tensor(name, w.astype(np.float32))
        elif kind == "K":
            layer = int(name.split(".")[1]) if name.startswith("blk.") else -1
            if name.endswith("ffn_down.weight"):
                qtype = _K_TYPES[layer % 3]
                blocks = random_blocks(qtype, w.shape[0], w.shape[1], rng)
                writer.add_tensor(name, blocks, raw_dtype=gguf.GGMLQuantizationType[qtype])
            else:
                writer.add_tensor(name, w.astype(np.float32))
        elif kind == "F16":
            writer.add_tensor(name, w.astype(np.float16))
        else:
            qtype = gguf.GGMLQuantizationType[kind]
            writer.add_tensor(name, quantize(w.astype(np.float32), qtype), raw_dtype=qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    if split:
        parts = sorted(path.parent.glob(f"{path.stem}-*-of-*.gguf"))
        assert len(parts) > 1, parts
        return parts[0]
    return path


_TOKENIZER_ARCH = {"gemma": "gemma2", "gemma3_text": "gemma3", "mistral": "llama"}


def write_tokenizer_gguf(recipe: Recipe, path: Path) -> Path:
    """A GGUF with the recipe's tokenizer and hyper-parameters and no tensors (a tokenizer's file)."""
    import gguf

    arch = recipe.gguf_arch or _TOKENIZER_ARCH.get(recipe.model_type, recipe.model_type)
    tokenizer = build_tokenizer(recipe.vocab)
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_type("model")
    writer.add_name(f"attnlab tiny {recipe.name}")
    writer.add_file_type(0)
    add_tokenizer(writer, recipe, tokenizer)
    n = tokenizer.get_vocab_size(with_added_tokens=True)
    writer.add_context_length(128)
    writer.add_embedding_length(64)
    writer.add_feed_forward_length(256)
    writer.add_block_count(1)
    writer.add_head_count(4)
    writer.add_head_count_kv(4)
    writer.add_layer_norm_rms_eps(1e-6)
    if arch == "llama":
        writer.add_vocab_size(n)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


# -- the session's shelf of models ----------------------------------------------------------------


class Families:
    """The tiny models of one test worker, built on first use under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._models: dict[str, Any] = {}

    def recipe(self, name: str) -> Recipe:
        return RECIPES[name]

    def folder(self, name: str, dtype: str = "float32") -> Path:
        """The Hugging Face folder of ``name`` (``dtype``: float32, or bfloat16/float16 for smollm2)."""
        folder = self.root / "folders" / (name if dtype == "float32" else f"{name}-{dtype}")
        if not (folder / "config.json").is_file():
            write_folder(RECIPES[name], folder, dtype=dtype)
        return folder

    def model(self, name: str):
        """(transformers model, tokenizers Tokenizer) of ``name``, float32, as built (not reloaded)."""
        if name not in self._models:
            recipe = RECIPES[name]
            tokenizer = build_tokenizer(recipe.vocab)
            with _quiet():
                warnings.simplefilter("ignore")
                self._models[name] = (build_model(recipe, tokenizer), tokenizer)
        return self._models[name]

    def gguf(self, name: str, kind: str = "F32") -> Path:
        """``name`` written as a GGUF of ``kind`` (F32, F16, Q8_0, Q4_0, Q4_1, Q5_0 or K)."""
        if name not in GGUF_FAMILIES or kind not in GGUF_KINDS:
            raise KeyError(f"no {kind} GGUF of {name}: {GGUF_FAMILIES} × {GGUF_KINDS}")
        path = self.root / "gguf" / f"{name}-{kind}.gguf"
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            model, tokenizer = self.model(name)
            write_gguf(RECIPES[name], model, tokenizer, path, kind)
        return path

    def sharded(self, name: str, max_shard_size: str = "200KB") -> Path:
        """``name``'s float32 folder with its weights in shards (``model-0000i-of-0000n.safetensors``
        and ``model.safetensors.index.json``), as ``save_pretrained(max_shard_size=...)`` cuts them."""
        folder = self.root / "sharded" / name
        if not (folder / "model.safetensors.index.json").is_file():
            shutil.copytree(self.folder(name), folder, dirs_exist_ok=True)
            (folder / "model.safetensors").unlink()
            model, _ = self.model(name)
            with _quiet():
                warnings.simplefilter("ignore")
                model.save_pretrained(folder, max_shard_size=max_shard_size)
            (folder / "generation_config.json").unlink(missing_ok=True)
        return folder

    def split_gguf(self, name: str, kind: str = "F32", tensors: int = 8) -> Path:
        """``name`` as a GGUF cut into parts of at most ``tensors`` tensors; the first part's path."""
        folder = self.root / "split" / f"{name}-{kind}"
        first = sorted(folder.glob("*-00001-of-*.gguf"))
        if not first:
            folder.mkdir(parents=True, exist_ok=True)
            model, tokenizer = self.model(name)
            return write_gguf(RECIPES[name], model, tokenizer, folder / f"{name}.gguf", kind, split=tensors)
        return first[0]

    def tokenizer_gguf(self, name: str) -> Path:
        """A GGUF holding ``name``'s tokenizer and no tensors (byte-level and SentencePiece-style ones)."""
        if name not in TOKENIZER_GGUFS:
            raise KeyError(f"no tokenizer GGUF of {name}: {TOKENIZER_GGUFS}")
        path = self.root / "tokenizers" / f"{name}.gguf"
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            write_tokenizer_gguf(RECIPES[name], path)
        return path


def digest(folder: Path) -> str:
    """sha256 over a folder's files (names and bytes), to show two builds are the same."""
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(path.relative_to(folder).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def hf_cache(root: Path, repos: dict[str, Path], *, revision: str = "0" * 40) -> Path:
    """A Hugging Face hub cache at ``root`` holding ``repos`` (``"org/name"`` -> a folder or a file).

    The real layout: ``models--org--name/blobs/<sha256>`` holds each file once,
    ``snapshots/<revision>/<file>`` is a relative symlink to its blob, ``refs/main`` names the revision.
    """
    for repo, source in repos.items():
        base = root / ("models--" + repo.replace("/", "--"))
        snapshot = base / "snapshots" / revision
        (base / "blobs").mkdir(parents=True, exist_ok=True)
        snapshot.mkdir(parents=True, exist_ok=True)
        (base / "refs").mkdir(exist_ok=True)
        (base / "refs" / "main").write_text(revision)
        files = [source] if source.is_file() else sorted(p for p in source.iterdir() if p.is_file())
        for path in files:
            data = path.read_bytes()
            blob = base / "blobs" / hashlib.sha256(data).hexdigest()
            if not blob.exists():
                shutil.copyfile(path, blob)
            link = snapshot / path.name
            link.unlink(missing_ok=True)
            os.symlink(os.path.relpath(blob, snapshot), link)
    return root


@pytest.fixture(scope="session")
def families(tmp_path_factory) -> Families:
    """This worker's tiny models (built on first use; needs torch and transformers, the oracles)."""
    for module in ("torch", "transformers"):
        pytest.importorskip(module, reason=f"the tiny models are built with {module} (see scripts/test.sh)")
    return Families(tmp_path_factory.mktemp("families"))
