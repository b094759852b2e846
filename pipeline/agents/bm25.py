"""Okapi BM25 over small documents, in pure Python, with a tokenizer for error text.

A library was weighed and left out: bm25s (the well-kept one) needs numpy, whose import alone
costs about a third of the hook's 200 ms budget, and rank-bm25 needs numpy too and is no longer
maintained. A playbook store is small (thousands of short documents), so an inverted index of
plain dicts answers a query in milliseconds. The scoring is Lucene's BM25 (the variant bm25s
calls ``lucene``): ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))`` and
``tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``; tests check it against hand-computed
values.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping

K1 = 1.5
B = 0.75

# Words, identifiers, error codes; ``_``, ``.`` and ``-`` inside a token split it further below.
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-']*[A-Za-z0-9]|[A-Za-z0-9]")
_PARTS = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_MAX_TOKEN = 40  # longer runs are hashes, base64 or ids: noise for retrieval

STOPWORDS = frozenset(
    "a an and are as at be been but by can could did do does for from had has have how i if in "
    "into is it its it's me my no not of on or our so such that the their then there these they "
    "this to was we were what when where which while who will with would you your".split()
)
"""Common English words; dropped so that long error texts are scored on their content."""


def tokenize(text: str) -> list[str]:
    """Lowercase terms of ``text``: words, identifiers and their parts, error codes.

    ``ModuleNotFoundError`` gives ``modulenotfounderror``, ``module``, ``not``, ``found`` and
    ``error`` (so a query naming the parts finds it); ``tests/test_api.py`` gives ``tests``,
    ``test_api.py``, ``test``, ``api`` and ``py``. Numbers, single letters and stop words
    are dropped.
    """
    out: list[str] = []
    for match in _TOKEN.finditer(text):
        raw = match.group(0).strip("'")
        if not raw or len(raw) > _MAX_TOKEN:
            continue
        pieces = [raw.lower()]
        parts = _PARTS.findall(raw)
        if len(parts) > 1:
            pieces.extend(p.lower() for p in parts)
        for part in parts:
            humps = _CAMEL.findall(part)
            if len(humps) > 1:
                pieces.extend(h.lower() for h in humps)
        seen: set[str] = set()
        for piece in pieces:
            if piece in seen or len(piece) < 2 or piece.isdigit() or piece in STOPWORDS:
                continue
            seen.add(piece)
            out.append(piece)
    return out


class Bm25Index:
    """An inverted index: term -> flat [doc, tf, doc, tf, ...], plus document lengths.

    The postings are flat pairs because the cache loads a flat list of ints several times
    faster than a list of pairs.
    """

    def __init__(self, postings: dict[str, list[int]] | None = None,
                 lengths: list[int] | None = None) -> None:
        self.postings: dict[str, list[int]] = postings if postings is not None else {}
        """Documents holding each term and its frequency there, in document order."""
        self.lengths: list[int] = lengths if lengths is not None else []
        """Number of terms of each document."""
        self._norms: list[float] = []

    @classmethod
    def build(cls, documents: Iterable[Mapping[str, int]]) -> Bm25Index:
        """Index documents given as term -> frequency mappings (``Counter(tokenize(text))``)."""
        index = cls()
        for number, counts in enumerate(documents):
            index.lengths.append(sum(counts.values()))
            for term, tf in counts.items():
                index.postings.setdefault(term, []).extend((number, tf))
        return index

    def document_terms(self) -> list[dict[str, int]]:
        """The term -> frequency mapping of every document (the inverse of ``build``)."""
        out: list[dict[str, int]] = [{} for _ in self.lengths]
        for term, flat in self.postings.items():
            for at in range(0, len(flat), 2):
                out[flat[at]][term] = flat[at + 1]
        return out

    @property
    def size(self) -> int:
        """Number of documents."""
        return len(self.lengths)

    def idf(self, term: str) -> float:
        """Lucene's always-positive inverse document frequency of ``term``."""
        df = len(self.postings.get(term, ())) // 2
        return math.log(1.0 + (self.size - df + 0.5) / (df + 0.5))

    def scores(self, query_terms: Iterable[str]) -> dict[int, float]:
        """BM25 score of every document holding at least one query term.

        Each distinct query term counts once: error outputs repeat their words (one
        traceback per failing test), and counting repeats let the noise of a long output
        outrank the playbook of its error (recall@1 0.87 -> 0.96 in bench/retrieval.py).
        """
        if not self.lengths:
            return {}
        if len(self._norms) != len(self.lengths):
            avgdl = sum(self.lengths) / len(self.lengths) or 1.0
            self._norms = [K1 * (1.0 - B + B * n / avgdl) for n in self.lengths]
        norms = self._norms
        out: dict[int, float] = {}
        for term in dict.fromkeys(query_terms):
            flat = self.postings.get(term)
            if not flat:
                continue
            idf = self.idf(term)
            pairs = iter(flat)
            for number, tf in zip(pairs, pairs, strict=True):
                out[number] = out.get(number, 0.0) + idf * tf * (K1 + 1.0) / (tf + norms[number])
        return out

    def coverage(self, number: int, query_terms: Iterable[str]) -> float:
        """Share of the query's weight (idf of each distinct term) document ``number`` holds.

        1.0 when it has every term, near 0 when it shares only common words.
        """
        terms = list(dict.fromkeys(query_terms))
        total = sum(self.idf(t) for t in terms)
        held = sum(self.idf(t) for t in terms if number in self.postings.get(t, ())[0::2])
        return held / total if total else 0.0

    def top(self, query_terms: Iterable[str], limit: int) -> list[tuple[int, float]]:
        """The ``limit`` best (document number, score) pairs, best first; ties by number."""
        ranked = sorted(self.scores(query_terms).items(), key=lambda item: (-item[1], item[0]))
        return ranked[:limit]
