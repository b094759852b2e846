"""The ORF store on disk: read, create, remove and repair playbooks, safely.

Every write happens under the store lock (``<parent>/.orf/<store>.lock``) and goes through
``atomic_write``. A new experience is written first, then its INDEX.md line: a crash between
the two leaves a complete but unlisted file, which ``repair`` lists (never a dangling link).
"""

from __future__ import annotations

import datetime
import re
from pathlib import Path
from typing import Any

import orjson

from .. import fsutil
from ..errors import StoreError
from .experience import parse_experience
from .frontmatter import dump_mapping_block, split_frontmatter
from .ids import EXP_ID_RE, check_domain, check_exp_id, new_experience_id
from .index import (
    add_category,
    empty_index,
    entry_line,
    insert_entry,
    parse_index,
    remove_entry,
    set_last_updated,
)
from .records import Category, Experience, IndexEntry
from .render import render_body, render_frontmatter
from .validate import COMPLEXITIES, MAX_DESCRIPTION, experience_files, validate_experience_text


def today() -> datetime.date:
    """The local calendar date (ids and ``created_at`` follow the author's day)."""
    return datetime.datetime.now().astimezone().date()


def _one_line(name: str, value: str) -> str:
    value = value.strip()
    if not value:
        raise StoreError(f"{name} must not be empty")
    if "\n" in value or "\r" in value:
        raise StoreError(f"{name} must be a single line")
    return value


def _json_plain(value: dict[str, Any]) -> dict[str, Any]:
    # Provenance must round-trip through YAML: reduce it to JSON types (dates become strings).
    plain = orjson.loads(orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS))
    if not isinstance(plain, dict):
        raise StoreError("provenance must be a mapping")
    return plain


