"""Strict validation of an ORF store; every problem comes back as ``path:line: message``.

Stricter than ORF itself: typed frontmatter, the five sections in order, a Core Principle,
at least one open checklist item, and INDEX.md and the files agreeing both ways.
"""

from __future__ import annotations

import datetime
import re
from pathlib import Path
from typing import Any

from ..errors import StoreError
from .experience import CORE_PRINCIPLE, SECTION_TITLES, split_sections
from .frontmatter import Split, key_line, load_yaml, split_frontmatter
from .ids import DOMAIN_RE, EXP_ID_RE
from .index import IndexDoc, parse_index
from .records import Problem

REQUIRED_KEYS = ("id", "title", "description", "domain", "keywords", "complexity", "created_at")
OPTIONAL_KEYS = ("provenance",)
COMPLEXITIES = ("low", "medium", "high")
SPEC_VERSIONS = ("0.1", "0.2")
MAX_DESCRIPTION = 1024
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
_OPEN_ITEM = re.compile(r"\s*- \[ \] \S")


def is_real_date(value: Any) -> bool:
    """True for a ``datetime.date`` or a ``YYYY-MM-DD`` string naming a real day."""
    if isinstance(value, datetime.datetime):
        return False
    if isinstance(value, datetime.date):
        return True
    if not isinstance(value, str) or not _ISO_DATE.match(value):
        return False
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _load(path: str, text: str) -> tuple[Split | None, Any, list[Problem]]:
    split = split_frontmatter(text)
    if split is None:
        return None, None, [Problem(path, 1, "no YAML frontmatter (must start with a '---' line "
                                               "and close with another)")]
    try:
        meta = load_yaml(split.yaml_text, where=path, first_line=split.first_line)
    except StoreError as exc:
        _, line, message = _split_error(str(exc), path)
        return split, None, [Problem(path, line, message)]
    if not isinstance(meta, dict):
        return split, None, [Problem(path, split.first_line, "frontmatter is not a YAML mapping")]
    return split, meta, []


def _split_error(message: str, path: str) -> tuple[str, int | None, str]:
    # load_yaml formats "<path>:<line>: <message>"; take it apart again for a Problem.
    rest = message[len(path) + 1:] if message.startswith(path + ":") else message
    line_text, _, msg = rest.partition(": ")
    return path, int(line_text) if line_text.isdigit() else None, msg.strip()


def validate_experience_text(path: str, text: str, folder: str, stem: str) -> list[Problem]:
    """Problems of one experience file.

    Args:
        path: Path to print in problems.
        text: File content.
        folder: Name of the folder it sits in (must equal ``domain``).
        stem: File name without ``.md`` (must equal ``id``).
    """
    split, meta, problems = _load(path, text)
    if split is None or meta is None:
        return problems
    assert isinstance(meta, dict)

    def at(key: str) -> int:
        return key_line(split, key)

    for key in REQUIRED_KEYS:
        if key not in meta:
            problems.append(Problem(path, split.first_line, f"missing frontmatter key '{key}'"))
    for key in meta:
        if key not in REQUIRED_KEYS and key not in OPTIONAL_KEYS:
            problems.append(Problem(path, at(str(key)), f"unknown frontmatter key '{key}'"))
    exp_id = meta.get("id")
    if "id" in meta:
        if not isinstance(exp_id, str) or not EXP_ID_RE.match(exp_id):
            problems.append(Problem(path, at("id"), f"id {exp_id!r} does not match "
                                                     "EXP-YYYYMMDD-NNNN"))
        elif exp_id != stem:
            problems.append(Problem(path, at("id"), f"id '{exp_id}' does not match the file "
                                                     f"name '{stem}.md'"))
    for key in ("title", "description"):
        value = meta.get(key)
        if key in meta and (not isinstance(value, str) or not value.strip()):
            problems.append(Problem(path, at(key), f"{key} must be a non-empty string"))
    description = meta.get("description")
    if isinstance(description, str) and len(description) > MAX_DESCRIPTION:
        problems.append(Problem(path, at("description"), f"description is {len(description)} "
                                f"characters long (max {MAX_DESCRIPTION})"))
    domain = meta.get("domain")
    if "domain" in meta and domain != folder:
        problems.append(Problem(path, at("domain"), f"domain {domain!r} does not match the "
                                                     f"folder '{folder}'"))
    keywords = meta.get("keywords")
    if "keywords" in meta and (
        not isinstance(keywords, list) or not keywords
        or not all(isinstance(k, str) and k.strip() for k in keywords)
    ):
        problems.append(Problem(path, at("keywords"),
                                "keywords must be a non-empty list of strings"))
    complexity = meta.get("complexity")
    if "complexity" in meta and complexity not in COMPLEXITIES:
        problems.append(Problem(path, at("complexity"), f"complexity {complexity!r} must be one "
                                                         "of low, medium, high"))
    created = meta.get("created_at")
    if "created_at" in meta and not is_real_date(created):
        problems.append(Problem(path, at("created_at"), f"created_at {created!r} is not a date "
                                                         "(YYYY-MM-DD)"))
    if "provenance" in meta and not isinstance(meta["provenance"], dict):
        problems.append(Problem(path, at("provenance"), "provenance must be a mapping"))
    problems += _check_sections(path, split)
    return problems


