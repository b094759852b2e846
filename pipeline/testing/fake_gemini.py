"""A fake Gemini REST server on 127.0.0.1 for end-to-end tests and benchmarks.

It speaks the paths the real google-genai SDK calls (point a client at it with
``HttpOptions(base_url=server.url)``): ``models/{m}:generateContent``, ``:countTokens``,
``:batchGenerateContent``, ``batches/{id}``, the resumable ``upload/.../files`` protocol and
``files/{id}:download``. Replies come from a queue, then from a callable, then from an automatic
responder that fills the request's JSON schema. Faults can be queued: 429 with RetryInfo,
5xx, slow replies (client timeouts), invalid JSON, empty candidates, MAX_TOKENS, blocked
prompts; ``latency_s`` adds a fixed delay to every model reply. Every request is recorded.

The pieces: the reply builders tests script with (``gemini_faults.py``), the JSON each reply
becomes and the automatic responder (``gemini_replies.py``), Batch Mode (``gemini_batch.py``);
this module is the HTTP server, and every name a test needs can be imported from it.

Example:
    with FakeGemini() as server:
        server.enqueue(rate_limited("1s"), '{"outcome": "failure"}')
        client = genai.Client(api_key="test", http_options=HttpOptions(base_url=server.url))
"""

from __future__ import annotations

import collections
import itertools
import json
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .gemini_batch import BatchJob, BatchJobs, PendingUpload
from .gemini_faults import (
    Fault,
    Item,
    Responder,
    blocked,
    empty_candidates,
    invalid_json,
    max_tokens,
    rate_limited,
    server_error,
    slow,
    text_reply,
)
from .gemini_replies import auto_reply, body_text, example_for_schema, response_json, token_count

__all__ = [
    "FakeGemini", "Fault", "Item", "RecordedRequest", "Responder", "auto_reply", "blocked",
    "empty_candidates", "example_for_schema", "invalid_json", "max_tokens", "rate_limited",
    "response_json", "server_error", "slow", "text_reply",
]


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


_MODEL_PATH = re.compile(
    r"^/(?:v1|v1beta|v1alpha)/models/([^/:]+):(generateContent|countTokens|batchGenerateContent)$"
)
_BATCH_PATH = re.compile(r"^/(?:v1|v1beta|v1alpha)/batches/([^/:?]+)$")
_FILE_PATH = re.compile(r"^/(?:v1|v1beta|v1alpha)/files/([^/:?]+)(:download)?$")
_UPLOAD_START = re.compile(r"^/upload/(?:v1|v1beta|v1alpha)/files$")
_UPLOAD_SESSION = re.compile(r"^/upload-session/([0-9]+)$")


class FakeGemini(BatchJobs):
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
        self.jobs: dict[str, BatchJob] = {}
        self._uploads: dict[str, PendingUpload] = {}
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
                fake._uploads[upload_id] = PendingUpload(meta=meta)
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
                self._send(200, {"totalTokens": token_count(body_text(body))})
                return
            item = fake.next_item(body)
            if isinstance(item, Fault) and item.kind == "slow":
                fake.wait(item.seconds)
                item = Fault("auto")
            status, payload = response_json(item, body)
            self._send(status, payload)

    return Handler