class Store:
    """An ORF store folder: ``INDEX.md`` plus ``<domain>/EXP-YYYYMMDD-NNNN.md`` files."""

    def __init__(self, root: Path, lock_timeout: float = 60.0) -> None:
        self.root = Path(root)
        self.lock_timeout = lock_timeout

    @property
    def index_path(self) -> Path:
        """Where INDEX.md lives."""
        return self.root / "INDEX.md"

    def exists(self) -> bool:
        """True when the store has an INDEX.md."""
        return self.index_path.is_file()

    def _lock(self) -> Any:
        return fsutil.store_lock(self.root, self.lock_timeout)

    def init(self) -> None:
        """Create an empty store (INDEX.md, spec_version "0.2", no categories); idempotent."""
        with self._lock():
            if not self.exists():
                fsutil.atomic_write(self.index_path, empty_index(today().isoformat()))

    # ---- reading ----

    def _index_text(self) -> str:
        if not self.exists():
            raise StoreError(f"no ORF store at {self.root} (INDEX.md not found); "
                             f"create one with `orf init --store {self.root}`")
        try:
            return self.index_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise StoreError(f"{self.index_path}: cannot read: {exc}") from exc

    def categories(self) -> list[Category]:
        """The categories listed in INDEX.md's frontmatter."""
        return parse_index(self._index_text(), str(self.index_path)).categories()

    def index_entries(self) -> list[IndexEntry]:
        """The entry lines of INDEX.md, in file order."""
        return parse_index(self._index_text(), str(self.index_path)).entries

    def experiences(self) -> list[Experience]:
        """Every EXP file of the store, parsed; files that cannot be parsed are skipped.

        ``validate_store`` reports the skipped ones; readers keep going without them.
        """
        out = []
        for path in experience_files(self.root):
            if not EXP_ID_RE.match(path.stem):
                continue
            try:
                out.append(parse_experience(path))
            except StoreError:
                continue
        return out

    def _find(self, exp_id: str) -> Path:
        check_exp_id(exp_id)
        for path in sorted(self.root.glob(f"*/{exp_id}.md")):
            if not path.parent.name.startswith("."):
                return path
        raise StoreError(f"experience {exp_id} not found in {self.root}")

    def read_experience(self, exp_id: str) -> Experience:
        """Parse the experience with id ``exp_id``.

        Raises:
            InvalidIdentifier: When ``exp_id`` is not ``EXP-YYYYMMDD-NNNN``.
            StoreError: When no such file exists or it cannot be parsed.
        """
        return parse_experience(self._find(exp_id))

    def _all_ids(self, index_text: str) -> list[str]:
        ids = [p.stem for p in experience_files(self.root)]
        ids += [e.exp_id for e in parse_index(index_text, str(self.index_path)).entries]
        return ids

    # ---- writing ----

    def create_experience(
        self,
        *,
        domain: str,
        title: str,
        description: str,
        keywords: list[str],
        complexity: str,
        objective: str,
        trap: str,
        insight: str,
        validated_path: str,
        checklist: list[str],
        domain_title: str | None = None,
        domain_description: str | None = None,
        provenance: dict[str, Any] | None = None,
        created_at: datetime.date | None = None,
    ) -> Experience:
        """Write a new playbook and list it in INDEX.md (a new category when needed).

        The id is the highest sequence of the creation date across the store plus one,
        allocated under the store lock, so concurrent writers never collide.

        Raises:
            InvalidIdentifier: When ``domain`` is not a lowercase slug.
            StoreError: When a field is empty or malformed, or the store is missing.
            LockTimeout: When another writer holds the lock too long.
        """
        check_domain(domain)
        title = _one_line("title", title)
        description = description.strip()
        if not description:
            raise StoreError("description must not be empty")
        if len(description) > MAX_DESCRIPTION:
            raise StoreError(f"description is {len(description)} characters long "
                             f"(max {MAX_DESCRIPTION})")
        if complexity not in COMPLEXITIES:
            raise StoreError(f"complexity {complexity!r} must be one of low, medium, high")
        keywords = [k.strip() for k in keywords if k.strip()]
        if not keywords:
            raise StoreError("give at least one keyword")
        checklist = [_one_line("checklist item", item) for item in checklist]
        if not checklist:
            raise StoreError("give at least one checklist item")
        for name, value in (("objective", objective), ("trap", trap), ("insight", insight),
                            ("validated path", validated_path)):
            if not value.strip():
                raise StoreError(f"{name} must not be empty")
        plain_provenance = _json_plain(provenance) if provenance is not None else None
        day = created_at or today()
        body = render_body(objective=objective, trap=trap, insight=insight,
                           validated_path=validated_path, checklist=checklist)
        with self._lock():
            index_text = self._index_text()
            exp_id = new_experience_id(day, self._all_ids(index_text))
            text = render_frontmatter(
                exp_id=exp_id, title=title, description=description, domain=domain,
                keywords=keywords, complexity=complexity, created_at=day.isoformat(),
                provenance=plain_provenance,
            ) + body
            path = self.root / domain / f"{exp_id}.md"
            problems = validate_experience_text(str(path), text, domain, exp_id)
            if problems:
                # e.g. a '## ' heading inside a section would split it: refuse, write nothing.
                raise StoreError(f"the new experience would be invalid: {problems[0].message}")
            new_index = self._with_entry(index_text, domain, exp_id, title, domain_title,
                                         domain_description)
            fsutil.atomic_write(path, text)
            fsutil.atomic_write(self.index_path, set_last_updated(new_index, today().isoformat()))
        return parse_experience(path, text)

    def _with_entry(self, index_text: str, domain: str, exp_id: str, summary: str,
                    domain_title: str | None, domain_description: str | None) -> str:
        doc = parse_index(index_text, str(self.index_path))
        known = {c.id: c for c in doc.categories()}
        if domain in known:
            name = known[domain].name
        else:
            name = _one_line("domain title", domain_title or domain.replace("-", " ").title())
            if "`" in name:
                raise StoreError("domain title must not contain backticks")
            desc = (domain_description or f"Playbooks about {name}.").strip()
            index_text = add_category(index_text, Category(domain, name, desc))
        return insert_entry(index_text, domain, entry_line(exp_id, domain, summary), name)

    def remove_experience(self, exp_id: str) -> Experience:
        """Delete an experience file and its INDEX.md line; return what was removed."""
        with self._lock():
            path = self._find(exp_id)
            experience = parse_experience(path)
            index_text = self._index_text()
            new_index = remove_entry(index_text, exp_id)
            path.unlink()
            if new_index != index_text:
                fsutil.atomic_write(self.index_path,
                                    set_last_updated(new_index, today().isoformat()))
        return experience

    def update_provenance(self, exp_id: str, provenance: dict[str, Any]) -> None:
        """Replace the ``provenance`` frontmatter key of one file; the rest stays byte-identical."""
        plain = _json_plain(provenance)
        with self._lock():
            path = self._find(exp_id)
            text = path.read_text(encoding="utf-8")
            split = split_frontmatter(text)
            if split is None:
                raise StoreError(f"{path}:1: no YAML frontmatter")
            kept: list[str] = []
            skipping = False
            for line in split.yaml_text.splitlines(keepends=True):
                if re.match(r"provenance\s*:", line):
                    skipping = True
                    continue
                if skipping and (not line.strip() or line[0] in " \t"):
                    continue
                skipping = False
                kept.append(line)
            if kept and not kept[-1].endswith("\n"):
                kept[-1] += "\n"
            new_yaml = "".join(kept) + dump_mapping_block("provenance", plain)
            new_text = text[: split.yaml_start] + new_yaml + text[split.yaml_end:]
            if parse_experience(path, new_text).provenance != plain:
                raise StoreError(f"{path}: could not rewrite provenance safely; file unchanged")
            fsutil.atomic_write(path, new_text)

    def repair(self) -> list[str]:
        """Fix what a killed writer can leave behind; return one message per action.

        Removes stale temp files and lists in INDEX.md every valid EXP file missing from it
        (a crash between the file write and the INDEX write). INDEX lines whose file is gone
        are reported but kept: the write order makes them impossible after a crash, so they
        come from a hand edit or a deletion a person should review.
        """
        messages: list[str] = []
        with self._lock():
            removed = fsutil.remove_stale_temps(self.root)
            if removed:
                messages.append(f"removed {removed} stale temp file(s)")
            index_text = self._index_text()
            original = index_text
            doc = parse_index(index_text, str(self.index_path))
            listed = {e.rel_path for e in doc.entries}
            for path in experience_files(self.root):
                rel = f"{path.parent.name}/{path.name}"
                if rel in listed or not EXP_ID_RE.match(path.stem):
                    continue
                problems = validate_experience_text(str(path), path.read_text(encoding="utf-8"),
                                                    path.parent.name, path.stem)
                if problems:
                    messages.append(f"{rel}: not listed and not valid, left alone "
                                    f"({problems[0].message})")
                    continue
                exp = parse_experience(path)
                index_text = self._with_entry(index_text, exp.domain, exp.id, exp.title,
                                              None, None)
                messages.append(f"{rel}: added to INDEX.md")
            for entry in doc.entries:
                if not (self.root / entry.rel_path).is_file():
                    messages.append(f"INDEX.md:{entry.line}: {entry.exp_id} links to a missing "
                                    "file; kept (remove the line by hand if intended)")
            if index_text != original:
                fsutil.atomic_write(self.index_path,
                                    set_last_updated(index_text, today().isoformat()))
        return messages


def init_store(root: Path) -> Store:
    """Create an empty store at ``root`` (no-op when INDEX.md exists) and return it."""
    store = Store(root)
    store.init()
    return store
