"""How the generated methods reach the server: one HTTP request per operation (standard library only)."""
from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any


class Unset:
    """The value of a keyword argument left out: it is not sent (None is sent as null)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET = Unset()


class NightjarError(Exception):
    """An error the server answered: the catalogue's code, the HTTP status and the message."""

    def __init__(self, status: int, code: str, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.reason = reason

    def __repr__(self) -> str:
        return f"NightjarError(status={self.status}, code={self.code!r}, message={self.message!r})"


def _query_value(value: Any) -> str:
    # as the TypeScript SDK writes them (String(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(_query_value(v) for v in value)
    return str(value)


@dataclass(frozen=True)
class VideoDownload:
    """A session's video, or the part of it a range asked for."""

    status: int
    """200 the whole file, 206 the range asked for"""
    content_type: str
    """video/webm or video/mp4"""
    data: bytes
    size: int
    """the whole file's size in bytes"""


class Transport:
    """Calls any operation by its name (the MCP tool name) with its input as a dict."""

    def __init__(self, base_url: str, token: str, routes: dict[str, tuple[str, str]], *, timeout: float = 60.0) -> None:
        self._base = base_url.rstrip("/")
        self._token = token
        self._routes = routes
        self._timeout = timeout

    def call(self, name: str, input: dict[str, Any] | None = None) -> Any:
        method, path = self._routes[name]
        rest = {k: v for k, v in (input or {}).items() if not isinstance(v, Unset)}

        def param(key: str) -> str:
            value = rest.pop(key, None)
            if not isinstance(value, str) or not value:
                raise TypeError(f"{name}: {key} is required")
            return urllib.parse.quote(value, safe="")

        url = self._base + "/".join(param(part[1:]) if part.startswith(":") else part for part in path.split("/"))
        has_body = method not in ("GET", "DELETE")
        headers = {"authorization": f"Bearer {self._token}", "accept": "application/json"}
        data = None
        if has_body:
            headers["content-type"] = "application/json"
            data = json.dumps(rest).encode("utf-8")
        elif rest:
            url += "?" + urllib.parse.urlencode({k: _query_value(v) for k, v in rest.items() if v is not None})
        # a script drives the session it opened next: a start waits for it to go live, as the MCP tool does
        if name == "session_start" and "waitSeconds" not in rest:
            headers["prefer"] = "wait=30"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                text = response.read().decode("utf-8")
        except urllib.error.HTTPError as e:
            raise _error(e) from None
        return json.loads(text) if text else None

    def session_video(self, session_id: str, *, start: int | None = None, end: int | None = None, suffix: int | None = None) -> VideoDownload:
        """A session's video once it ended: the whole file, or the bytes start..end (inclusive; end left out:
        to the end) or the last `suffix` bytes, as a player seeks. Raises NightjarError: 404 for an unknown
        session, another org's or one without a stored video; 416 range_not_satisfiable past the end."""
        if not isinstance(session_id, str) or not session_id:
            raise TypeError("session_video: session_id is required")
        headers = {"authorization": f"Bearer {self._token}"}
        if suffix is not None:
            headers["range"] = f"bytes=-{suffix}"
        elif start is not None:
            headers["range"] = f"bytes={start}-{'' if end is None else end}"
        url = f"{self._base}/v1/sessions/{urllib.parse.quote(session_id, safe='')}/video"
        request = urllib.request.Request(url, method="GET", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                data = response.read()
                whole = (response.headers.get("content-range") or "").rpartition("/")[2]
                return VideoDownload(response.status, response.headers.get("content-type", ""), data, int(whole) if whole.isdigit() else len(data))
        except urllib.error.HTTPError as e:
            raise _error(e) from None


def _error(e: urllib.error.HTTPError) -> NightjarError:
    try:
        body = json.loads(e.read().decode("utf-8") or "{}")
    except ValueError:
        body = {}
    err = body.get("error", {}) if isinstance(body, dict) else {}
    return NightjarError(e.code, err.get("code", "error"), err.get("message", e.reason), err.get("reason"))
