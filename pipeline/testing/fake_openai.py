"""A fake OpenAI-compatible chat-completions server on 127.0.0.1 for tests and benchmarks.

It speaks what the official ``openai`` SDK calls when pointed at a self-hosted server
(``OpenAI(base_url=server.url)``): ``POST /v1/chat/completions`` and ``GET /v1/models``.
Replies come from a queue, then from a callable, then from an automatic responder that fills
the request's JSON schema (the one of ``fake_gemini``, fed the same text). Faults can be
queued: any HTTP status (429 with a ``Retry-After`` header), slow replies (client timeouts),
invalid JSON, no choices, ``finish_reason`` ``length`` or ``content_filter``. A server made
with ``json_schema=False`` answers ``response_format`` ``json_schema`` with a 400 (or
``reject_status``: 422 as FastAPI servers do), as servers with JSON mode only do. Every
request is recorded.

Example:
    with FakeOpenAI() as server:
        server.enqueue(rate_limited(1), '{"outcome": "failure"}')
        client = openai.OpenAI(base_url=server.url, api_key="none", max_retries=0)
"""

from __future__ import annotations

import collections
import itertools
import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .fake_gemini import RecordedRequest, auto_reply

SCHEMA_MARKER = "JSON schema:"
"""In JSON mode the schema travels in the system message after this marker; the automatic
responder reads it there, as a model would."""

REJECTED_FORMAT = ("response_format.type 'json_schema' is not supported; "
                   "use 'json_object' or 'text'")
"""The 400 message of a server without structured outputs."""


@dataclass(frozen=True)
class Fault:
    """A scripted reply: an HTTP error, a slow reply, or an odd model answer."""

    kind: str
    """``http``, ``slow``, ``text``, ``empty``, ``length``, ``filtered`` (``auto``: normal)."""
    status: int = 200
    """HTTP status for ``http`` faults."""
    retry_after: str | None = None
    """``Retry-After`` header value sent with an ``http`` fault."""
    seconds: float = 0.0
    """Delay of a ``slow`` reply."""
    text: str = ""
    """Reply text for ``text`` and ``length``."""


def rate_limited(retry_after: float | None = 2) -> Fault:
    """429, with a ``Retry-After`` of that many seconds when given."""
    header = None if retry_after is None else f"{retry_after:g}"
    return Fault("http", status=429, retry_after=header)


def server_error(status: int = 500) -> Fault:
    """A 5xx (or any other status) error reply."""
    return Fault("http", status=status)


def slow(seconds: float) -> Fault:
    """Wait ``seconds`` before answering normally (longer than the client timeout = timeout)."""
    return Fault("slow", seconds=seconds)


def text_reply(text: str) -> Fault:
    """A normal reply with exactly ``text``."""
    return Fault("text", text=text)


def invalid_json() -> Fault:
    """A reply whose text is not JSON."""
    return Fault("text", text="Sure! Here is the answer: {outcome: success")


def no_choices() -> Fault:
    """A 200 reply with an empty ``choices`` list."""
    return Fault("empty")


def truncated(text: str = '{"drafts": [{"title": "Trunc') -> Fault:
    """A reply cut off by ``max_tokens`` (``finish_reason`` ``length``)."""
    return Fault("length", text=text)


def filtered() -> Fault:
    """A reply withheld by the server's filter (``finish_reason`` ``content_filter``)."""
    return Fault("filtered")


Item = Fault | str | dict[str, Any]
"""A queued reply: a fault, the text of a normal reply, or a whole response JSON object."""

Responder = Callable[[dict[str, Any]], Item | None]
"""Called with the request JSON; returns a reply item, or None for the automatic one."""


# ---- the automatic responder ----


def _messages(body: dict[str, Any], role: str) -> str:
    return "\n".join(str(m.get("content", "")) for m in body.get("messages", []) or []
                     if isinstance(m, dict) and m.get("role") == role)


