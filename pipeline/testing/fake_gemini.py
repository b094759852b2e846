"""A fake Gemini REST server on 127.0.0.1 for end-to-end tests and benchmarks.

It speaks the paths the real google-genai SDK calls (point a client at it with
``HttpOptions(base_url=server.url)``): ``models/{m}:generateContent``, ``:countTokens``,
``:batchGenerateContent``, ``batches/{id}``, the resumable ``upload/.../files`` protocol and
``files/{id}:download``. Replies come from a queue, then from a callable, then from an automatic
responder that fills the request's JSON schema. Faults can be queued: 429 with RetryInfo,
5xx, slow replies (client timeouts), invalid JSON, empty candidates, MAX_TOKENS, blocked
prompts; ``latency_s`` adds a fixed delay to every model reply. Every request is recorded.

Example:
    with FakeGemini() as server:
        server.enqueue(rate_limited("1s"), '{"outcome": "failure"}')
        client = genai.Client(api_key="test", http_options=HttpOptions(base_url=server.url))
"""

from __future__ import annotations

import collections
import hashlib
import itertools
import json
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# ---- canned replies and faults ----


@dataclass(frozen=True)
class Fault:
    """A scripted reply: an HTTP error, a slow reply, or an odd model answer."""

    kind: str
    """``http``, ``slow``, ``text``, ``empty``, ``max_tokens``, ``blocked``."""
    status: int = 200
    """HTTP status for ``http`` faults."""
    retry_delay: str | None = None
    """``RetryInfo.retryDelay`` (e.g. ``"2s"``) sent with a 429."""
    seconds: float = 0.0
    """Delay of a ``slow`` reply."""
    text: str = ""
    """Reply text for ``text``/``max_tokens``; block reason for ``blocked``."""


def rate_limited(retry_delay: str | None = "2s") -> Fault:
    """429 RESOURCE_EXHAUSTED, with a RetryInfo delay when given."""
    return Fault("http", status=429, retry_delay=retry_delay)


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


def empty_candidates() -> Fault:
    """A 200 reply with no candidates at all."""
    return Fault("empty")


def max_tokens(text: str = '{"drafts": [{"title": "Trunc') -> Fault:
    """A reply cut off by the output limit (finishReason MAX_TOKENS)."""
    return Fault("max_tokens", text=text)


def blocked(reason: str = "SAFETY") -> Fault:
    """A prompt blocked by safety filters (promptFeedback.blockReason)."""
    return Fault("blocked", text=reason)


Item = Fault | str | dict[str, Any]
"""A queued reply: a fault, the text of a normal reply, or a whole response JSON object."""

Responder = Callable[[dict[str, Any]], Item | None]
"""Called with the request JSON; returns a reply item, or None for the automatic one."""


@dataclass
class RecordedRequest:
    """One HTTP request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        """The body parsed as JSON (None when it is not JSON)."""
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return None

    @property
    def text(self) -> str:
        """The body as text (for grepping)."""
        return self.body.decode("utf-8", "replace")


# ---- the automatic responder ----


def _seed(body: dict[str, Any]) -> str:
    return hashlib.blake2b(json.dumps(body, sort_keys=True).encode(), digest_size=4).hexdigest()


def example_for_schema(schema: dict[str, Any], seed: str, name: str = "value") -> Any:
    """A value that satisfies ``schema`` (the subset the pipeline uses), varied by ``seed``."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object":
        props: dict[str, Any] = schema.get("properties", {})
        required = schema.get("required", list(props))
        return {k: example_for_schema(v, seed, k) for k, v in props.items() if k in required}
    if kind == "array":
        count = max(1, int(schema.get("minItems", 1)))
        return [example_for_schema(schema.get("items", {}), f"{seed}{i}", name)
                for i in range(count)]
    if kind == "integer":
        return int(schema.get("minimum", 0))
    if kind == "number":
        return float(schema.get("maximum", 1.0))
    if kind == "boolean":
        return False
    if name in ("domain",):
        return "general"
    return f"{name} {seed}"


