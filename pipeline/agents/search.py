"""Ranked playbooks for a task description or an error text, from a cached BM25 index.

The index covers title, description, keywords, trap and the error lines a playbook records
(in ``provenance`` or quoted in its description and trap), the fields that say *when* a
playbook applies. It is cached per store in the user's cache folder (a store may be
read-only) and checked against every playbook's size and mtime on each load: only changed
files are parsed again. A playbook is read with one ``read_text`` of a file that writers
replace atomically, and its stamp is taken before the read, so a reader never indexes a
half-written file and a file changed meanwhile is simply indexed again next time.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from .bm25 import Bm25Index, tokenize

CACHE_VERSION = 1
"""Version of the cache file layout; bump when a field changes meaning (old caches rebuild)."""

_EXP_FILE = re.compile(r"EXP-\d{8}-\d{4}\.md\Z")
_BACKTICK = re.compile(r"`([^`\n]{4,400})`")
ERRORISH = re.compile(
    r"error|exception|traceback|not found|no such|denied|refused|failed|failure|fatal|cannot|"
    r"can't|unable|invalid|missing|timed? ?out|exit code|E\d{3,4}\b", re.IGNORECASE)
# Field weights by repetition (a cheap BM25F): the retrieval keys count double.
_WEIGHTS = (("title", 2), ("keywords", 2), ("description", 2), ("errors", 2), ("trap", 1),
            ("domain", 1))
_MAX_ERROR_LINES = 8


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


@dataclass(frozen=True)
class Doc:
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
    error_terms: tuple[str, ...]
    """Terms of the error lines the playbook records (empty for hand-written ones)."""
    terms: dict[str, int]
    """Weighted term frequencies of the indexed fields."""

    def to_json(self) -> dict[str, Any]:
        """The cache form."""
        return {"id": self.id, "domain": self.domain, "title": self.title,
                "description": self.description, "rel_path": self.rel_path,
                "insight": self.insight, "validated_path": self.validated_path,
                "error_terms": list(self.error_terms), "terms": self.terms}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Doc:
        """Read the cache form back."""
        return cls(id=data["id"], domain=data["domain"], title=data["title"],
                   description=data["description"], rel_path=data["rel_path"],
                   insight=data["insight"], validated_path=data["validated_path"],
                   error_terms=tuple(data["error_terms"]), terms=data["terms"])


@dataclass(frozen=True)
class Hit:
    """One search result."""

    doc: Doc
    score: float

    def to_dict(self, root: Path) -> dict[str, Any]:
        """The fields ``orf search`` prints (as ``get-frontmatter`` does, plus the score)."""
        return {"id": self.doc.id, "title": self.doc.title, "description": self.doc.description,
                "domain": self.doc.domain, "score": round(self.score, 3),
                "file_path": str(root / self.doc.rel_path)}


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def error_lines(provenance: dict[str, Any] | None, *texts: str) -> list[str]:
    """Error lines a playbook records, most telling first, deduplicated.

    Provenance strings under ``*error*`` / ``*symptom*`` keys come first, then backticked
    spans of ``texts`` (description, trap) that read like an error message.
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
        found.extend(m.group(1) for m in _BACKTICK.finditer(text)
                     if ERRORISH.search(m.group(1)))
    unique = list(dict.fromkeys(line.strip() for line in found if line.strip()))
    return unique[:_MAX_ERROR_LINES]


def make_doc(exp: Any, rel_path: str) -> Doc:
    """Index one parsed ``pipeline.orf.Experience``."""
    errors = error_lines(exp.provenance, exp.description, exp.trap)
    fields = {"title": exp.title, "keywords": " ".join(exp.keywords),
              "description": exp.description, "errors": "\n".join(errors), "trap": exp.trap,
              "domain": exp.domain.replace("-", " ")}
    counts: Counter[str] = Counter()
    for name, weight in _WEIGHTS:
        for term in tokenize(fields[name]):
            counts[term] += weight
    error_terms = tuple(sorted(set(tokenize(" ".join(errors)))))
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


def _parse(root: Path, rel: str) -> Doc | None:
    from ..errors import StoreError
    from ..orf.experience import parse_experience

    try:
        exp = parse_experience(root / rel)
    except StoreError:
        return None  # `orf validate` reports it; search goes on without it
    if not exp.id:
        return None
    return make_doc(exp, rel)


class SearchIndex:
    """The playbooks of one store and their BM25 index."""

    def __init__(self, root: Path, docs: list[Doc], bm25: Bm25Index | None = None) -> None:
        self.root = root
        self.docs = docs
        self.bm25 = bm25 or Bm25Index.build(d.terms for d in docs)
        self.by_id = {d.id: d for d in docs}

    @classmethod
    def load(cls, root: Path, use_cache: bool = True) -> SearchIndex:
        """Index the store at ``root``, reusing the cache for every unchanged file."""
        root = Path(root)
        stamps = scan(root)
        path = cache_file(root)
        cached = _read_cache(path, root) if use_cache else None
        if cached is not None and cached["files"] == stamps:
            bm25 = Bm25Index(postings={t: [(n, tf) for n, tf in p]
                                       for t, p in cached["postings"].items()},
                             lengths=cached["lengths"])
            return cls(root, [Doc.from_json(d) for d in cached["docs"]], bm25)
        old: dict[str, tuple[list[int], dict[str, Any] | None]] = {}
        if cached is not None:
            old_docs = cached["docs"]
            for rel, stamp in cached["files"].items():
                number = cached["doc_of"].get(rel)
                old[rel] = (stamp, old_docs[number] if number is not None else None)
        docs: list[Doc] = []
        doc_of: dict[str, int] = {}
        for rel, stamp in stamps.items():
            previous = old.get(rel)
            if previous is not None and previous[0] == stamp:
                doc = Doc.from_json(previous[1]) if previous[1] is not None else None
            else:
                doc = _parse(root, rel)
            if doc is not None:
                doc_of[rel] = len(docs)
                docs.append(doc)
        index = cls(root, docs)
        if use_cache:
            index._write_cache(path, stamps, doc_of)
        return index

    def _write_cache(self, path: Path, stamps: dict[str, list[int]],
                     doc_of: dict[str, int]) -> None:
        data = {"version": CACHE_VERSION, "root": str(self.root.resolve()), "files": stamps,
                "doc_of": doc_of, "docs": [d.to_json() for d in self.docs],
                "postings": self.bm25.postings, "lengths": self.bm25.lengths}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            with os.fdopen(fd, "wb") as fh:
                fh.write(orjson.dumps(data))
            os.replace(tmp, path)
        except OSError:
            return  # a cache that cannot be written only costs speed

    def search(self, query: str, limit: int = 5) -> list[Hit]:
        """The ``limit`` best playbooks for ``query`` (a task description or an error text)."""
        return self.search_terms(tokenize(query), limit)

    def search_terms(self, terms: list[str], limit: int = 5) -> list[Hit]:
        """Like ``search`` for an already tokenized query."""
        return [Hit(self.docs[n], score) for n, score in self.bm25.top(terms, limit)]


def _read_cache(path: Path, root: Path) -> dict[str, Any] | None:
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if (not isinstance(data, dict) or data.get("version") != CACHE_VERSION
            or data.get("root") != str(root.resolve())):
        return None
    return data
