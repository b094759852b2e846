"""Ranked playbooks for a task description or an error text, from a cached BM25 index.

The index covers title, description, keywords, trap and the error lines a playbook records
(in ``provenance``, or as code spans of its title, description and trap), the fields that
say *when* a playbook applies. It is cached per store in the user's cache folder (a store may be
read-only) and checked against every playbook's size and mtime on each load: only changed
files are parsed again. A playbook is read with one ``read_text`` of a file that writers
replace atomically, and its stamp is taken before the read, so a reader never indexes a
half-written file and a file changed meanwhile is simply indexed again next time.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from .bm25 import Bm25Index, tokenize

CACHE_VERSION = 3
"""Version of the cache file layout; bump when a field changes meaning (old caches rebuild)."""

_EXP_FILE = re.compile(r"EXP-\d{8}-\d{4}\.md\Z")
# A Markdown code span: ``a `b` c`` (double, may hold backticks) or `a b` (single).
_CODE_SPAN = re.compile(r"``\s?([^\n]+?)\s?``|`([^`\n]+)`")
ERRORISH = re.compile(
    r"error|exception|traceback|not found|no such|denied|refused|failed|failure|fatal|cannot|"
    r"can't|unable|invalid|missing|required|unknown|unexpected|undefined|unresolved|"
    r"not allowed|no replacement|timed? ?out|exit code|E\d{3,4}\b", re.IGNORECASE)
# Field weights by repetition (a cheap BM25F): the retrieval keys count double.
_WEIGHTS = (("title", 2), ("keywords", 2), ("description", 2), ("errors", 2), ("trap", 1),
            ("domain", 1))
_MAX_ERROR_LINES = 8
_MAX_FOCUS_LINES = 40
_MAX_QUERY = 4000
_LONG_QUERY = 600
"""Queries longer than this many characters are searched on their error lines."""
MIN_COVERAGE = 0.5
"""A search hit holds at least this share of the query's weight (``Bm25Index.coverage``), or
the query holds most of an error line the playbook records (``trap_matches``, for a pasted
output): a playbook sharing only common words with the query is no match, and not served."""
LONG_QUERY_TERMS = 12
"""A query of more distinct terms than this is a pasted output: it holds names, paths and
numbers no playbook has, so its floor is ``MIN_COVERAGE_LONG``."""
MIN_COVERAGE_LONG = 0.25
"""The coverage floor of a pasted output (see ``LONG_QUERY_TERMS``)."""
MATCH_COVERAGE = 0.6
"""Share of the terms of a recorded error line the error text must hold to match the trap."""
MIN_ERROR_TERMS = 2
"""A recorded error line with fewer terms never matches by itself (too vague)."""


def replace_file(path: Path, data: bytes) -> None:
    """Write ``data`` to a temp file beside ``path`` and rename it over ``path``.

    ``fsutil.atomic_write`` without the fsyncs (a lost cache is rebuilt) and without
    importing tempfile and filelock, which the hook cannot afford.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    try:
        with open(tmp, "xb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def cache_dir() -> Path:
    """Where search indexes are cached: ORF_CACHE_DIR, $ORF_HOME/cache, or the user cache."""
    explicit = os.environ.get("ORF_CACHE_DIR")
    if explicit:
        return Path(explicit)
    home = os.environ.get("ORF_HOME")
    if home:
        return Path(home) / "cache"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "orf"


def cache_file(root: Path) -> Path:
    """The cache file of the store at ``root`` (one per resolved store path)."""
    key = hashlib.blake2b(str(root.resolve()).encode(), digest_size=8).hexdigest()
    return cache_dir() / f"search-{key}.json"


class Doc(NamedTuple):
    """What search and the hook need of one playbook, without parsing it again."""

    id: str
    domain: str
    title: str
    description: str
    rel_path: str
    """``<domain>/<id>.md``, relative to the store."""
    insight: str
    """The Core Principle."""
    validated_path: str
    """Section 4."""
    error_terms: tuple[tuple[str, ...], ...]
    """The terms of each error line the playbook records (none for hand-written ones)."""
    terms: dict[str, int] = {}  # never mutated: one shared empty default is safe
    """Weighted term frequencies of the indexed fields (not cached: the postings hold them)."""

    def to_json(self) -> dict[str, Any]:
        """The cache form (without ``terms``)."""
        return {"id": self.id, "domain": self.domain, "title": self.title,
                "description": self.description, "rel_path": self.rel_path,
                "insight": self.insight, "validated_path": self.validated_path,
                "error_terms": [list(line) for line in self.error_terms]}

    @classmethod
    def from_json(cls, data: dict[str, Any], terms: dict[str, int] | None = None) -> Doc:
        """Read the cache form back."""
        return cls(id=data["id"], domain=data["domain"], title=data["title"],
                   description=data["description"], rel_path=data["rel_path"],
                   insight=data["insight"], validated_path=data["validated_path"],
                   error_terms=tuple(tuple(line) for line in data["error_terms"]),
                   terms=terms or {})


class Hit(NamedTuple):
    """One search result."""

    doc: Doc
    score: float
    number: int = -1
    """The document's number in the index."""

    def to_dict(self, root: Path) -> dict[str, Any]:
        """The fields ``orf search`` prints (as ``get-frontmatter`` does, plus the score)."""
        return {"id": self.doc.id, "title": self.doc.title, "description": self.doc.description,
                "domain": self.doc.domain, "score": round(self.score, 3),
                "file_path": str(root / self.doc.rel_path)}


def trap_matches(doc: Doc, query_terms: set[str]) -> bool:
    """True when most terms of one of the playbook's recorded error lines are in the query."""
    for line in doc.error_terms:
        if len(line) >= MIN_ERROR_TERMS:
            held = sum(1 for term in line if term in query_terms)
            if held / len(line) >= MATCH_COVERAGE:
                return True
    return False


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def error_lines(provenance: dict[str, Any] | None, *texts: str) -> list[str]:
    """Error lines a playbook records, most telling first, deduplicated.

    Provenance strings under ``*error*`` / ``*symptom*`` keys come first, then code spans
    of ``texts`` (title, description, trap) that read like an error message.
    """
    found: list[str] = []
    stack: list[Any] = [provenance] if provenance else []
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                name = str(key).lower()
                if ("error" in name or "symptom" in name) and not name.endswith("class"):
                    found.extend(_strings(value))
                elif isinstance(value, (dict, list)):
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, (dict, list)))
    for text in texts:
        for match in _CODE_SPAN.finditer(text):
            span = match.group(1) or match.group(2)
            if 4 <= len(span) <= 400 and ERRORISH.search(span):
                found.append(span)
    unique = list(dict.fromkeys(line.strip() for line in found if line.strip()))
    return unique[:_MAX_ERROR_LINES]