_LESSON_CLASS = re.compile(r"^Error class: (\w+)", re.MULTILINE)
_WORKED = re.compile(r"The attempt that worked \(same target\):\n<<<LOG\n(.*)\n")


def _lesson_fields(body: dict[str, Any], reply: Any) -> Any:
    """Fill a draft's insight and path the way a model reading the lesson would.

    It names the error class and quotes the attempt that worked, so the auto reply passes
    the draft validation.
    """
    text = _body_text(body)
    drafts = reply.get("drafts") if isinstance(reply, dict) else None
    found = _LESSON_CLASS.search(text)
    if not drafts or found is None:
        return reply
    worked = _WORKED.search(text)
    cls = found.group(1).replace("_", " ")
    for item in drafts:
        # The seeded text stays in front, so two sessions' drafts differ as before.
        item["insight"] = (f"{item.get('insight', '')}: the {cls} error names its cause; "
                           "change what it names before the next attempt.")
        item["validated_path"] = f"1. `{worked.group(1) if worked else 'the fix'}`"
    return reply


def auto_reply(body: dict[str, Any]) -> str:
    """Reply text for ``body``: JSON filling its response schema, or a short text."""
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    if isinstance(schema, dict):
        return json.dumps(_lesson_fields(body, example_for_schema(schema, _seed(body))))
    return "ok"


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _body_text(body: dict[str, Any]) -> str:
    chunks: list[str] = []
    for content in body.get("contents", []) or []:
        for part in content.get("parts", []) or []:
            chunks.append(str(part.get("text", "")))
    system = body.get("systemInstruction") or {}
    for part in system.get("parts", []) or []:
        chunks.append(str(part.get("text", "")))
    return "".join(chunks)


def response_json(item: Item, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """HTTP status and JSON of the reply ``item`` gives to ``body``."""
    if isinstance(item, dict):
        return 200, item
    usage = {"promptTokenCount": _tokens(_body_text(body))}
    if isinstance(item, str):
        item = Fault("text", text=item)
    if item.kind == "http":
        error: dict[str, Any] = {
            "code": item.status,
            "message": f"fake error {item.status}",
            "status": {429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE",
                       400: "INVALID_ARGUMENT", 404: "NOT_FOUND"}.get(item.status, "UNKNOWN"),
        }
        if item.retry_delay:
            error["details"] = [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                 "retryDelay": item.retry_delay}]
        return item.status, {"error": error}
    if item.kind == "empty":
        return 200, {"candidates": [], "usageMetadata": usage}
    if item.kind == "blocked":
        return 200, {"promptFeedback": {"blockReason": item.text}, "usageMetadata": usage}
    text = item.text if item.kind in ("text", "max_tokens") else auto_reply(body)
    finish = "MAX_TOKENS" if item.kind == "max_tokens" else "STOP"
    usage["candidatesTokenCount"] = _tokens(text)
    usage["totalTokenCount"] = usage["promptTokenCount"] + usage["candidatesTokenCount"]
    return 200, {
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                        "finishReason": finish, "index": 0}],
        "usageMetadata": usage,
        "modelVersion": "fake",
    }


# ---- the server ----

_MODEL_PATH = re.compile(
    r"^/(?:v1|v1beta|v1alpha)/models/([^/:]+):(generateContent|countTokens|batchGenerateContent)$"
)
_BATCH_PATH = re.compile(r"^/(?:v1|v1beta|v1alpha)/batches/([^/:?]+)$")
_FILE_PATH = re.compile(r"^/(?:v1|v1beta|v1alpha)/files/([^/:?]+)(:download)?$")
_UPLOAD_START = re.compile(r"^/upload/(?:v1|v1beta|v1alpha)/files$")
_UPLOAD_SESSION = re.compile(r"^/upload-session/([0-9]+)$")


@dataclass
class _Job:
    name: str
    model: str
    bodies: list[dict[str, Any]]
    keys: list[str]
    file_input: bool
    polls: int = 0
    output: dict[str, Any] | None = None


@dataclass
class _Upload:
    meta: dict[str, Any] = field(default_factory=dict)


