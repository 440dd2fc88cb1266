"""Chat templates (models/chat.py) rendered in Jinja2's sandbox, against transformers' apply_chat_template.

The templates are the families' own (SmolLM2, Llama 3, Mistral, Qwen2.5, Gemma, Phi-3), written
into the tiny models' files by tests/familykit.py; transformers renders the same files.
"""

from __future__ import annotations

import warnings
from datetime import datetime

import pytest

from attnlab.engine.errors import FieldError
from attnlab.models import chat, tokens
from attnlab.models.gguf_file import GGUFFile
from familykit import GGUF_FAMILIES, RECIPES

CHAT_FAMILIES = [name for name, recipe in RECIPES.items() if recipe.template is not None]

CONVERSATIONS = {
    "one user turn": [{"role": "user", "content": "Hi there"}],
    "a system turn": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
    "three turns": [
        {"role": "user", "content": "  What is attention?  "},
        {"role": "assistant", "content": "A weighted average.\n"},
        {"role": "user", "content": "Of what?"},
    ],
    "any text": [{"role": "user", "content": 'Ünïcödé <b>&amp;</b> "quotes" {{ not code }} 北京 😀\n\ttab'}],
}

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "attend",
            "description": "Share <attention> among keys: «é» & more",
            "parameters": {"type": "object", "properties": {"keys": {"type": "array"}}, "required": ["keys"]},
        },
    }
]


def _hf(path, **kwargs):
    pytest.importorskip("transformers", reason="the oracle needs transformers (see scripts/test.sh)")
    from transformers import AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return AutoTokenizer.from_pretrained(str(path), **kwargs)


def _theirs(tokenizer, messages, **kwargs) -> str | Exception:
    """transformers' rendering, or the exception its template raised."""
    import jinja2

    try:
        return tokenizer.apply_chat_template(messages, tokenize=False, **kwargs)
    except jinja2.TemplateError as error:
        return error


def _ours(template: chat.ChatTemplate, messages, **kwargs) -> str | FieldError:
    try:
        return template.render(messages, **kwargs)
    except FieldError as error:
        return error


def _agree(ours, theirs) -> None:
    if isinstance(theirs, Exception):  # the template refused: so do we, with its words
        assert isinstance(ours, FieldError), ours
        assert ours.loc == ("messages",)
        assert str(ours) == f"messages is refused by the model's chat template: {theirs.message}"
    else:
        assert ours == theirs


@pytest.mark.oracle
@pytest.mark.parametrize("name", CHAT_FAMILIES)
def test_each_familys_template_renders_as_transformers_renders_it(families, name):
    folder = families.folder(name)
    template = chat.chat_of(tokens.from_folder(folder))
    assert isinstance(template, chat.ChatTemplate)
    theirs = _hf(folder)
    for messages in CONVERSATIONS.values():
        for prompt in (True, False):
            rendered = _ours(template, messages, add_generation_prompt=prompt)
            _agree(rendered, _theirs(theirs, messages, add_generation_prompt=prompt))
            assert isinstance(rendered, FieldError) or messages[-1]["content"].strip() in rendered


@pytest.mark.oracle
@pytest.mark.parametrize("name", GGUF_FAMILIES)
def test_a_ggufs_template_renders_as_transformers_renders_it(families, name):
    path = families.gguf(name, "F32")
    carried = chat.chat_of(tokens.from_gguf(GGUFFile(path).metadata))
    if RECIPES[name].template is None:
        assert carried == chat.NoChat(reason="none")
        return
    theirs = _hf(path.parent, gguf_file=path.name)
    for messages in CONVERSATIONS.values():
        _agree(_ours(carried, messages), _theirs(theirs, messages, add_generation_prompt=True))


@pytest.mark.oracle
def test_tools_go_through_tojson_unescaped(families):
    folder = families.folder("qwen2")
    template = chat.chat_of(tokens.from_folder(folder))
    messages = CONVERSATIONS["a system turn"]
    ours = template.render(messages, tools=TOOLS)
    hf = _hf(folder)
    theirs = hf.apply_chat_template(messages, tools=TOOLS, tokenize=False, add_generation_prompt=True)
    assert ours == theirs
    assert '"description": "Share <attention> among keys: «é» & more"' in ours  # no \\u00e9, no &lt;


@pytest.mark.oracle
def test_gemma_refuses_a_system_turn_with_its_own_words(families):
    template = chat.chat_of(tokens.from_folder(families.folder("gemma")))
    with pytest.raises(FieldError) as caught:
        template.render(CONVERSATIONS["a system turn"])
    assert str(caught.value) == "messages is refused by the model's chat template: System role not supported"
    with pytest.raises(FieldError, match="roles must alternate"):
        template.render([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])