def error_focus(text: str) -> str:
    """The lines of ``text`` that read like errors (all of it when none does), bounded.

    A tool's output around an error (the code it printed, progress lines) would otherwise
    outweigh the error itself in a long query.
    """
    lines = [line for line in text.splitlines() if ERRORISH.search(line)]
    focus = "\n".join(lines[:_MAX_FOCUS_LINES]) if lines else text
    return focus[:_MAX_QUERY]


def make_doc(exp: Any, rel_path: str) -> Doc:
    """Index one parsed ``pipeline.orf.Experience``."""
    errors = error_lines(exp.provenance, exp.title, exp.description, exp.trap)
    fields = {"title": exp.title, "keywords": " ".join(exp.keywords),
              "description": exp.description, "errors": "\n".join(errors), "trap": exp.trap,
              "domain": exp.domain.replace("-", " ")}
    counts: Counter[str] = Counter()
    for name, weight in _WEIGHTS:
        for term in tokenize(fields[name]):
            counts[term] += weight
    error_terms = tuple(tuple(sorted(set(tokenize(line)))) for line in errors)
    insight = exp.insight.split("\n\n", 1)[0].strip()
    return Doc(id=exp.id, domain=exp.domain, title=exp.title, description=exp.description,
               rel_path=rel_path, insight=insight, validated_path=exp.validated_path,
               error_terms=error_terms, terms=dict(counts))