class FakeGemini:
    """The fake server; use as a context manager or call ``start``/``stop``."""

    def __init__(
        self,
        responses: Iterable[Item] = (),
        *,
        responder: Responder | None = None,
        latency_s: float = 0.0,
        batch_polls_until_done: int = 1,
    ) -> None:
        self.queue: collections.deque[Item] = collections.deque(responses)
        self.responder = responder
        self.latency_s = latency_s
        self.batch_polls_until_done = batch_polls_until_done
        self.requests: list[RecordedRequest] = []
        self.files: dict[str, bytes] = {}
        self.jobs: dict[str, _Job] = {}
        self._uploads: dict[str, _Upload] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle ----

    def start(self) -> FakeGemini:
        """Listen on an ephemeral port of 127.0.0.1 in a daemon thread."""
        handler = _make_handler(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and wake any slow reply."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeGemini:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """Base URL for ``HttpOptions(base_url=...)``."""
        if self._server is None:
            raise RuntimeError("FakeGemini is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # ---- scripting and inspection ----

    def enqueue(self, *items: Item) -> None:
        """Queue replies for the next model requests, in order."""
        with self._lock:
            self.queue.extend(items)

    def count(self, suffix: str) -> int:
        """Recorded requests whose path ends in ``suffix`` (e.g. ``:generateContent``)."""
        with self._lock:
            return sum(1 for r in self.requests if r.path.split("?")[0].endswith(suffix))

    @property
    def model_calls(self) -> int:
        """Model requests received (online and batch creations)."""
        return self.count(":generateContent") + self.count(":batchGenerateContent")

    def next_item(self, body: dict[str, Any]) -> Item:
        """The reply for one model request: queue, then responder, then automatic."""
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

    # ---- batch helpers (called by the handler) ----

    def create_job(self, model: str, payload: dict[str, Any]) -> _Job:
        """Register a batch job from a ``batchGenerateContent`` body."""
        config = (payload.get("batch") or {}).get("inputConfig") or {}
        bodies: list[dict[str, Any]] = []
        keys: list[str] = []
        file_input = "fileName" in config
        if file_input:
            raw = self.files.get(str(config["fileName"]), b"")
            for line in raw.decode("utf-8").splitlines():
                if line.strip():
                    record = json.loads(line)
                    keys.append(str(record.get("key", len(keys))))
                    bodies.append(record.get("request") or {})
        else:
            for entry in (config.get("requests") or {}).get("requests", []):
                keys.append(str((entry.get("metadata") or {}).get("key", len(keys))))
                bodies.append(entry.get("request") or {})
        job = _Job(f"batches/fake-{next(self._ids)}", model, bodies, keys, file_input)
        with self._lock:
            self.jobs[job.name] = job
        return job

    def poll_job(self, job: _Job) -> dict[str, Any]:
        """The job resource; it succeeds after ``batch_polls_until_done`` polls."""
        job.polls += 1
        metadata: dict[str, Any] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
            "name": job.name, "model": f"models/{job.model}", "state": "BATCH_STATE_RUNNING",
            "batchStats": {"requestCount": str(len(job.bodies))},
        }
        if job.polls < self.batch_polls_until_done:
            return {"name": job.name, "metadata": metadata, "done": False}
        if job.output is None:
            job.output = self._run_job(job)
        metadata["state"] = "BATCH_STATE_SUCCEEDED"
        metadata["output"] = job.output
        return {"name": job.name, "metadata": metadata, "done": True}

    def _run_job(self, job: _Job) -> dict[str, Any]:
        results: list[dict[str, Any]] = []
        for key, body in zip(job.keys, job.bodies, strict=True):
            item = self.next_item(body)
            if isinstance(item, Fault) and item.kind == "slow":
                item = Fault("auto")
            status, reply = response_json(item, body)
            entry: dict[str, Any] = {"metadata": {"key": key}}
            if status == 200:
                entry["response"] = reply
            else:
                entry["error"] = reply["error"]
            results.append(entry)
        if not job.file_input:
            return {"inlinedResponses": {"inlinedResponses": results}}
        lines = []
        for entry in results:
            record = {"key": entry["metadata"]["key"]}
            record.update({k: v for k, v in entry.items() if k != "metadata"})
            lines.append(json.dumps(record))
        name = f"files/out-{next(self._ids)}"
        with self._lock:
            self.files[name] = ("\n".join(lines) + "\n").encode()
        return {"responsesFile": name}


def _make_handler(fake: FakeGemini) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Keep test output quiet."""

        def _body(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None,
                  raw: bytes | None = None) -> None:
            data = raw if raw is not None else json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test); nothing to tell it

        def _record(self, body: bytes) -> None:
            with fake._lock:
                fake.requests.append(
                    RecordedRequest(self.command, self.path, dict(self.headers.items()), body)
                )

        def do_GET(self) -> None:  # noqa: N802 - http.server naming
            """Batch polls, file metadata and downloads."""
            self._record(b"")
            path = self.path.split("?")[0]
            if match := _BATCH_PATH.match(path):
                job = fake.jobs.get(f"batches/{match.group(1)}")
                if job is None:
                    self._send(404, {"error": {"code": 404, "message": "no such batch",
                                               "status": "NOT_FOUND"}})
                    return
                self._send(200, fake.poll_job(job))
                return
            if match := _FILE_PATH.match(path):
                name = f"files/{match.group(1)}"
                data = fake.files.get(name)
                if data is None:
                    self._send(404, {"error": {"code": 404, "message": "no such file",
                                               "status": "NOT_FOUND"}})
                elif match.group(2):
                    self._send(200, None, raw=data)
                else:
                    self._send(200, {"name": name, "sizeBytes": str(len(data)),
                                     "state": "ACTIVE", "mimeType": "application/jsonl"})
                return
            self._send(404, {"error": {"code": 404, "message": f"unknown path {path}",
                                       "status": "NOT_FOUND"}})

        def do_POST(self) -> None:  # noqa: N802 - http.server naming
            """Model calls, batch creation and the resumable upload protocol."""
            raw = self._body()
            self._record(raw)
            path = self.path.split("?")[0]
            if _UPLOAD_START.match(path):
                upload_id = str(next(fake._ids))
                meta = json.loads(raw or b"{}").get("file", {}) if raw else {}
                fake._uploads[upload_id] = _Upload(meta=meta)
                url = f"{fake.url}/upload-session/{upload_id}"
                self._send(200, {}, headers={"X-Goog-Upload-URL": url,
                                             "X-Goog-Upload-Status": "active"})
                return
            if match := _UPLOAD_SESSION.match(path):
                name = f"files/up-{match.group(1)}"
                with fake._lock:
                    fake.files[name] = raw
                self._send(200, {"file": {"name": name, "sizeBytes": str(len(raw)),
                                          "state": "ACTIVE", "mimeType": "application/jsonl"}},
                           headers={"X-Goog-Upload-Status": "final"})
                return
            match = _MODEL_PATH.match(path)
            if match is None:
                self._send(404, {"error": {"code": 404, "message": f"unknown path {path}",
                                           "status": "NOT_FOUND"}})
                return
            model, method = match.groups()
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                self._send(400, {"error": {"code": 400, "message": "body is not JSON",
                                           "status": "INVALID_ARGUMENT"}})
                return
            if method == "batchGenerateContent":
                job = fake.create_job(model, body)
                self._send(200, {"name": job.name, "metadata": {
                    "@type": "type.googleapis.com/google.ai.generativelanguage.v1main."
                             "GenerateContentBatch",
                    "name": job.name, "model": f"models/{model}",
                    "state": "BATCH_STATE_PENDING"}})
                return
            fake.wait(fake.latency_s)
            if method == "countTokens":
                self._send(200, {"totalTokens": _tokens(_body_text(body))})
                return
            item = fake.next_item(body)
            if isinstance(item, Fault) and item.kind == "slow":
                fake.wait(item.seconds)
                item = Fault("auto")
            status, payload = response_json(item, body)
            self._send(status, payload)

    return Handler
