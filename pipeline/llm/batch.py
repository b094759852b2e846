"""Gemini Batch Mode: all requests of a run as one job, at half the online price.

Requests already answered in the ledger are not sent. The rest go into one job: inline when
the payload is under ``INLINE_LIMIT_BYTES``, else as an uploaded JSONL file. The job name is
stored in the ledger before polling starts, so a run interrupted while waiting (Ctrl-C, kill)
picks the same job up next time instead of submitting (and paying for) it again. Results are
mapped back to requests by their cache key and recorded like online calls.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from typing import Any, Protocol

from google.genai import types
from tenacity import Retrying

from ..ledger import Ledger
from ..run_events import BATCH_ENDED_STATES, BatchPolled
from . import retry
from .backend import LLMReply, LLMRequest, Progress
from .gemini_wire import envelope_from_dict, envelope_from_response, model_retry_config
from .provider import Envelope
from .service import refusal


class BatchHost(Protocol):
    """What Batch Mode needs of the gemini backend (``pipeline.llm.gemini.GeminiBackend``)."""

    model: str | None
    ledger: Ledger | None

    @property
    def client(self) -> Any:
        """The google-genai client."""

    def lookup(self, request: LLMRequest) -> LLMReply | None:
        """The cached reply, if any (recorded as ``cached``)."""

    def store(self, request: LLMRequest, envelope: Envelope, *, latency_ms: int = 0,
              batch: bool = False) -> LLMReply:
        """Record a fresh answer."""

    def record_failure(self, request: LLMRequest, error: str, *, latency_ms: int = 0,
                       batch: bool = False) -> LLMReply:
        """Record a call without answer."""


INLINE_LIMIT_BYTES = 20 * 1024 * 1024
"""Inline batch requests must stay under 20 MB; larger runs upload a JSONL file."""

DONE_STATES = {f"JOB_STATE_{state.upper()}" for state in BATCH_ENDED_STATES}


class BatchJobFailed(Exception):
    """The batch job ended without results."""


def rest_request(request: LLMRequest) -> dict[str, Any]:
    """The REST body of one request, as a batch JSONL line carries it."""
    return {
        "contents": [{"role": "user", "parts": [{"text": request.prompt}]}],
        "systemInstruction": {"parts": [{"text": request.system}]},
        "generationConfig": {
            "temperature": 0.0,
            "maxOutputTokens": request.max_output_tokens,
            "responseMimeType": "application/json",
            "responseJsonSchema": request.schema,
        },
    }


def _inline(request: LLMRequest) -> types.InlinedRequest:
    return types.InlinedRequest(
        contents=request.prompt,
        config=types.GenerateContentConfig(
            system_instruction=request.system, temperature=0.0,
            max_output_tokens=request.max_output_tokens,
            response_mime_type="application/json", response_json_schema=request.schema,
        ),
        metadata={"key": request.key},
    )


def _with_retries(max_attempts: int, fn: Any, **kwargs: Any) -> Any:
    for attempt in Retrying(**model_retry_config(max_attempts)):
        with attempt:
            return fn(**kwargs)
    raise AssertionError("unreachable")  # pragma: no cover - Retrying re-raises


def submit(backend: BatchHost, requests: list[LLMRequest], max_attempts: int,
           inline_limit_bytes: int | None = None) -> str:
    """Create the batch job for ``requests``; return its name (``max_attempts`` per call)."""
    limit = INLINE_LIMIT_BYTES if inline_limit_bytes is None else inline_limit_bytes
    client = backend.client
    lines = [json.dumps({"key": r.key, "request": rest_request(r)}) for r in requests]
    size = sum(len(line) + 1 for line in lines)
    config = types.CreateBatchJobConfig(display_name=f"orf-{int(time.time())}")
    if size < limit:
        job = _with_retries(max_attempts, client.batches.create, model=backend.model,
                            src=[_inline(r) for r in requests], config=config)
        return str(job.name)
    fd, path = tempfile.mkstemp(prefix="orf-batch-", suffix=".jsonl")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
        uploaded = _with_retries(
            max_attempts, client.files.upload, file=path,
            config=types.UploadFileConfig(mime_type="jsonl", display_name="orf-batch"),
        )
    finally:
        os.unlink(path)
    job = _with_retries(max_attempts, client.batches.create, model=backend.model,
                        src=str(uploaded.name), config=config)
    return str(job.name)


def _results(backend: BatchHost, job: Any, keys: list[str],
             max_attempts: int) -> dict[str, dict[str, Any]]:
    """``key -> {"envelope": ...}`` or ``key -> {"error": ...}`` from a finished job."""
    out: dict[str, dict[str, Any]] = {}
    dest = job.dest
    if dest is not None and dest.inlined_responses:
        for index, item in enumerate(dest.inlined_responses):
            # ``metadata`` carries the request's key (google-genai >= 1.45); results come
            # back in request order, so the index is the fallback.
            meta = getattr(item, "metadata", None) or {}
            key = str(meta.get("key") or (keys[index] if index < len(keys) else index))
            if item.error is not None:
                out[key] = {"error": f"batch item error: {item.error}"}
            elif item.response is not None:
                out[key] = {"envelope": envelope_from_response(item.response)}
        return out
    if dest is not None and dest.file_name:
        data = _with_retries(max_attempts, backend.client.files.download, file=dest.file_name)
        for index, line in enumerate(bytes(data).decode("utf-8").splitlines()):
            if not line.strip():
                continue
            record = json.loads(line)
            key = str(record.get("key") or (keys[index] if index < len(keys) else index))
            if record.get("error") is not None:
                out[key] = {"error": f"batch item error: {record['error']}"}
            else:
                out[key] = {"envelope": envelope_from_dict(record.get("response") or {})}
    return out


def _answered(job: Any) -> int | None:
    """Requests answered so far, or None when the API does not say.

    The SDK fills ``completion_stats`` for Vertex AI only (and older SDKs lack the field): on
    the Gemini API the count is unknown until the job ends, which is not the same as 0.
    """
    stats = getattr(job, "completion_stats", None)
    count = getattr(stats, "successful_count", None) if stats is not None else None
    return int(count) if count is not None else None


def collect(
    backend: BatchHost,
    name: str,
    keys: list[str],
    *,
    max_attempts: int,
    progress: Progress | None = None,
    poll_initial_s: float = 5.0,
    poll_max_s: float = 60.0,
    timeout_s: float = 48 * 3600.0,
) -> dict[str, dict[str, Any]]:
    """Poll job ``name`` with backoff until it ends; return its results by key.

    ``max_attempts`` bounds the tries of each API call (get, download).

    Raises:
        BatchJobFailed: the job failed, was cancelled or expired, or polling timed out.
    """
    ledger = backend.ledger
    delay = poll_initial_s
    started = time.monotonic()
    deadline = started + timeout_s
    while True:
        job = _with_retries(max_attempts, backend.client.batches.get, name=name)
        state = str(getattr(job.state, "name", job.state))
        if progress is not None:
            progress(BatchPolled(name, state.removeprefix("JOB_STATE_").lower(),
                                 _answered(job), len(keys), time.monotonic() - started))
        if state in DONE_STATES:
            break
        if ledger is not None:
            ledger.record_batch_job(name, str(backend.model), "running", keys)
        if time.monotonic() > deadline:
            raise BatchJobFailed(f"batch job {name} still {state} after {timeout_s:.0f}s")
        retry.sleep(delay)
        delay = min(delay * 1.5, poll_max_s)
    if state not in ("JOB_STATE_SUCCEEDED", "JOB_STATE_PARTIALLY_SUCCEEDED"):
        if ledger is not None:
            ledger.record_batch_job(name, str(backend.model), "failed", keys)
        raise BatchJobFailed(f"batch job {name} ended {state}: {job.error}")
    return _results(backend, job, keys, max_attempts)


def run_batch(
    backend: BatchHost,
    requests: list[LLMRequest],
    *,
    max_attempts: int,
    progress: Progress | None = None,
    inline_limit_bytes: int | None = None,
    poll_initial_s: float = 5.0,
) -> list[LLMReply]:
    """Answer ``requests`` through the ledger and at most one new batch job.

    A job left open by an interrupted run for the same model is collected first; whatever is
    still unanswered after that is submitted as one new job. ``max_attempts`` bounds the
    tries of each API call (submit, poll, download), as ``Settings.max_attempts`` does online.
    """
    replies: dict[int, LLMReply] = {}
    for index, request in enumerate(requests):
        cached = backend.lookup(request)
        if cached is not None:
            replies[index] = cached
    by_key: dict[str, LLMRequest] = {}
    for index, request in enumerate(requests):
        if index not in replies:
            by_key.setdefault(request.key, request)
    fresh: dict[str, LLMReply] = {}
    ledger = backend.ledger
    model = str(backend.model)

    def absorb(name: str, keys: list[str]) -> None:
        try:
            results = collect(backend, name, keys, max_attempts=max_attempts,
                              progress=progress, poll_initial_s=poll_initial_s)
        except BatchJobFailed as exc:
            for key in keys:
                if key in by_key and key not in fresh:
                    fresh[key] = backend.record_failure(by_key[key], str(exc), batch=True)
            return
        for key, result in results.items():
            request = by_key.get(key)
            if request is None:
                continue  # a request of the interrupted run that this run no longer needs
            if "envelope" in result:
                fresh[key] = backend.store(request, result["envelope"], batch=True)
            else:
                fresh[key] = backend.record_failure(request, result["error"], batch=True)
        if ledger is not None:
            ledger.record_batch_job(name, model, "collected", keys)

    if by_key and ledger is not None:
        row = ledger.open_batch_job(model)
        if row is not None:
            absorb(str(row["name"]), list(json.loads(row["request_keys"])))
    todo = [r for k, r in by_key.items() if k not in fresh]
    for request in todo:  # the final scan of service.refusal: nothing credential-shaped is sent
        reason = refusal(request)
        if reason is not None:
            fresh[request.key] = backend.record_failure(request, reason, batch=True)
    todo = [r for r in todo if r.key not in fresh]
    if todo:
        keys = [r.key for r in todo]
        try:
            name = submit(backend, todo, max_attempts, inline_limit_bytes)
        except Exception as exc:  # noqa: BLE001 - the run goes on with reasons recorded
            for request in todo:
                fresh[request.key] = backend.record_failure(
                    request, f"batch submit failed: {exc}", batch=True)
        else:
            if ledger is not None:
                ledger.record_batch_job(name, model, "submitted", keys)
            absorb(name, keys)
    out: list[LLMReply] = []
    for index, request in enumerate(requests):
        reply = replies.get(index) or fresh.get(request.key)
        out.append(reply or LLMReply(text=None, error="batch returned no result"))
    return out
