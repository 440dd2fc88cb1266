"""SmolLM2's chat template, written out in Python.

The GGUF carries it as Jinja (``tokenizer.chat_template``); it is short, so we
spell it here rather than add a template engine, and a test checks the two
agree through Hugging Face's ``apply_chat_template``.
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.engine.errors import FieldError
from attnlab.lab.realmodel import problems

DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
END_OF_TURN = "<|im_end|>"
ROLES = ("system", "user", "assistant")


def render(messages: Sequence[dict[str, str]], *, add_generation_prompt: bool = True) -> str:
    """Render ``[{"role": ..., "content": ...}, ...]`` the way the model was tuned to read.

    A conversation that does not open with a system message gets the default one. A bad
    message is a ``FieldError`` at ``("messages", index, "role")`` (or ``"content"``).
    """
    if not messages:
        raise FieldError(("messages",), problems.no_messages())
    parts: list[str] = []
    for index, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        if role not in ROLES:
            raise FieldError(("messages", index, "role"), problems.unknown_role(role, ROLES))
        if not isinstance(content, str):
            raise FieldError(("messages", index, "content"), problems.content_not_text())
        if index == 0 and role != "system":
            parts.append(f"<|im_start|>system\n{DEFAULT_SYSTEM}{END_OF_TURN}\n")
        parts.append(f"<|im_start|>{role}\n{content}{END_OF_TURN}\n")
    if add_generation_prompt:
        parts.append("<|im_start|>assistant\n")
    return "".join(parts)


def user_turn(text: str) -> str:
    """The prompt for one user message, ready for the assistant's answer."""
    return render([{"role": "user", "content": text}])
