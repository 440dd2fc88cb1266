"""Chat templates: the Jinja a model's files carry, rendered in Jinja2's sandbox as transformers renders it.

A model's template comes from ``tokenizer_config.json`` (or ``chat_template.jinja``) or a GGUF's
``tokenizer.chat_template`` (:class:`attnlab.models.tokens.ModelTokenizer` carries it), and
:func:`chat_of` makes it a :class:`ChatTemplate`, or a :class:`NoChat` when the files carry none
or one that does not compile: such a model continues text and has no chat choice.

Rendering is transformers' ``apply_chat_template(..., tokenize=False)``: an
``ImmutableSandboxedEnvironment`` with ``trim_blocks`` and ``lstrip_blocks``, the ``loopcontrols``
extension and a ``{% generation %}`` block, the globals ``raise_exception``, ``strftime_now``,
``dict`` and a ``namespace`` that refuses underscore names, ``tojson`` without HTML escaping,
and the variables ``messages``, ``tools``, ``documents``, ``add_generation_prompt`` and the
special tokens (``bos_token``, ``eos_token``, ``unk_token``, ``pad_token``) the model names.
The template is never evaluated outside the sandbox.

:func:`render` and :func:`user_turn` render the shipped SmolLM2's own template, read from its GGUF.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, Literal

import jinja2
import jinja2.ext
import jinja2.nodes
import jinja2.utils
from jinja2.sandbox import ImmutableSandboxedEnvironment

from attnlab.models.errors import Refusal

# SmolLM2's template opens a conversation that has no system turn with this one (a test reads it there).
DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
ROLES = ("system", "user", "assistant")


@dataclass(frozen=True, kw_only=True)
class NoChat:
    """A model without a chat form: ``reason`` "none" (no template in its files) or "unreadable"
    (the template does not compile: ``detail`` is Jinja's message, ``line`` its line)."""

    reason: Literal["none", "unreadable"]
    detail: str | None = None
    line: int | None = None


@dataclass(frozen=True, kw_only=True)
class ChatTemplate:
    """A model's chat template (``source``, Jinja) and the special tokens it may write."""

    source: str
    bos: str | None = None
    eos: str | None = None
    unk: str | None = None
    pad: str | None = None

    def render(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        add_generation_prompt: bool = True,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> str:
        """Render ``[{"role": ..., "content": ...}, ...]`` the way the model was tuned to read.

        A bad message is a ``FieldError`` at ``("messages", index, "role")`` (or ``"content"``);
        a conversation the template itself refuses (its ``raise_exception``, or an error while it
        runs) is a ``FieldError`` at ``("messages",)`` carrying the template's own message.
        """
        chat = _checked(messages)
        variables: dict[str, Any] = {
            f"{name}_token": token
            for name, token in (("bos", self.bos), ("eos", self.eos), ("unk", self.unk), ("pad", self.pad))
            if token is not None
        }
        try:
            return _compiled(self.source).render(
                messages=chat,
                tools=_plain(list(tools)) if tools is not None else None,
                documents=None,
                add_generation_prompt=add_generation_prompt,
                **variables,
            )
        except jinja2.TemplateError as error:
            raise Refusal(("messages",), "sources.template_refused", str(error.message or error)) from None
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as error:
            raise Refusal(("messages",), "sources.template_refused", str(error)) from None


def chat_of(tokenizer) -> ChatTemplate | NoChat:
    """The chat form of a :class:`~attnlab.models.tokens.ModelTokenizer`: its template, or why it has none."""
    source = tokenizer.chat_template
    if source is None:
        return NoChat(reason="none")
    try:
        _compiled(source)
    except jinja2.TemplateSyntaxError as error:
        return NoChat(reason="unreadable", detail=error.message, line=error.lineno)
    t = tokenizer
    return ChatTemplate(source=source, bos=t.bos, eos=t.eos, unk=t.unk, pad=t.pad)


def _checked(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The messages as plain dicts, each with a known role and text content."""
    if not messages:
        raise Refusal(("messages",), "no_messages")
    chat = []
    for index, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        if role not in ROLES:
            raise Refusal(("messages", index, "role"), "unknown_role", role, ROLES)
        if not isinstance(content, str):
            raise Refusal(("messages", index, "content"), "content_not_text")
        chat.append(_plain({k: v for k, v in message.items() if v is not None}))
    return chat


def _plain(value: Any) -> Any:
    """``value`` rebuilt from JSON's types (all a template may see); anything else as its type's name."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return f"<{type(value).__name__}>"


# -- the sandbox, as transformers builds it -----------------------------------------------------------


@lru_cache(maxsize=16)
def _compiled(source: str):
    """``source`` compiled in the sandbox (raises ``jinja2.TemplateSyntaxError``)."""
    return _environment().from_string(source)


@lru_cache(maxsize=1)
def _environment() -> ImmutableSandboxedEnvironment:
    class Generation(jinja2.ext.Extension):
        """``{% generation %}…{% endgeneration %}``: marks the assistant's part; renders its body as is."""

        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

        def _body(self, caller):
            return caller()

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        # Jinja's own tojson escapes HTML characters; templates expect plain JSON.
        return json.dumps(
            x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
        )

    def strftime_now(format):
        return datetime.now().strftime(format)

    class TemplateDict:
        """``dict(...)`` and ``dict.fromkeys(...)``, and no attribute of the real type."""

        def __call__(self, *args, **kwargs):
            return dict(*args, **kwargs)

        def fromkeys(self, *args, **kwargs):
            return dict.fromkeys(*args, **kwargs)

    class TemplateNamespace(jinja2.utils.Namespace):
        """A namespace that refuses underscore-prefixed names (no way to CPython's internals)."""

        def __init__(*args, **kwargs):
            self, args = args[0], args[1:]
            attrs = dict(*args, **kwargs)
            for name in attrs:
                TemplateNamespace._check(name)
            jinja2.utils.Namespace.__init__(self, attrs)

        def __setitem__(self, name, value):
            TemplateNamespace._check(name)
            jinja2.utils.Namespace.__setitem__(self, name, value)

        @staticmethod
        def _check(name):
            if isinstance(name, str) and name.startswith("_"):
                raise jinja2.exceptions.SecurityError(f"a namespace cannot hold {name!r}")

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[Generation, jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    env.globals["dict"] = TemplateDict()
    env.globals["namespace"] = TemplateNamespace
    return env


# -- the shipped SmolLM2 -------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def smollm2() -> ChatTemplate:
    """SmolLM2-135M-Instruct's template and special tokens, from its GGUF file's metadata."""
    from attnlab.models import files, tokens
    from attnlab.models.gguf_file import GGUFFile

    metadata = GGUFFile(files.smollm2_gguf()).metadata
    return ChatTemplate(source=metadata["tokenizer.chat_template"], **tokens.gguf_specials(metadata))


def render(messages: Sequence[dict[str, str]], *, add_generation_prompt: bool = True) -> str:
    """Render ``messages`` with SmolLM2's template (a conversation with no system turn gets its default)."""
    return smollm2().render(messages, add_generation_prompt=add_generation_prompt)


def user_turn(text: str) -> str:
    """The prompt for one user message, ready for the assistant's answer."""
    return render([{"role": "user", "content": text}])
