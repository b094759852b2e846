"""What a text costs to redact once a session knows many secrets.

Every text of a session is searched for the secrets the session has learned, and for their
12-character fragments (``pipeline/privacy/fragments.py``). This prints the cost per text of
``--size`` characters after a session has learned 0, 10, 100 and 1,000 secrets (from an env
dump), with hyperscan's one pass over all the blocks and with the block-by-block
``str.find`` search it replaces (what runs without the ``fast`` extra). Each figure is the
session's whole time (the dump, then the texts) per text, so it holds the compiles the
session paid for.

Usage:
    python bench/redact_known.py [--texts 300] [--size 5000]
"""

from __future__ import annotations

import argparse
import random
import string
import time

from pipeline.privacy import fragments
from pipeline.privacy.memory import SessionSecrets


def _per_text(known: int, texts: list[str], slow: bool, rng: random.Random) -> float:
    """Seconds per text for a session that learned ``known`` secrets first."""
    saved = fragments.hyperscan
    if slow:
        fragments.hyperscan = None
    try:
        secrets = SessionSecrets()
        alphabet = string.ascii_letters + string.digits
        dump = "\n".join(f"export GITHUB_TOKEN_{i}=ghp_{''.join(rng.choices(alphabet, k=36))}"
                         for i in range(known))
        t0 = time.perf_counter()
        secrets.redact(dump)
        for text in texts:
            secrets.redact(text)
        elapsed = time.perf_counter() - t0
        assert len(secrets) == known
        return elapsed / len(texts)
    finally:
        fragments.hyperscan = saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=300, help="texts redacted per measurement")
    ap.add_argument("--size", type=int, default=5000, help="characters per text")
    args = ap.parse_args()
    rng = random.Random(1)
    words = ["the", "test", "failed", "at", "line", "def", "return", "import", "error", "=", "\n"]
    # Distinct texts: a session's scan cache would answer a repeated one without a search.
    texts = [" ".join(rng.choices(words, k=args.size // 4))[:args.size] + f" #{i}"
             for i in range(args.texts)]
    if fragments.hyperscan is not None:  # a process's first compiles cost 5x the later ones
        for size in (1, 100, 1000):
            warm = fragments.FragmentSearch()
            for i in range(size):
                warm.add(f"warm-up-value-{i:06d}", "warm-up")
            warm._compile()
    print(f"{args.texts} texts of {args.size} characters; ms per text "
          f"(hyperscan {'installed' if fragments.hyperscan else 'not installed'})")
    print(f"{'secrets known':>14} {'one pass':>10} {'block by block':>15} {'ratio':>7}")
    for known in (0, 10, 100, 1000):
        fast = _per_text(known, texts, False, rng) if fragments.hyperscan else float("nan")
        slow = _per_text(known, texts, True, rng)
        ratio = f"{slow / fast:>6.1f}x" if known else "      -"  # the same code with none
        print(f"{known:>14} {fast * 1e3:>10.3f} {slow * 1e3:>15.3f} {ratio}")


if __name__ == "__main__":
    main()
