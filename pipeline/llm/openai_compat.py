"""The openai-compatible provider: any server that speaks OpenAI chat completions.

Ollama, vLLM, llama.cpp's server, LM Studio and a LiteLLM proxy all do, so logs can stay on
the team's own machines. Configured by the ``openai_base_url`` and ``openai_model`` settings
(env ``ORF_OPENAI_BASE_URL``, ``ORF_OPENAI_MODEL``, or ``[tool.orf]``), with an optional key in
the variable ``openai_api_key_env`` names (``ORF_OPENAI_API_KEY``; a local server checks none).
Replies are asked for as ``response_format`` ``json_schema``; a server that rejects it (400 or
422 naming ``response_format``) is asked for ``json_object`` from then on, with the schema in the
system message, and each reply is checked against the schema here, so an off-schema answer is
an unusable reply. OpenAI's own reasoning models (o-series, gpt-5) refuse ``max_tokens`` and
any ``temperature`` but the default with a 400 naming the parameter: the request is sent again
as ``PARAM_FALLBACKS`` says, and the provider remembers it for the run.
"""

from __future__ import annotations

import datetime
import email.utils
import json
import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import openai

from ..config import Settings
from ..errors import BackendError
from .backend import LLMRequest
from .cost import cost_usd
from .provider import Envelope, Provider

NO_KEY = "no-key"
"""Sent when no key is set: the SDK insists on one, a local server ignores it."""

SCHEMA_INSTRUCTION = "\n\nReply with one JSON object only, matching this JSON schema:\n"
"""Appended to the system message in JSON mode, followed by the schema."""

FINISH_ERRORS = {
    "length": "truncated: finish reason length",
    "content_filter": "blocked: finish reason content_filter",
}
"""``finish_reason`` values whose reply is unusable, and the reason recorded."""


@dataclass(frozen=True)
class ServerConfig:
    """Where the server is and which model it serves."""

    base_url: str
    model: str
    api_key: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings,
                      environ: Mapping[str, str] | None = None) -> ServerConfig:
        """The server ``settings`` name; the key is read from ``settings.openai_api_key_env``.

        Raises:
            BackendError: the base URL or the model is not set (one line naming the variable).
        """
        env = os.environ if environ is None else environ
        base_url = (settings.openai_base_url or "").strip()
        model = (settings.openai_model or "").strip()
        for value, var, example in ((base_url, "ORF_OPENAI_BASE_URL", "http://127.0.0.1:11434/v1"),
                                    (model, "ORF_OPENAI_MODEL", "qwen3")):
            if not value:
                raise BackendError(f"the openai-compatible backend needs {var} "
                                   f"(e.g. {var}={example})")
        return cls(base_url, model, env.get(settings.openai_api_key_env, "").strip() or None)


# ---- the schema check of JSON-mode replies ----

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "integer": (int,), "number": (int, float), "null": (type(None),),
}


def schema_problem(value: Any, schema: Mapping[str, Any], where: str = "reply") -> str | None:
    """The first way ``value`` breaks ``schema`` (the subset the stages' schemas use), or None."""
    kinds = schema.get("type")
    if kinds is not None:
        names = kinds if isinstance(kinds, list) else [kinds]
        allowed = tuple(t for n in names for t in _TYPES.get(str(n), (object,)))
        # bool is an int to Python, never to JSON.
        if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
            return f"{where} is not {' or '.join(map(str, names))}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where} is not one of {schema['enum']}"
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                return f"{where} lacks {key!r}"
        props: Mapping[str, Any] = schema.get("properties", {})
        for key, sub in props.items():
            if key in value and (problem := schema_problem(value[key], sub, f"{where}.{key}")):
                return problem
    if isinstance(value, list):
        items: Mapping[str, Any] = schema.get("items", {})
        for i, item in enumerate(value):
            if problem := schema_problem(item, items, f"{where}[{i}]"):
                return problem
    return None