def _check_sections(path: str, split: Split) -> list[Problem]:
    problems: list[Problem] = []
    _, sections = split_sections(split.body, split.body_line)
    titles = [s.title for s in sections]
    for section in sections:
        if section.title not in SECTION_TITLES:
            problems.append(Problem(path, section.line, f"unexpected section '## {section.title}'"
                                    " (only the five ORF sections are allowed at level 2)"))
    expected = [t for t in titles if t in SECTION_TITLES]
    for title in SECTION_TITLES:
        if expected.count(title) > 1:
            line = [s.line for s in sections if s.title == title][1]
            problems.append(Problem(path, line, f"section '## {title}' appears twice"))
        elif title not in expected:
            problems.append(Problem(path, None, f"missing section '## {title}'"))
    present = [t for t in SECTION_TITLES if t in expected]
    if [t for i, t in enumerate(expected) if t not in expected[:i]] != present:
        first_bad = next(s for s in sections if s.title in SECTION_TITLES)
        problems.append(Problem(path, first_bad.line, "sections are out of order (expected "
                                "Objective, The Trap, Abstracted Insight, Validated Path, "
                                "Verification Checklist)"))
    by_title = {s.title: s for s in sections}
    for title, section in by_title.items():
        if title in SECTION_TITLES and not section.text:
            problems.append(Problem(path, section.line, f"section '## {title}' is empty"))
    insight = by_title.get(SECTION_TITLES[2])
    if insight and insight.text and not insight.text.startswith(CORE_PRINCIPLE):
        problems.append(Problem(path, insight.line + 1, f"section 3 must start with "
                                f"'{CORE_PRINCIPLE}'"))
    checklist = by_title.get(SECTION_TITLES[4])
    if checklist and not any(_OPEN_ITEM.match(line) for line in checklist.text.splitlines()):
        problems.append(Problem(path, checklist.line, "the checklist has no '- [ ] ' item"))
    return problems


def _check_index(path: str, doc: IndexDoc) -> list[Problem]:
    problems: list[Problem] = []
    split, meta = doc.split, doc.meta
    version = meta.get("spec_version")
    if not isinstance(version, str) or version not in SPEC_VERSIONS:
        problems.append(Problem(path, key_line(split, "spec_version"),
                                f"spec_version {version!r} must be one of "
                                + ", ".join(f'"{v}"' for v in SPEC_VERSIONS)))
    if not is_real_date(meta.get("last_updated")):
        problems.append(Problem(path, key_line(split, "last_updated"),
                                f"last_updated {meta.get('last_updated')!r} is not a date "
                                "(YYYY-MM-DD)"))
    raw = meta.get("categories")
    line = key_line(split, "categories")
    seen: set[str] = set()
    if raw is not None and not isinstance(raw, list):
        problems.append(Problem(path, line, "categories must be a list"))
        raw = []
    for position, item in enumerate(raw or [], start=1):
        if not isinstance(item, dict):
            problems.append(Problem(path, line, f"category #{position} is not a mapping"))
            continue
        for key in ("id", "name", "description"):
            if not isinstance(item.get(key), str) or not item[key].strip():
                problems.append(Problem(path, line, f"category #{position} needs a non-empty "
                                                    f"string '{key}'"))
        cat_id = item.get("id")
        if isinstance(cat_id, str):
            if not DOMAIN_RE.match(cat_id):
                problems.append(Problem(path, line, f"category id {cat_id!r} is not a lowercase "
                                                    "slug"))
            if cat_id in seen:
                problems.append(Problem(path, line, f"category id '{cat_id}' is listed twice"))
            seen.add(cat_id)
    names = {c.id: c.name for c in doc.categories()}
    for heading in doc.headings:
        if heading.id not in names:
            problems.append(Problem(path, heading.line, f"section for category '{heading.id}' "
                                    "which is not in the frontmatter categories"))
        elif names[heading.id] != heading.name:
            problems.append(Problem(path, heading.line, f"section name '{heading.name}' differs "
                                    f"from the category name '{names[heading.id]}'"))
    for number, text in doc.malformed:
        problems.append(Problem(path, number, f"malformed entry line {text.strip()!r} (expected "
                                "'* [EXP-ID](domain/EXP-ID.md): summary')"))
    return problems


