"""The detector contract: pure functions over a Trajectory, registered by family name."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..config import DetectSettings
from ..model import Finding, Trajectory

Detector = Callable[[Trajectory, DetectSettings], Iterable[Finding]]

REGISTRY: dict[str, Detector] = {}


def register(name: str) -> Callable[[Detector], Detector]:
    """Register a detector under a family name (``@register("exact_repeat")``)."""

    def deco(fn: Detector) -> Detector:
        REGISTRY[name] = fn
        return fn

    return deco
