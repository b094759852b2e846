"""Recorded model replies replayed by the fake Gemini server, keyed by what the request shows.

A learn request names its session (``# Session <id> (``) and its episodes (``### Episode N:
… at #step``); the recording maps a session and the first episode step of each digest chunk it
was made from to the reply a model gave. A send-back
request (the verifier's reasons appended) gets the recorded ``send-back`` reply of its
session, or, when none was recorded, the first chunk's reply again: a model that keeps its
answer. A request the recording does not know gets an empty answer (no drafts), never an
invented one.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from .fake_gemini import Fault, text_reply

_SESSION = re.compile(r"^# Session (\S+) \(", re.M)
_EPISODE = re.compile(r"^### Episode \d+: \w+ at #(\d+)", re.M)
SEND_BACK_MARK = "## The verifier rejected"
UNKNOWN = {"verdict": {"outcome": "unknown", "reason": "not recorded", "confidence": 0.0},
           "drafts": []}


def load_replies(path: Path) -> dict[str, Any]:
    """The ``sessions`` mapping of a recording (``tests/data/learn_replies.json``)."""
    return dict(orjson.loads(path.read_bytes())["sessions"])


def request_text(body: dict[str, Any]) -> str:
    """The user text of a generateContent body."""
    return "".join(str(part.get("text", "")) for content in body.get("contents") or []
                   for part in content.get("parts") or [])


def reply_for(sessions: dict[str, Any], text: str) -> dict[str, Any]:
    """The recorded reply to a request's text."""
    sid = _SESSION.search(text)
    entry = sessions.get(sid.group(1)) if sid else None
    if entry is None:
        return UNKNOWN
    chunks: dict[str, Any] = entry.get("chunks") or {}
    if SEND_BACK_MARK in text:
        recorded = entry.get("send-back")
        if recorded is not None:
            return dict(recorded)
        return dict(next(iter(chunks.values()), UNKNOWN))
    # A recorded chunk answers the request showing its first episode; when the digest's cut
    # moved, one request may show the first episodes of several recorded chunks: their drafts
    # are joined, the verdict is the first's.
    shown = set(_EPISODE.findall(text))
    matched = [reply for start, reply in chunks.items() if start in shown]
    if not matched:
        return UNKNOWN
    joined = dict(matched[0])
    joined["drafts"] = [d for reply in matched for d in reply.get("drafts") or []]
    return joined


class Replayer:
    """A ``FakeGemini`` responder answering learn requests from a recording."""

    def __init__(self, sessions: dict[str, Any]) -> None:
        self.sessions = sessions
        self.send_backs: list[str] = []
        """The text of every send-back request received (what a recording may add)."""

    def __call__(self, body: dict[str, Any]) -> Fault:
        """The recorded reply to one generateContent body."""
        text = request_text(body)
        if SEND_BACK_MARK in text:
            self.send_backs.append(text)
        return text_reply(orjson.dumps(reply_for(self.sessions, text)).decode())
