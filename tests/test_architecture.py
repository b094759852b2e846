"""Shape rules read from the source: SQL only in the ledger, no import cycle, no settings
read off a backend."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "pipeline"
SQL_CALLS = frozenset({"execute", "executemany", "executescript"})
LEDGER = PACKAGE / "ledger"


def _modules() -> Iterator[tuple[str, Path, ast.Module]]:
    """``(dotted name, path, tree)`` of every module of the package."""
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path, ast.parse(path.read_text(), str(path))


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(PACKAGE.parent)}:{getattr(node, 'lineno', 0)}"


def test_sql_runs_only_in_the_ledger() -> None:
    found = [
        f"{_where(path, node)}: .{node.func.attr}("
        for _name, path, tree in _modules() if LEDGER not in path.parents
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        and node.func.attr in SQL_CALLS
    ]
    assert found == []


def _names_a_backend(node: ast.expr) -> bool:
    """``backend``, ``self.backend``, ``model_backend``: an expression naming a backend."""
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return "backend" in name.lower()


def settings_reads(tree: ast.Module) -> list[ast.AST]:
    """``getattr(x, "settings")`` anywhere, and ``<backend>.settings`` read."""
    return [
        node for node in ast.walk(tree)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "getattr" and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant) and node.args[1].value == "settings")
        or (isinstance(node, ast.Attribute) and node.attr == "settings"
            and _names_a_backend(node.value))
    ]


def test_the_settings_rule_sees_both_forms() -> None:
    tree = ast.parse("a = backend.settings.max_attempts\nb = self.backend.settings\n"
                     "c = getattr(x, 'settings', None)\nd = self.settings\ne = run.settings\n")
    assert sorted(getattr(n, "lineno", 0) for n in settings_reads(tree)) == [1, 2, 3]


def test_no_stage_reads_settings_off_a_backend() -> None:
    # A backend's settings are its own; the stage code gets them passed explicitly.
    found = [_where(path, node) for _name, path, tree in _modules()
             for node in settings_reads(tree)]
    assert found == []


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _top_level_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Imports run when the module loads: not in functions, not under ``if TYPE_CHECKING``."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and not _is_type_checking(node):
            yield from _top_level_imports(node.body)
            yield from _top_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody,
                          *(h.body for h in node.handlers)):
                yield from _top_level_imports(block)


def _all_imports(body: list[ast.stmt], *,
                 typing: bool = False) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import that can run: also the deferred ones inside functions (``typing``: and
    the ones under ``if TYPE_CHECKING``, which only the type checker runs)."""
    for node in body:
        if isinstance(node, ast.If) and _is_type_checking(node) and not typing:
            yield from _all_imports(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        for block in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(node, block, None)
            if isinstance(inner, list):
                yield from _all_imports([n for n in inner if isinstance(n, ast.stmt)]
                                        + [s for h in inner if isinstance(h, ast.excepthandler)
                                           for s in h.body], typing=typing)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base.pop()
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def import_graph(*, deferred: bool = False, typing: bool = False) -> dict[str, set[str]]:
    """Module -> the package modules it imports at load time (``deferred``: or ever;
    ``typing``: or ever, counting the imports only the type checker runs)."""
    mods = {name: (path, tree) for name, path, tree in _modules()}
    graph: dict[str, set[str]] = {name: set() for name in mods}
    for name, (path, tree) in mods.items():
        imports = (_all_imports(tree.body, typing=typing) if deferred or typing
                   else _top_level_imports(tree.body))
        for node in imports:
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = _resolve(name, path.name == "__init__.py", node)
                # ``from pkg import mod`` imports the submodule; ``from mod import name`` mod.
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                           for a in node.names]
            graph[name].update(t for t in targets if t in mods and t != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]


def test_the_import_graph_sees_relative_and_package_imports() -> None:
    graph = import_graph()
    assert "pipeline.ledger" in graph["pipeline.review"]  # from .ledger import Ledger
    assert "pipeline.stages.dedupe" in graph["pipeline.stages.write"]  # from .dedupe import
    assert "pipeline.errors" in graph["pipeline.stages.write"]  # from ..errors import