def request_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request asks for: ``response_format``, else the system message's."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema")
        return schema if isinstance(schema, dict) else None
    system = _messages(body, "system")
    at = system.rfind(SCHEMA_MARKER)
    if fmt.get("type") != "json_object" or at < 0:
        return None
    try:
        found, _ = json.JSONDecoder().raw_decode(system[at + len(SCHEMA_MARKER):].lstrip())
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def auto_text(body: dict[str, Any]) -> str:
    """Reply text for ``body``: JSON filling its schema, or a short text."""
    schema = request_schema(body)
    # The Gemini fake's responder, fed the same text and schema in its request shape.
    gemini_body: dict[str, Any] = {
        "contents": [{"parts": [{"text": _messages(body, "user")}]}],
        "systemInstruction": {"parts": [{"text": _messages(body, "system")}]},
        "generationConfig": {"responseJsonSchema": schema} if schema else {},
    }
    return auto_reply(gemini_body)


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _error(status: int, message: str, *, param: str | None = None,
           code: str | None = None) -> dict[str, Any]:
    kind = {429: "rate_limit_exceeded", 401: "authentication_error"}.get(
        status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


REASONING_REJECTIONS: tuple[tuple[str, str, str], ...] = (
    ("max_tokens", "unsupported_parameter",
     "Unsupported parameter: 'max_tokens' is not supported with this model. "
     "Use 'max_completion_tokens' instead."),
    ("temperature", "unsupported_value",
     "Unsupported value: 'temperature' does not support 0.0 with this model. "
     "Only the default (1) value is supported."),
)
"""How OpenAI's API answers its reasoning models (o-series, gpt-5) given a parameter they do
not take: HTTP 400, the parameter named in ``param``; ``response_format`` is not named."""


_FINISH = {"length": "length", "filtered": "content_filter"}
"""``finish_reason`` of the faults that have one other than ``stop``."""


def response_json(item: Item, body: dict[str, Any], created: int,
                  ) -> tuple[int, dict[str, Any], dict[str, str]]:
    """HTTP status, JSON and extra headers of the reply ``item`` gives to ``body``."""
    if isinstance(item, dict):
        return 200, item, {}
    if isinstance(item, str):
        item = Fault("text", text=item)
    if item.kind == "http":
        headers = {"Retry-After": item.retry_after} if item.retry_after else {}
        return item.status, _error(item.status, f"fake error {item.status}"), headers
    prompt = _tokens(_messages(body, "system") + _messages(body, "user"))
    choices: list[dict[str, Any]] = []
    text = ""
    if item.kind != "empty":
        text = auto_text(body) if item.kind == "auto" else item.text
        finish = _FINISH.get(item.kind, "stop")
        choices.append({"index": 0, "finish_reason": finish, "logprobs": None,
                        "message": {"role": "assistant", "content": text or None}})
    usage = {"prompt_tokens": prompt, "completion_tokens": _tokens(text) if text else 0}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return 200, {"id": f"chatcmpl-fake-{created}", "object": "chat.completion",
                 "created": created, "model": str(body.get("model", "fake")),
                 "choices": choices, "usage": usage}, {}


# ---- the server ----


class FakeOpenAI:
    """The fake server; use as a context manager or call ``start``/``stop``."""

    def __init__(
        self,
        responses: Iterable[Item] = (),
        *,
        responder: Responder | None = None,
        json_schema: bool = True,
        reject_status: int = 400,
        latency_s: float = 0.0,
        model: str = "fake-model",
        reasoning: bool = False,
    ) -> None:
        self.queue: collections.deque[Item] = collections.deque(responses)
        self.responder = responder
        self.json_schema = json_schema
        self.reject_status = reject_status
        self.latency_s = latency_s
        self.model = model
        self.reasoning = reasoning
        """Answer as OpenAI's reasoning models do: ``REASONING_REJECTIONS``."""
        self.requests: list[RecordedRequest] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    # ---- lifecycle ----

    def start(self) -> FakeOpenAI:
        """Listen on an ephemeral port of 127.0.0.1 in a daemon thread."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop listening and wake any slow reply."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """Base URL for ``OpenAI(base_url=...)`` (it ends in ``/v1``, as Ollama's does)."""
        if self._server is None:
            raise RuntimeError("FakeOpenAI is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    # ---- scripting and inspection ----

    def enqueue(self, *items: Item) -> None:
        """Queue replies for the next chat-completion requests, in order."""
        with self._lock:
            self.queue.extend(items)

    @property
    def completions(self) -> list[RecordedRequest]:
        """The chat-completion requests received, in order."""
        with self._lock:
            return [r for r in self.requests if r.path.split("?")[0].endswith("/completions")]

    def next_item(self, body: dict[str, Any]) -> Item:
        """The reply for one request: queue, then responder, then automatic."""
        with self._lock:
            if self.queue:
                return self.queue.popleft()
        if self.responder is not None:
            item = self.responder(body)
            if item is not None:
                return item
        return Fault("auto")

    def wait(self, seconds: float) -> None:
        """Sleep that ends early when the server stops."""
        if seconds > 0:
            self._stopping.wait(seconds)

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        """Status, JSON and headers for one chat-completion request body."""
        fmt = body.get("response_format") or {}
        for param, code, message in REASONING_REJECTIONS if self.reasoning else ():
            if param in body and (param != "temperature" or body[param] != 1):
                return 400, _error(400, message, param=param, code=code), {}
        if not self.json_schema and fmt.get("type") == "json_schema":
            status = self.reject_status
            return status, _error(status, REJECTED_FORMAT, param="response_format"), {}
        self.wait(self.latency_s)
        item = self.next_item(body)
        if isinstance(item, Fault) and item.kind == "slow":
            self.wait(item.seconds)
            item = Fault("auto")
        return response_json(item, body, next(self._ids))


def _make_handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Keep test output quiet."""

        def _send(self, status: int, payload: Any, headers: dict[str, str]) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test); nothing to tell it

        def _record(self, body: bytes) -> None:
            with fake._lock:
                fake.requests.append(
                    RecordedRequest(self.command, self.path, dict(self.headers.items()), body))

        def do_GET(self) -> None:  # noqa: N802 - http.server naming
            """The model list (what ``orf`` or a user may probe first)."""
            self._record(b"")
            if self.path.split("?")[0] == "/v1/models":
                self._send(200, {"object": "list", "data": [
                    {"id": fake.model, "object": "model", "created": 0, "owned_by": "fake"}]}, {})
                return
            self._send(404, _error(404, f"unknown path {self.path}"), {})

        def do_POST(self) -> None:  # noqa: N802 - http.server naming
            """Chat completions."""
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            self._record(raw)
            if self.path.split("?")[0] != "/v1/chat/completions":
                self._send(404, _error(404, f"unknown path {self.path}"), {})
                return
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                self._send(400, _error(400, "body is not JSON"), {})
                return
            self._send(*fake.answer(body))

    return Handler