def json_mode_problem(text: str | None, schema: Mapping[str, Any]) -> str | None:
    """Why a JSON-mode reply is unusable: not JSON, or not what the schema asks for."""
    if not text or not text.strip():
        return None  # the empty-reply reason says it better
    try:
        value = json.loads(text)
    except ValueError as exc:
        return f"invalid JSON: {exc}"
    problem = schema_problem(value, schema)
    return f"invalid reply: {problem}" if problem else None


# ---- the provider ----


PARAM_FALLBACKS: dict[str, str | None] = {
    "max_tokens": "max_completion_tokens",  # its successor; reasoning models take only it
    "temperature": None,  # reasoning models take only the default: leave it out
}
"""Request parameters a server may refuse (400 naming it in ``param``) -> what to send
instead: another name for the same value, or None to leave it out."""

REJECTION_STATUS = frozenset({400, 422})
"""Statuses a server without structured outputs answers ``json_schema`` with (422: FastAPI)."""


def _rejects_json_schema(exc: openai.APIStatusError) -> bool:
    """True when a 400/422 says the server does not take ``response_format`` ``json_schema``."""
    if exc.status_code not in REJECTION_STATUS:
        return False
    return exc.param == "response_format" or "response_format" in str(exc.message)


def _refused_param(exc: openai.APIStatusError) -> str | None:
    """The ``PARAM_FALLBACKS`` parameter a 400/422 refuses, by its ``param`` or its message."""
    if exc.status_code not in REJECTION_STATUS:
        return None
    if exc.param in PARAM_FALLBACKS:
        return str(exc.param)
    message = str(exc.message)
    return next((p for p in PARAM_FALLBACKS if f"'{p}'" in message), None)


