"""Which Host and Origin headers the lab answers: ``HostRules``.

The lab is a local server with no login, like Jupyter, so the threat is DNS
rebinding: a page on evil.example whose name is re-pointed at 127.0.0.1 could
otherwise call the lab with the learner's browser. Its requests still say
``Host: evil.example``, so only these names are answered: the loopback names
(``localhost``, ``*.localhost``, ``127.0.0.1``, ``::1``), the address the
server is bound to, and each ``--allow-host`` name. Names are compared without
case, a trailing dot or the port (rebinding changes the name, not the port).

An Origin is ours when it is ``http://`` or ``https://``, its host is one of
the allowed names, and its scheme and port are the request's own: the scheme it
came by and the port its Host header names (the scheme's default when it names
none). So a page of another server on this machine (``https://127.0.0.1:9999``)
cannot start model jobs on the lab at ``http://127.0.0.1:8000``. Starlette's in-process TestClient (client
``"testclient"``, which no socket can claim: uvicorn fills in the peer's
address) talks to ``testserver``, which is allowed for it alone.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["LOOPBACK_HOSTS", "HostRules", "host_name", "host_port", "in_process", "normalize_name"]

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
TEST_CLIENT = "testclient"  # Starlette's TestClient: scope["client"][0]
TEST_HOST = "testserver"
_LABEL = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$")
_PORT = re.compile(r"^[0-9]{1,5}$")
DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize_name(name: str) -> str:
    """Return ``name`` as compared: lower case, no trailing dot, IPv6 without brackets.

    Raise ValueError when it is neither a DNS name nor an IP address.
    """
    text = name.strip().lower()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    try:
        return ipaddress.ip_address(text).compressed
    except ValueError:
        pass
    text = text.removesuffix(".")
    if not text or len(text) > 253 or not all(_LABEL.match(label) for label in text.split(".")):
        raise ValueError(f"{name!r} is not a host name or an IP address")
    return text


def host_name(header: str) -> str | None:
    """Return the name in a Host header (``name``, ``name:port``, ``[::1]:port``), or None if malformed."""
    text = header.strip()
    if text.startswith("["):
        end = text.find("]")
        name, rest = text[: end + 1], text[end + 1 :]
        if end < 0 or (rest and not (rest.startswith(":") and _PORT.match(rest[1:]))):
            return None
    else:
        name, colon, port = text.partition(":")
        if colon and not _PORT.match(port):
            return None
    try:
        return normalize_name(name)
    except ValueError:
        return None


def host_port(header: str | None, scheme: str) -> int | None:
    """The port a Host header names (``name:8000``), else ``scheme``'s default; ``None`` if malformed."""
    text = (header or "").strip()
    rest = text[text.find("]") + 1 :] if text.startswith("[") else text
    _, colon, port = rest.partition(":")
    if not colon:
        return DEFAULT_PORTS.get(scheme)
    return int(port) if _PORT.match(port) else None


@dataclass(frozen=True)
class HostRules:
    """The names the lab answers to: loopback, plus ``extra`` (the bound address, ``--allow-host``)."""

    names: frozenset[str]

    @classmethod
    def of(cls, extra: Iterable[str] = ()) -> HostRules:
        """Build the rules for the loopback names plus ``extra`` (each checked by ``normalize_name``)."""
        return cls(frozenset(normalize_name(n) for n in (*LOOPBACK_HOSTS, *extra)))

    def allows_name(self, name: str | None, *, in_process: bool = False) -> bool:
        if name is None:
            return False
        if name in self.names or name.endswith(".localhost"):
            return True
        return in_process and name == TEST_HOST

    def allows_host(self, header: str | None, *, in_process: bool = False) -> bool:
        """Return True when a Host header names this lab (a missing header does not)."""
        return header is not None and self.allows_name(host_name(header), in_process=in_process)

    def allows_origin(
        self, origin: str, *, scheme: str | None = None, port: int | None = None, in_process: bool = False
    ) -> bool:
        """Return True when an Origin header is one of the lab's own pages (``null`` is not).

        With ``scheme`` and ``port`` (the request's own), the Origin must have both as well.
        """
        try:
            parts = urlsplit(origin.strip())
            origin_port = parts.port or DEFAULT_PORTS.get(parts.scheme)
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or parts.path or parts.query or parts.username:
            return False
        if scheme is not None and parts.scheme != scheme:
            return False
        if port is not None and origin_port != port:
            return False
        return self.allows_host(parts.netloc, in_process=in_process)


def in_process(scope: dict) -> bool:
    """Return True for Starlette's in-process TestClient (never a request from a socket)."""
    client = scope.get("client")
    return bool(client) and client[0] == TEST_CLIENT
