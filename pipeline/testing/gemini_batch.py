"""Batch Mode of the fake Gemini server: jobs from ``batchGenerateContent``, polls, output."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .gemini_faults import Fault, Item
from .gemini_replies import response_json


@dataclass
class BatchJob:
    """One batch job: its requests, and its output once a poll has run it."""

    name: str
    model: str
    bodies: list[dict[str, Any]]
    keys: list[str]
    file_input: bool
    polls: int = 0
    output: dict[str, Any] | None = None


@dataclass
class PendingUpload:
    """A resumable upload the client has started but not yet sent."""

    meta: dict[str, Any] = field(default_factory=dict)


class BatchJobs:
    """The batch side of ``FakeGemini``, which sets these attributes and answers ``next_item``."""

    files: dict[str, bytes]
    """Uploaded inputs and job outputs, by name (``files/...``)."""
    jobs: dict[str, BatchJob]
    """Jobs by name (``batches/...``)."""
    batch_polls_until_done: int
    """A job succeeds on this poll."""
    _ids: Iterator[int]
    _lock: threading.Lock

    def next_item(self, body: dict[str, Any]) -> Item:
        """The reply for one model request."""
        raise NotImplementedError

    def create_job(self, model: str, payload: dict[str, Any]) -> BatchJob:
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
        job = BatchJob(f"batches/fake-{next(self._ids)}", model, bodies, keys, file_input)
        with self._lock:
            self.jobs[job.name] = job
        return job

    def poll_job(self, job: BatchJob) -> dict[str, Any]:
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

    def _run_job(self, job: BatchJob) -> dict[str, Any]:
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
