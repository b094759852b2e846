"""Privacy: secrets are redacted at the source and checked again before anything leaves.

``redact``/``scan``/``redact_value`` are the stateless gate; ``SessionSecrets`` remembers every
secret of one session so it is replaced everywhere in it, fragments included; ``leak_kinds`` is
the final check the draft screen and the Gemini client run before a text is written or sent.
Nothing here imports the LLM layer: the format adapters use it while they parse.
"""

from .check import leak_kinds
from .hits import SecretHit, placeholder
from .memory import SessionSecrets
from .redact import kinds, redact, redact_value, scan
from .values import PLACEHOLDER_PREFIX, looks_random

__all__ = ["PLACEHOLDER_PREFIX", "SecretHit", "SessionSecrets", "kinds", "leak_kinds",
           "looks_random", "placeholder", "redact", "redact_value", "scan"]
