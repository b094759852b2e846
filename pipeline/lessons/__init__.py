"""Lessons: what each finding teaches, extracted once from the log (see ``build.py``)."""

from .build import build_lesson
from .tables import CLASS_BY_ID, ERROR_CLASSES

__all__ = ["CLASS_BY_ID", "ERROR_CLASSES", "build_lesson"]