@pytest.mark.oracle
def test_the_environments_extras_match_transformers(families):
    theirs = _hf(families.folder("gpt2"))  # a tokenizer without a template: we pass one
    sources = [
        # {% generation %} marks the assistant's part and renders it as is
        "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}[{{ m.content }}]"
        "{% endgeneration %}{% else %}{{ m.content }}{% endif %}{% endfor %}",
        # loop controls
        "{% for m in messages %}{% if loop.index > 2 %}{% break %}{% endif %}{{ m.role }};{% endfor %}",
        # dict() and namespace()
        "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}"
        "{{ ns.n }} {{ dict(a=1) | tojson }} {{ dict.fromkeys(['x'], 2) | tojson(indent=2) }}",
        # trim_blocks and lstrip_blocks
        "  {% for m in messages %}\n    {{ m.content }}\n  {% endfor %}\n",
    ]
    messages = CONVERSATIONS["three turns"]
    for source in sources:
        template = chat.ChatTemplate(source=source, eos=theirs.eos_token)
        ours = template.render(messages, add_generation_prompt=False)
        assert ours == theirs.apply_chat_template(messages, chat_template=source, tokenize=False), source


def test_strftime_now_is_todays_date():
    template = chat.ChatTemplate(source="{{ strftime_now('%d %b %Y') }}")
    before = datetime.now().strftime("%d %b %Y")
    rendered = template.render([{"role": "user", "content": "x"}])
    assert rendered in {before, datetime.now().strftime("%d %b %Y")}


@pytest.mark.parametrize(
    "source",
    [
        "{{ ''.__class__.__mro__ }}",  # a way out of the sandbox
        "{{ messages.append({'role': 'user'}) }}",  # the immutable sandbox: no changing the messages
        "{% set ns = namespace(_x=1) %}{{ ns._x }}",  # a namespace holds no underscore names
        "{{ raise_exception('no way') }}",
        "{{ messages[0].content + 1 }}",  # an error while it runs
    ],
)
def test_a_template_that_breaks_out_or_fails_is_a_field_error_never_a_crash(source):
    template = chat.ChatTemplate(source=source)
    with pytest.raises(FieldError) as caught:
        template.render([{"role": "user", "content": "x"}])
    assert caught.value.loc == ("messages",)
    assert str(caught.value).startswith("messages is refused by the model's chat template: ")


def test_bad_messages_are_field_errors_at_the_message():
    template = chat.ChatTemplate(source="{{ messages | length }}")
    assert template.render([{"role": "user", "content": "x"}]) == "1"
    with pytest.raises(FieldError) as caught:
        template.render([{"role": "user", "content": "x"}, {"role": "robot", "content": "y"}])
    assert caught.value.loc == ("messages", 1, "role")
    with pytest.raises(FieldError) as caught:
        template.render([{"role": "user", "content": None}])
    assert caught.value.loc == ("messages", 0, "content")
    with pytest.raises(FieldError, match="messages is empty"):
        template.render([])


def test_a_model_without_a_template_has_no_chat_and_a_broken_one_says_where(families):
    assert chat.chat_of(tokens.from_folder(families.folder("bert"))) == chat.NoChat(reason="none")
    broken = tokens.ModelTokenizer(tokenizer=None, chat_template="{% for m in messages %}\n{{ m.content }")
    no = chat.chat_of(broken)
    assert isinstance(no, chat.NoChat) and no.reason == "unreadable" and no.line == 2
    assert no.detail and "unexpected" in no.detail


def test_the_special_tokens_are_the_templates_variables(families):
    template = chat.chat_of(tokens.from_folder(families.folder("llama3")))
    assert (template.bos, template.eos) == ("<|begin_of_text|>", "<|eot_id|>")
    rendered = template.render(CONVERSATIONS["one user turn"])
    assert rendered.startswith("<|begin_of_text|><|start_header_id|>user")


@pytest.mark.models
def test_smollm2s_template_is_read_from_its_gguf_with_its_default_system_turn():
    from attnlab.models import files

    try:
        metadata = GGUFFile(files.smollm2_gguf()).metadata
    except files.ModelNotInstalled as error:
        pytest.skip(str(error))
    assert chat.smollm2().source == metadata["tokenizer.chat_template"]
    assert chat.DEFAULT_SYSTEM in metadata["tokenizer.chat_template"]
    assert chat.user_turn("Hi") == chat.smollm2().render([{"role": "user", "content": "Hi"}])
