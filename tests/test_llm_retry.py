from __future__ import annotations

import httpx2 as httpx
import pytest
from _llm_helpers import fast_retry_waits  # noqa: F401
from google.genai import errors
from tenacity import Retrying

from pipeline.config import Settings
from pipeline.errors import BackendError, MissingApiKey
from pipeline.llm.cost import cost_usd, price_for
from pipeline.llm.gemini_wire import model_retry_config, retry_delay_hint, should_retry
from pipeline.llm.registry import get_backend


def api_error(code: int, details: list | None = None) -> errors.APIError:
    body = {"error": {"code": code, "message": "x", "status": "S", "details": details or []}}
    # The class the SDK raises for the code (its raise_error helper is not in 1.45, the floor).
    kind = errors.ClientError if 400 <= code < 500 else errors.ServerError
    return kind(code, body)


@pytest.mark.parametrize("code", [408, 429, 500, 502, 503, 504])
def test_transient_codes_are_retried(code: int) -> None:
    assert should_retry(api_error(code))


@pytest.mark.parametrize("code", [400, 401, 403, 404, 422])
def test_other_client_errors_are_not_retried(code: int) -> None:
    exc = api_error(code)
    assert isinstance(exc, errors.ClientError)
    assert not should_retry(exc)


def test_transport_timeouts_are_retried_but_bugs_are_not() -> None:
    assert should_retry(httpx.ReadTimeout("slow"))
    assert should_retry(httpx.ConnectError("refused"))
    assert not should_retry(ValueError("bug"))


def test_retry_info_delay_is_read_from_429() -> None:
    exc = api_error(429, [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                           "retryDelay": "17s"}])
    assert retry_delay_hint(exc) == 17.0
    assert retry_delay_hint(api_error(429)) is None


def test_gemini_provider_says_which_errors_retry_and_how_long_to_wait() -> None:
    from pipeline.llm.gemini import GeminiProvider

    provider = GeminiProvider(Settings(), client=object())
    hint = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "17s"}]
    assert provider.retry_delay(api_error(429, hint)) == 17.0
    assert provider.retry_delay(api_error(503)) == 0.0  # the default backoff
    assert provider.retry_delay(httpx.ReadTimeout("slow")) == 0.0
    assert provider.retry_delay(api_error(400)) is None
    assert provider.describe(api_error(429)) == "HTTP 429: x"
    assert provider.describe(TimeoutError("read timed out")) == "TimeoutError: read timed out"


def test_retry_config_honours_hint_and_bounds_attempts(fast_retry_waits: list[float]) -> None:  # noqa: F811
    calls = []
    hint = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "3s"}]

    def flaky() -> str:
        calls.append(1)
        raise api_error(429, hint)

    with pytest.raises(errors.ClientError):
        for attempt in Retrying(**model_retry_config(3)):
            with attempt:
                flaky()
    assert len(calls) == 3
    assert fast_retry_waits == [3.0, 3.0]


def test_backoff_grows_without_hint(fast_retry_waits: list[float]) -> None:  # noqa: F811
    with pytest.raises(errors.ServerError):
        for attempt in Retrying(**model_retry_config(4, initial_wait=1.0, max_wait=60)):
            with attempt:
                raise api_error(503)
    assert len(fast_retry_waits) == 3
    assert fast_retry_waits[2] >= 4.0  # 1, 2, 4 (+ jitter)


def test_cost_uses_price_table_and_halves_batch() -> None:
    prices = Settings().prices
    model = Settings().model
    per_in, per_out = price_for(prices, model)
    online = cost_usd(prices, model, 1_000_000, 1_000_000)
    assert online == pytest.approx(per_in + per_out)
    assert cost_usd(prices, model, 1_000_000, 1_000_000, batch=True) == pytest.approx(online / 2)
    assert price_for(prices, f"models/{model}-001") == (per_in, per_out)
    assert price_for(prices, "unknown-model") == (0.0, 0.0)


def test_get_backend_default_is_heuristic_without_key() -> None:
    assert get_backend(Settings()).name == "heuristic"


def test_get_backend_gemini_without_key_says_what_to_do() -> None:
    with pytest.raises(MissingApiKey, match="GEMINI_API_KEY"):
        get_backend(Settings(backend="gemini"))


def test_get_backend_gemini_with_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    backend = get_backend(Settings())
    assert backend.name == "gemini"
    assert backend.decided_by == f"gemini:{Settings().model}"


def test_unknown_backend() -> None:
    with pytest.raises(BackendError, match="unknown backend 'nope'"):
        get_backend(Settings(backend="nope"))


def test_lazy_client_is_built_once_across_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from pipeline.llm.gemini import GeminiBackend

    monkeypatch.setenv("GEMINI_API_KEY", "k")
    backend = GeminiBackend(Settings(backend="gemini"), None)
    with ThreadPoolExecutor(8) as pool:
        clients = list(pool.map(lambda _: backend.client, range(32)))
    assert len({id(c) for c in clients}) == 1
