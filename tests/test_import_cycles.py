"""Imports go down, never around: the import graph of the engine (``tetrig_addon/``), the Blender
layer (``runtime/``), ``operators/`` and ``panels/`` has no cycle, and no feature's folder
(``cage/``, ``surface/``, ``jiggle/``, in the engine or the Blender layer) imports another's.

The graph is read from the sources with ``ast`` (nothing is imported): every ``import`` and
``from ... import``, inside functions and ``TYPE_CHECKING`` blocks too, relative ones resolved
against the module's package. ``from package import name`` is an arrow to the module ``name``
when the package has one, else to the package's ``__init__``. A package a module stands in is not
an arrow of its own (Python imports it first, whoever imports the module).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import REPO

TREES = ("tetrig_addon", "runtime", "operators", "panels")
FEATURES = ("cage", "surface", "jiggle")


def module_files(root: Path) -> dict[str, Path]:
    """Every module of the trees below ``root`` (the add-on's folder) by dotted name relative to
    it (``runtime.simulation``; a package by its own name, ``tetrig_addon.cage``)."""
    modules = {}
    for tree in TREES:
        for path in sorted((root / tree).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of ``modules`` that module ``name`` (its file ``path``) imports."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out: set[str] = set()

    def known(parts: list[str]) -> str | None:
        """The longest leading part of ``parts`` that is one of the modules."""
        for end in range(len(parts), 0, -1):
            dotted = ".".join(parts[:end])
            if dotted in modules:
                return dotted
        return None

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if (target := known(alias.name.split("."))) is not None:
                    out.add(target)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                origin = base + (node.module.split(".") if node.module else [])
            else:
                origin = (node.module or "").split(".")
            for alias in node.names:
                if (target := known(origin + [alias.name])) is not None:
                    out.add(target)
    out.discard(name)
    return out


def import_graph(root: Path) -> tuple[dict[str, set[str]], dict[str, Path]]:
    modules = module_files(root)
    return {name: imported(name, path, modules) for name, path in modules.items()}, modules


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each set of modules that import one another (a strongly connected component of more than
    one module, Tarjan's algorithm), as one cycle through them: [a, b, ..., a]."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(root: str) -> None:  # iterative: a deep chain of imports needs no recursion limit
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return [_cycle_through(component, graph) for component in components]


def _cycle_through(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """The shortest cycle from the component's first module back to it (breadth first)."""
    members, start = set(component), component[0]
    came_from: dict[str, str | None] = {start: None}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while (before := came_from[path[-1]]) is not None:
                        path.append(before)
                    return [*reversed(path), start]
                if child not in came_from:
                    came_from[child] = node
                    following.append(child)
        frontier = following
    return component  # not reached: a strongly connected component has a cycle through each member


def describe(cycle: list[str], modules: dict[str, Path], root: Path) -> str:
    return " -> ".join(modules[name].relative_to(root).as_posix() for name in cycle)


@pytest.mark.parametrize("tree", [
    "tetrig_addon",
    "runtime",
    "operators",
    "panels",
])
def test_no_import_cycle(tree):
    graph, modules = import_graph(REPO)
    found = [cycle for cycle in cycles(graph) if any(name.split(".")[0] == tree for name in cycle)]
    assert not found, "import cycles:\n" + "\n".join(describe(cycle, modules, REPO) for cycle in found)


def test_no_feature_folder_imports_another():
    graph, modules = import_graph(REPO)

    def feature(name: str) -> str | None:
        parts = name.split(".")
        return parts[1] if len(parts) > 1 and parts[1] in FEATURES else None

    crossings = [f"{modules[name].relative_to(REPO).as_posix()} imports {modules[target].relative_to(REPO).as_posix()}"
                 for name, targets in sorted(graph.items()) for target in sorted(targets)
                 if feature(name) is not None and feature(target) not in (None, feature(name))]
    assert not crossings, "\n".join(crossings)


def test_the_check_finds_a_back_import_inside_a_function(tmp_path):
    """A cycle closed by an import inside a function (or a ``TYPE_CHECKING`` block), through a
    package's ``__init__``, is found and its files named."""
    files = {
        "tetrig_addon/__init__.py": "",
        "tetrig_addon/low.py": "def f():\n    from .feature import thing\n",
        "tetrig_addon/feature/__init__.py": "from .part import thing\n",
        "tetrig_addon/feature/part.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                        "    from .. import low\nthing = 1\n",
        "tetrig_addon/apart.py": "from . import low\n",
    }
    for tree in TREES:
        (tmp_path / tree).mkdir(exist_ok=True)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph, modules = import_graph(tmp_path)
    found = cycles(graph)
    assert [describe(cycle, modules, tmp_path) for cycle in found] == [
        "tetrig_addon/feature/__init__.py -> tetrig_addon/feature/part.py -> tetrig_addon/low.py"
        " -> tetrig_addon/feature/__init__.py"]


# runtime/'s floors, from the bottom: what each may import besides the engine and itself. The kinds
# (cage, surface, jiggle) stand on common/ only; soft bodies as the rigs' colliders, the scene driver
# and the bake on the kinds; the application's wiring on all of them (DESIGN.md: "imports go down,
# never around").
RUNTIME_FLOORS = {
    "common": {"common"},
    "cage": {"common", "cage"},
    "surface": {"common", "surface"},
    "jiggle": {"common", "jiggle"},
    "soft_colliders": {"common", "cage", "surface", "jiggle"},  # soft bodies as the rigs' colliders
    "scene": {"common", "cage", "surface", "jiggle", "soft_colliders"},
    "bake": {"common", "cage", "surface", "jiggle", "soft_colliders", "scene"},
    "app": {"common", "cage", "surface", "jiggle", "soft_colliders", "scene", "bake", "app"},
}


def test_the_blender_layer_imports_only_down():
    graph, modules = import_graph(REPO)

    def part(name: str) -> str | None:
        parts = name.split(".")
        return parts[1] if parts[0] == "runtime" and len(parts) > 1 else None

    upward = [f"{modules[name].relative_to(REPO).as_posix()} imports {modules[target].relative_to(REPO).as_posix()}"
              for name, targets in sorted(graph.items()) for target in sorted(targets)
              if part(name) is not None and part(target) is not None
              and part(target) not in RUNTIME_FLOORS[part(name)]]
    assert not upward, "\n".join(upward)


# Compiled kernels are exempt from the size limit: each is one Numba-compiled unit.
KERNELS = {"tetrig_addon/solver/kernel.py", "tetrig_addon/jiggle/kernel.py", "tetrig_addon/quality/kernel.py",
           "tetrig_addon/cage/locate_kernel.py"}
MAX_MODULE_LINES = 450


def test_no_module_is_over_450_lines():
    long = []
    for tree in (*TREES, "scripts"):
        for path in sorted((REPO / tree).rglob("*.py")):
            name = path.relative_to(REPO).as_posix()
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if name not in KERNELS and lines > MAX_MODULE_LINES:
                long.append(f"{name}: {lines} lines")
    assert not long, "\n".join(long)