def scan(root: Path) -> dict[str, list[int]]:
    """``<domain>/<file>`` -> [mtime_ns, size] of every playbook file of the store."""
    stamps: dict[str, list[int]] = {}
    try:
        folders = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return stamps
    for folder in folders:
        if folder.name.startswith(".") or not folder.is_dir():
            continue
        try:
            entries = sorted(os.scandir(folder.path), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            # Temp files of a writer start with "." and never match: half-written files are
            # invisible by name.
            if _EXP_FILE.match(entry.name):
                try:
                    st = entry.stat()
                except OSError:
                    continue
                stamps[f"{folder.name}/{entry.name}"] = [st.st_mtime_ns, st.st_size]
    return stamps


def _parse(root: Path, rel: str) -> tuple[Doc | None, list[str] | None]:
    """The indexed form of one playbook, or None and ``[id, why]`` when it is withheld."""
    from ..errors import StoreError
    from ..orf.experience import parse_experience

    try:
        exp = parse_experience(root / rel)
    except StoreError:
        return None, None  # `orf validate` reports it; search goes on without it
    if not exp.id:
        return None, None
    why = withheld(exp)
    if why is not None:
        return None, [exp.id, why]  # never served: `orf search` names it
    return make_doc(exp, rel), None


def withheld(exp: Any) -> str | None:
    """Why a playbook of the store is not served to agents (an injected instruction), or None."""
    from ..safety import unsafe_reason

    texts = (exp.title, exp.description, exp.objective, exp.trap, exp.insight,
             exp.validated_path, *exp.checklist)
    return next((why for t in texts if (why := unsafe_reason(t or "")) is not None), None)


class SearchIndex:
    """The playbooks of one store and their BM25 index.

    Loaded from the cache, a playbook's fields are decoded only when it is a hit: a hook on a
    large store pays for the postings it needs, not for every description.
    """

    def __init__(self, root: Path, docs: list[Doc], bm25: Bm25Index | None = None,
                 withheld: dict[str, list[str]] | None = None) -> None:
        self.root = root
        self.withheld: dict[str, list[str]] = withheld or {}
        """Playbooks never served: store-relative path -> [id, why], for ``orf search``."""
        self._docs: list[Doc | None] = list(docs)
        self._lazy: tuple[bytes, list[int]] | None = None
        self.bm25 = bm25 or Bm25Index.build(d.terms for d in docs)

    @classmethod
    def _from_cache(cls, root: Path, cached: _Cache) -> SearchIndex:
        index = cls(root, [], Bm25Index(postings=cached.postings, lengths=cached.lengths),
                    cached.withheld)
        index._docs = [None] * len(cached.lengths)
        index._lazy = (cached.meta, cached.offsets)
        return index

    def doc(self, number: int) -> Doc:
        """Playbook ``number`` of the index."""
        doc = self._docs[number]
        if doc is None:
            assert self._lazy is not None
            meta, offsets = self._lazy
            doc = Doc.from_json(orjson.loads(meta[offsets[number]:offsets[number + 1]]))
            self._docs[number] = doc
        return doc

    @property
    def docs(self) -> list[Doc]:
        """Every indexed playbook, in index order."""
        return [self.doc(n) for n in range(len(self._docs))]

    @classmethod
    def load(cls, root: Path, use_cache: bool = True) -> SearchIndex:
        """Index the store at ``root``, reusing the cache for every unchanged file."""
        root = Path(root)
        stamps = scan(root)
        path = cache_file(root)
        cached = _Cache.read(path, root) if use_cache else None
        if cached is not None and cached.files == stamps:
            return cls._from_cache(root, cached)
        reusable: dict[str, Doc] = {}
        if cached is not None:
            old = cls._from_cache(root, cached)
            terms = old.bm25.document_terms()
            for rel, number in cached.doc_of.items():
                if cached.files.get(rel) == stamps.get(rel):
                    previous = old.doc(number)
                    reusable[rel] = Doc.from_json(previous.to_json(), terms[number])
        docs: list[Doc] = []
        doc_of: dict[str, int] = {}
        held: dict[str, list[str]] = {}
        for rel in stamps:
            if cached is not None and rel in cached.files and cached.files[rel] == stamps[rel]:
                doc = reusable.get(rel)  # None: unchanged and still unparseable or withheld
                why = cached.withheld.get(rel)
            else:
                doc, why = _parse(root, rel)
            if why is not None:
                held[rel] = why
            if doc is not None:
                doc_of[rel] = len(docs)
                docs.append(doc)
        index = cls(root, docs, withheld=held)
        if use_cache:
            _Cache.write(path, index, stamps, doc_of)
        return index

    def search(self, query: str, limit: int = 5) -> list[Hit]:
        """The ``limit`` best playbooks for ``query`` (a task description or an error text).

        A long query (a pasted tool output) is searched on the lines that read like errors.
        Only playbooks that match pass (``MIN_COVERAGE``): none is the answer "no match".
        """
        if len(query) > _LONG_QUERY:
            query = error_focus(query)
        terms = tokenize(query)
        wanted = set(terms)
        floor = MIN_COVERAGE if len(wanted) <= LONG_QUERY_TERMS else MIN_COVERAGE_LONG
        return [hit for hit in self.search_terms(terms, limit)
                if self.bm25.coverage(hit.number, terms) >= floor
                or trap_matches(hit.doc, wanted)]

    def search_terms(self, terms: list[str], limit: int = 5) -> list[Hit]:
        """The ``limit`` best playbooks for an already tokenized query, without the floor."""
        return [Hit(self.doc(n), score, n) for n, score in self.bm25.top(terms, limit)]


class _Cache(NamedTuple):
    """The cache file: a JSON header line, a JSON postings line, then one JSON line per doc.

    One file, replaced atomically, so the three parts always agree; the header holds the
    byte offsets of the doc lines, so a reader decodes only the docs it returns.
    """

    files: dict[str, list[int]]
    doc_of: dict[str, int]
    lengths: list[int]
    postings: dict[str, list[int]]
    meta: bytes
    offsets: list[int]
    withheld: dict[str, list[str]]

    @classmethod
    def read(cls, path: Path, root: Path) -> _Cache | None:
        try:
            data = path.read_bytes()
            first = data.index(b"\n")
            second = data.index(b"\n", first + 1)
            header = orjson.loads(data[:first])
            if (not isinstance(header, dict) or header.get("version") != CACHE_VERSION
                    or header.get("root") != str(root.resolve())):
                return None
            postings = orjson.loads(data[first + 1:second])
            return cls(files=header["files"], doc_of=header["doc_of"],
                       lengths=header["lengths"], postings=postings, meta=data[second + 1:],
                       offsets=header["offsets"], withheld=header["withheld"])
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing, truncated or another layout: rebuilt

    @staticmethod
    def write(path: Path, index: SearchIndex, stamps: dict[str, list[int]],
              doc_of: dict[str, int]) -> None:
        lines = [orjson.dumps(d.to_json()) + b"\n" for d in index.docs]
        offsets = [0]
        for line in lines:
            offsets.append(offsets[-1] + len(line))
        header = {"version": CACHE_VERSION, "root": str(index.root.resolve()), "files": stamps,
                  "doc_of": doc_of, "lengths": index.bm25.lengths, "offsets": offsets,
                  "withheld": index.withheld}
        body = b"".join([orjson.dumps(header), b"\n", orjson.dumps(index.bm25.postings),
                         b"\n", *lines])
        try:
            replace_file(path, body)
        except OSError:
            return  # a cache that cannot be written only costs speed
