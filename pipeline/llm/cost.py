"""What a call costs, from the price table in ``Settings.prices`` (Batch Mode is half)."""

from __future__ import annotations

from collections.abc import Mapping

BATCH_DISCOUNT = 0.5
"""Batch Mode bills half the online price."""


def price_for(prices: Mapping[str, tuple[float, float]], model: str) -> tuple[float, float]:
    """USD per 1M tokens (input, output) for ``model``; (0, 0) when the table lacks it.

    The longest table entry that prefixes the model name wins, so dated variants
    (``gemini-2.5-flash-001``) fall back to their family price.
    """
    name = model.removeprefix("models/")
    if name in prices:
        return prices[name]
    matches = [key for key in prices if name.startswith(key)]
    if not matches:
        return (0.0, 0.0)
    return prices[max(matches, key=len)]


def cost_usd(
    prices: Mapping[str, tuple[float, float]],
    model: str,
    tokens_in: int,
    tokens_out: int,
    *,
    batch: bool = False,
) -> float:
    """Cost of one call in USD."""
    per_in, per_out = price_for(prices, model)
    cost = (tokens_in * per_in + tokens_out * per_out) / 1_000_000
    return cost * BATCH_DISCOUNT if batch else cost