def test_no_import_cycle_among_pipeline_modules() -> None:
    assert cycles(import_graph()) == []


def test_deferred_imports_close_no_other_cycle() -> None:
    # The llm/ backends and draft/heuristic_draft imported each other this way before.
    graph = import_graph(deferred=True)
    assert "pipeline.stages.dedupe" in graph["pipeline.review"]  # a deferred import is seen
    assert cycles(graph) == []


LOWER_LAYERS = {
    # a layer -> the layers it must never import (the arrows point one way)
    "stages": {"cli", "trends"},
    "trends": {"cli", "stages"},
    "llm": {"cli", "stages"},
    "ledger": {"cli", "stages", "trends"},
    "history": {"cli", "stages", "trends"},
    "lessons": {"cli", "stages", "trends"},
    "detect": {"cli", "stages", "trends", "llm"},
    "formats": {"cli", "stages", "trends", "llm"},
}
"""``pipeline.<layer>`` must not import these, even inside a function."""

TYPED_LAYERS = {"llm"}
"""Layers whose ``if TYPE_CHECKING`` imports count too: the providers do not name a stage's
types either (their result records live in ``pipeline.results``)."""

LAYER_EXCEPTIONS: set[tuple[str, str]] = set()


def test_layers_point_one_way() -> None:
    ever, typed = import_graph(deferred=True), import_graph(typing=True)
    wrong = set()
    for module in ever:
        layer = module.split(".")[1] if module.count(".") else ""
        for target in typed[module] if layer in TYPED_LAYERS else ever[module]:
            other = target.split(".")[1] if target.count(".") else ""
            if other in LOWER_LAYERS.get(layer, set()):
                wrong.add((module, target))
    assert wrong == LAYER_EXCEPTIONS


def test_typing_counts_the_type_checking_imports() -> None:
    tree = ast.parse("import a\nif TYPE_CHECKING:\n    import b\nelse:\n    import c\n"
                     "def f():\n    import d\n")

    def names(**kw: bool) -> list[str]:
        return [a.name for node in _all_imports(tree.body, **kw)
                for a in node.names if isinstance(node, ast.Import)]

    assert names() == ["a", "c", "d"]
    assert names(typing=True) == ["a", "b", "c", "d"]


MAX_LINES = 500
"""Lines a module of the package may have (issue 28 split the six that had more)."""


def test_no_module_is_past_the_line_limit() -> None:
    # A module past MAX_LINES holds more than one concern: split it by concern, not by size.
    sizes = {str(path.relative_to(PACKAGE.parent)): len(path.read_text().splitlines())
             for _name, path, _tree in _modules()}
    assert len(sizes) > 100  # the rule sees the package
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def _families() -> list[tuple[str, ast.Module]]:
    """Detector families: the modules under ``detect/`` that register one (``@register``)."""
    return [(name, tree) for name, _path, tree in _modules()
            if name.startswith("pipeline.detect.") and any(
                isinstance(d, ast.Call) and getattr(d.func, "id", "") == "register"
                for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
                for d in node.decorator_list)]


def test_no_family_reads_the_command_line_itself() -> None:
    # Families read the classified step (``Info``: its segments, filters, folder) and the
    # table of programs; splitting a command line is the classifier's, done once per step.
    graph = import_graph(deferred=True)
    families = [name for name, _tree in _families()]
    assert len(families) >= 15  # the rule sees the families
    assert [f for f in families if "pipeline.detect.shell" in graph[f]] == []


def test_nothing_below_the_cli_imports_it() -> None:
    # The console script (``entry``, ``__main__``) starts the CLI; everything else is under it.
    graph = import_graph(deferred=True)
    above = ("pipeline.cli", "pipeline.__main__", "pipeline.entry")
    below = [name for name in graph if not name.startswith(above)]
    assert [(m, t) for m in below for t in sorted(graph[m]) if t.startswith("pipeline.cli")] == []
