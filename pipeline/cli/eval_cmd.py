"""``orf eval judge`` / ``orf eval detect``: measure the judge and the detector against labels."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
import orjson

from ..exit_codes import EXIT_ERROR, EXIT_OK, EXIT_PARTIAL
from .app import EXIT_CODES_HELP, MODEL_HELP, json_option, main, settings_from
from .backends import BackendChoice, backend_help

BACKENDS = BackendChoice()
EVAL_FILES = ("report.json", "results.json", "reward.txt", "result.json")
"""Names of the evaluation files that live beside trajectories (skipped quietly)."""


@main.group("eval", epilog=EXIT_CODES_HELP)
def eval_group() -> None:
    """Measure the judge and the loop detector against labelled sessions.

    \b
    Examples:
      orf eval judge labels.jsonl runs/
      orf eval judge labels.jsonl runs/ --backend gemini --compare heuristic --json
      orf eval detect tests/data/labels --root ../shared/trajectories
    """


def _backend(name: str, model: str | None, ledger: Path | None) -> Any:
    from ..ledger import Ledger
    from ..llm.registry import get_backend

    settings = settings_from(backend=name, model=model)
    # No ledger unless asked: an evaluation must not fill the user's cache with its runs.
    return get_backend(settings, Ledger(ledger) if ledger is not None else None), settings


@eval_group.command("judge", epilog=EXIT_CODES_HELP)
@click.argument("labels", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--backend", type=BACKENDS, default="heuristic", show_default=True,
              help=backend_help("Judge to measure"))
@click.option("--compare", type=BACKENDS, default=None,
              help="Also measure this backend on the same sessions.")
@click.option("--swebench-reports", "reports", type=click.Path(exists=True, file_okay=False,
              path_type=Path), default=None,
              help="Folder of SWE-bench report.json / Multi-SWE-bench results.json files: "
                   "their resolved flags are labels too.")
@click.option("--model", default=None, help=MODEL_HELP)
@click.option("--ledger", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Cache gemini calls in this SQLite ledger (default: none).")
@click.option("--verbose", "-v", is_flag=True, help="Also list every session with its verdict.")
@json_option
def eval_judge(labels: Path, paths: tuple[Path, ...], backend: str, compare: str | None,
               reports: Path | None, model: str | None, ledger: Path | None, verbose: bool,
               as_json: bool) -> None:
    """Measure the judge on sessions whose true outcome is known.

    LABELS is a JSONL file, one line per session:
    {"session_id": "...", "outcome": "success"} or {"path": "run.traj", "outcome": "failure"}
    (paths relative to LABELS). PATHS are the logs to judge (default: the logs LABELS names).
    Prints coverage (share decided), accuracy on decided, precision and recall of success,
    per format and overall, the confusion table, and how each outcome signal did. Keep
    evaluation files (report.json, results.json) away from PATHS when measuring the other
    signals: the judge reads them when they sit beside a trajectory.

    \b
    Examples:
      orf eval judge labels.jsonl runs/
      orf eval judge labels.jsonl runs/ --backend gemini --compare heuristic
      orf eval judge /dev/null runs/ --swebench-reports logs/run_evaluation/
      orf eval judge labels.jsonl runs/ --json | jq .heuristic.overall.accuracy
    """
    from ..evaluate.judge_eval import agreement_line, evaluate, report_lines
    from ..evaluate.labels import LabelIndex, load_outcome_labels, load_report_labels

    bad: list[str] = []
    found = load_outcome_labels(labels, bad)
    if reports is not None:
        found += load_report_labels(reports, bad)
    index = LabelIndex(found)
    targets = list(paths) or index.label_paths()
    if not found or not targets:
        for line in bad:
            click.echo(f"warning: {line}", err=True)
        what = "no labels" if not found else "no PATHS given and no label names a path"
        click.echo(f"Error: {what} in {labels}", err=True)
        sys.exit(EXIT_ERROR)
    issues: list[Any] = []
    results = []
    for name in dict.fromkeys([backend, *([compare] if compare else [])]):
        engine, settings = _backend(name, model, ledger)
        index.used.clear()
        results.append(evaluate(targets, index, engine, settings, issues))
    unused = index.unused()
    # Evaluation files sit beside the trajectories by design: not logs, not a problem.
    issues = [i for i in issues if not str(i.path).endswith(EVAL_FILES)]
    if as_json:
        doc: dict[str, Any] = {"labels": len(found), "unmatched_labels": len(unused)}
        for name, ev in zip(dict.fromkeys([backend, *([compare] if compare else [])]), results,
                            strict=True):
            doc[name] = ev.as_dict()
        click.echo(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
    else:
        for ev in results:
            click.echo("\n".join(report_lines(ev, verbose=verbose)) + "\n")
        if len(results) == 2:
            click.echo(agreement_line(results[0], results[1]))
        click.echo(f"{len(found)} labels, {results[0].overall.n} judged, "
                   f"{len(unused)} without a session")
    for line in bad:
        click.echo(f"warning: {line}", err=True)
    for issue in issues:
        click.echo(f"{'skipped' if issue.fatal else 'warning'}: {issue}", err=True)
    if not results[0].runs:
        click.echo("Error: no labelled session found in PATHS", err=True)
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_PARTIAL if bad or any(i.fatal for i in issues) else EXIT_OK)


def _label_sets(targets: tuple[Path, ...], bad: list[str],
                skip: Path | None = None) -> dict[str, list[dict[str, Any]]]:
    """Label files grouped by folder (each folder is one set), bad files reported."""
    import json

    from ..evaluate.detect_scores import check_label

    sets: dict[str, list[dict[str, Any]]] = {}
    for target in targets:
        files = [target] if target.is_file() else sorted(target.rglob("*.json"))
        for f in files:
            if skip is not None and f.resolve().is_relative_to(skip.resolve()):
                continue  # the second labeller's files are compared, not scored
            try:
                label = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                bad.append(f"{f}: not a label file ({exc})")
                continue
            why = check_label(label)
            if why is not None:
                bad.append(f"{f}: not a label file ({why})")
                continue
            label["name"] = f.stem
            sets.setdefault(str(f.parent), []).append(label)
    return sets


@eval_group.command("detect", epilog=EXIT_CODES_HELP)
@click.argument("labels", nargs=-1, required=True,
                type=click.Path(exists=True, path_type=Path))
@click.option("--root", type=click.Path(exists=True, file_okay=False, path_type=Path),
              default=Path("."), show_default=True,
              help="Folder the labels' \"file\" paths are relative to.")
@click.option("--second", type=click.Path(exists=True, file_okay=False, path_type=Path),
              default=None, help="Folder of a second labeller's files, for agreement (kappa).")
@click.option("--verbose", "-v", is_flag=True,
              help="One row per session, with its false positives and negatives.")
@json_option
def eval_detect(labels: tuple[Path, ...], root: Path, second: Path | None, verbose: bool,
                as_json: bool) -> None:
    """Measure the loop detector on hand-labelled repeats (the tests/data/labels/ format).

    LABELS are label files or folders (each folder is one set, e.g. train and heldout/).
    Prints, per set, per format and overall, precision / recall / F1 of repeats and wasted
    steps for the detector and for the naive "identical action" baseline.

    \b
    Examples:
      orf eval detect tests/data/labels --root ../shared/trajectories
      orf eval detect tests/data/labels/heldout --root ../shared/trajectories --json
    """
    from ..evaluate.detect_scores import Group, row, score_set, set_lines

    bad: list[str] = []
    sets = _label_sets(labels, bad, second)
    every = Group()
    doc: dict[str, Any] = {"sets": {}}
    missing = 0
    for name, group in sets.items():
        result = score_set(name, group, root, second, bad.append)
        every.merge(result.total)
        missing += len(result.missing)
        doc["sets"][name] = {"total": result.total.as_dict(), "missing": result.missing,
                             "formats": {k: g.as_dict() for k, g in result.formats.items()}}
        if as_json:
            continue
        click.echo(f"-- {name}")
        # The same table code as bench/detect_labels.py prints (one scoring path).
        for line in set_lines(result, verbose=verbose,
                              missing=f"session not found under {root}"):
            click.echo(line)
    doc["all"] = every.as_dict()
    if as_json:
        click.echo(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
    elif len(sets) > 1:
        click.echo("--")
        click.echo(row("all sets", every))
    for line in bad:
        click.echo(f"warning: {line}", err=True)
    if not every.sessions:
        click.echo("Error: no labelled session found (check --root)", err=True)
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_PARTIAL if bad or missing else EXIT_OK)
