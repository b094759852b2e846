"""The JSON the fake Gemini server answers a model request with.

A queued item becomes a response (``response_json``); with nothing scripted, the automatic reply
fills the request's response schema (``auto_reply``) so every stage gets an answer it accepts.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from .gemini_faults import Fault, Item


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
    text = body_text(body)
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


def token_count(text: str) -> int:
    """The fake's token estimate: four characters a token, at least one."""
    return max(1, len(text) // 4)


def body_text(body: dict[str, Any]) -> str:
    """The text of a request: its contents' parts, then its system instruction."""
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
    usage = {"promptTokenCount": token_count(body_text(body))}
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
    usage["candidatesTokenCount"] = token_count(text)
    usage["totalTokenCount"] = usage["promptTokenCount"] + usage["candidatesTokenCount"]
    return 200, {
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                        "finishReason": finish, "index": 0}],
        "usageMetadata": usage,
        "modelVersion": "fake",
    }