def _check_entries(root: Path, path: str, doc: IndexDoc) -> list[Problem]:
    problems: list[Problem] = []
    seen: set[str] = set()
    for entry in doc.entries:
        if not entry.domain:
            problems.append(Problem(path, entry.line, f"entry {entry.exp_id} is outside any "
                                    "'## Category:' section"))
            continue
        if not EXP_ID_RE.match(entry.exp_id):
            problems.append(Problem(path, entry.line, f"entry id {entry.exp_id!r} does not match "
                                                      "EXP-YYYYMMDD-NNNN"))
            continue
        if entry.exp_id in seen:
            problems.append(Problem(path, entry.line, f"{entry.exp_id} is listed twice"))
        seen.add(entry.exp_id)
        expected = f"{entry.domain}/{entry.exp_id}.md"
        if entry.rel_path != expected:
            problems.append(Problem(path, entry.line, f"link '{entry.rel_path}' should be "
                                                      f"'{expected}'"))
        elif not (root / expected).is_file():
            problems.append(Problem(path, entry.line, f"link '{entry.rel_path}' does not resolve "
                                                      "to a file"))
    return problems


def experience_files(root: Path) -> list[Path]:
    """Every ``*.md`` directly inside a non-hidden sub-folder of ``root``, sorted."""
    if not root.is_dir():
        return []
    return sorted(
        p for folder in root.iterdir() if folder.is_dir() and not folder.name.startswith(".")
        for p in folder.glob("*.md") if not p.name.startswith(".")
    )


def validate_store(root: Path) -> list[Problem]:
    """Check a whole store: INDEX.md, every experience file, and that the two agree.

    Args:
        root: The store folder (holding INDEX.md).

    Returns:
        Problems in file order; empty when the store is valid.
    """
    index_path = root / "INDEX.md"
    ipath = str(index_path)
    if not index_path.is_file():
        return [Problem(ipath, None, "INDEX.md not found (create a store with `orf init`)")]
    try:
        text = index_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [Problem(ipath, None, f"cannot read: {exc}")]
    split, meta, problems = _load(ipath, text)
    doc: IndexDoc | None = None
    if split is not None and meta is not None:
        doc = parse_index(text, ipath)
        problems += _check_index(ipath, doc)
        problems += _check_entries(root, ipath, doc)
    listed = {e.rel_path for e in doc.entries} if doc else set()
    for file in experience_files(root):
        fpath = str(file)
        rel = f"{file.parent.name}/{file.name}"
        if not DOMAIN_RE.match(file.parent.name):
            problems.append(Problem(fpath, None, f"folder '{file.parent.name}' is not a "
                                                 "lowercase domain slug"))
        if not EXP_ID_RE.match(file.stem):
            problems.append(Problem(fpath, None, "file name does not match "
                                                 "EXP-YYYYMMDD-NNNN.md"))
            continue
        try:
            content = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(Problem(fpath, None, f"cannot read: {exc}"))
            continue
        problems += validate_experience_text(fpath, content, file.parent.name, file.stem)
        if doc is not None and rel not in listed:
            problems.append(Problem(fpath, None, "not listed in INDEX.md (run `orf validate "
                                                 "--repair` to add it)"))
    return problems