def _seconds(raw: str, scale: float) -> float | None:
    """A header's wait: a number of (milli)seconds, or an HTTP date from now."""
    try:
        return float(raw) * scale
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return (when - datetime.datetime.now(datetime.timezone.utc)).total_seconds()


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or HTTP date).

    Not capped here: the wrapper caps every provider's wait (``retry.MAX_RETRY_DELAY_S``).
    """
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        seconds = _seconds(raw, scale) if raw is not None else None
        if seconds is not None and seconds > 0:
            return seconds
    return None


_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


class OpenAICompatProvider(Provider):
    """Chat completions through the official ``openai`` SDK, at any base URL."""

    name: ClassVar[str] = "openai-compatible"

    def __init__(self, settings: Settings, config: ServerConfig, *, client: Any = None) -> None:
        self.settings = settings
        self.config = config
        self.model = config.model
        # The wrapper retries; the SDK's own retries would multiply its attempts. Any: the
        # SDK's overloads type messages and formats as TypedDicts this module builds as dicts.
        self.client: Any = client or openai.OpenAI(
            base_url=config.base_url, api_key=config.api_key or NO_KEY, max_retries=0,
            timeout=settings.call_timeout_s,
        )
        self._json_mode = False
        self._replaced: dict[str, str | None] = {}
        """Parameters the server refused, and what is sent instead (``PARAM_FALLBACKS``)."""
        self._mode_lock = threading.Lock()

    @property
    def json_mode(self) -> bool:
        """True once the server has rejected ``json_schema``: requests use ``json_object``."""
        with self._mode_lock:
            return self._json_mode

    def _create(self, request: LLMRequest, timeout_s: float | None, *, json_mode: bool) -> Any:
        system = request.system
        if json_mode:
            fmt: dict[str, Any] = {"type": "json_object"}
            system += SCHEMA_INSTRUCTION + json.dumps(request.schema, sort_keys=True)
        else:
            name = _NAME_UNSAFE.sub("_", request.purpose) or "reply"
            fmt = {"type": "json_schema",
                   "json_schema": {"name": name, "schema": request.schema, "strict": False}}
        options: dict[str, Any] = {"temperature": 0.0,
                                   "max_tokens": request.max_output_tokens}
        with self._mode_lock:
            replaced = dict(self._replaced)
        for param, instead in replaced.items():
            value = options.pop(param)
            if instead is not None:
                options[instead] = value
        if timeout_s:
            options["timeout"] = timeout_s
        return self.client.chat.completions.create(
            model=self.model,
            messages=[{"role": "system", "content": system},
                      {"role": "user", "content": request.prompt}],
            response_format=fmt, **options,
        )

    def send(self, request: LLMRequest, timeout_s: float | None) -> Envelope:
        """One chat completion; adapts once to each refusal a server may give.

        A refused ``PARAM_FALLBACKS`` parameter is replaced, a refused ``json_schema`` becomes
        JSON mode; both are remembered for later requests. Any other error is raised.
        """
        json_mode = self.json_mode
        for _ in range(len(PARAM_FALLBACKS) + 1):
            try:
                response = self._create(request, timeout_s, json_mode=json_mode)
                break
            except openai.APIStatusError as exc:
                param = _refused_param(exc)
                with self._mode_lock:
                    if param is not None and param not in self._replaced:
                        self._replaced[param] = PARAM_FALLBACKS[param]
                    elif not json_mode and _rejects_json_schema(exc):
                        self._json_mode = json_mode = True
                    else:
                        raise
        else:
            response = self._create(request, timeout_s, json_mode=json_mode)
        envelope = envelope_from_response(response)
        envelope["mode"] = "json_object" if json_mode else "json_schema"
        if json_mode:
            envelope["invalid"] = json_mode_problem(envelope["text"], request.schema)
        return envelope

    def retry_delay(self, exc: BaseException) -> float | None:
        """429: the server's Retry-After or backoff; 408/5xx/transport: backoff."""
        if isinstance(exc, openai.APIConnectionError):  # timeouts are a subclass
            return 0.0
        if not isinstance(exc, openai.APIStatusError):
            return None
        status = exc.status_code
        if status == 429:
            wait = _retry_after(exc.response.headers)
            return wait if wait is not None else 0.0
        return 0.0 if status == 408 or status >= 500 else None

    def describe(self, exc: BaseException) -> str:
        """``HTTP 429: <server's message>`` or ``APITimeoutError: Request timed out.``."""
        if isinstance(exc, openai.APIStatusError):
            body = exc.body if isinstance(exc.body, dict) else {}
            message = str(body.get("message") or exc.message or "").strip() or "no message"
            return f"HTTP {exc.status_code}: {message.splitlines()[0][:300]}"
        return super().describe(exc)

    def finish_error(self, envelope: Envelope) -> str | None:
        """Why the reply is unusable: refused, cut off, filtered, empty or off-schema."""
        finish = envelope.get("finish")
        if envelope.get("refusal"):
            return f"blocked: {str(envelope['refusal'])[:200]}"
        if finish in FINISH_ERRORS:
            return FINISH_ERRORS[str(finish)]
        if envelope.get("invalid"):
            return str(envelope["invalid"])
        text = envelope.get("text")
        if not text or not str(text).strip():
            return "empty reply: no choices" if finish is None else "empty reply"
        return None

    def price(self, tokens_in: int, tokens_out: int, *, batch: bool) -> float:
        """USD from ``Settings.prices`` when it names this model, else 0.0 (self-hosted)."""
        return cost_usd(self.settings.prices, self.model, tokens_in, tokens_out, batch=batch)


def envelope_from_response(response: Any) -> Envelope:
    """Text, finish reason, refusal and token counts of a ``ChatCompletion``."""
    usage = getattr(response, "usage", None)
    envelope: Envelope = {
        "text": None, "finish": None, "refusal": None,
        "tokens_in": int(getattr(usage, "prompt_tokens", 0) or 0),
        "tokens_out": int(getattr(usage, "completion_tokens", 0) or 0),
    }
    choices = getattr(response, "choices", None) or []
    if not choices:
        return envelope
    choice = choices[0]
    message = getattr(choice, "message", None)
    envelope["finish"] = getattr(choice, "finish_reason", None)
    envelope["text"] = getattr(message, "content", None)
    envelope["refusal"] = getattr(message, "refusal", None)
    return envelope


def make_provider(settings: Settings, client: Any = None) -> OpenAICompatProvider:
    """The provider for the server ``settings`` name (``openai_base_url``, ``openai_model``)."""
    return OpenAICompatProvider(settings, ServerConfig.from_settings(settings), client=client)
