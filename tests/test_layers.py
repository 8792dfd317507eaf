"""The layering of docs/architecture.md (DESIGN.md section 2), checked on the source: its
layer table against every module's imports, and the kernels' own rules."""
import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "src" / "boostwood"
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield ("." * node.level) + (node.module or "")


def _layer_table():
    """{part: (layer, allowed siblings)} from the table of docs/architecture.md."""
    table = {}
    for line in ARCHITECTURE.read_text().splitlines():
        m = re.match(r"\| (\d) \| `(\w+)` \|[^|]*\|([^|]*)\|$", line)
        if m:
            table[m.group(2)] = (int(m.group(1)), set(re.findall(r"`(\w+)`", m.group(3))))
    return table


def _package_imports():
    """(module path, its top-level part, the top-level parts it imports) for every
    module of the package (relative imports resolved)."""
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).parts
        me = rel[0][:-3] if rel[0].endswith(".py") else rel[0]
        depth = len(rel) - 1
        parts = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = list(rel[:depth - (node.level - 1)])
                mod = base + (node.module.split(".") if node.module else [])
                parts |= {mod[0]} if mod else {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("boostwood."):
                parts.add(node.module.split(".")[1])
            elif isinstance(node, ast.Import):
                parts |= {a.name.split(".")[1] for a in node.names
                          if a.name.startswith("boostwood.")}
        yield path, me, {p[:-3] if p.endswith(".py") else p for p in parts} - {me}


def test_the_layer_table_names_every_part_of_the_package():
    table = _layer_table()
    assert table["_kernels"][0] == 1 and table["sklearn"][0] == 5  # (the table was read)
    parts = {p.stem if p.suffix == ".py" else p.name for p in PKG.iterdir()
             if p.name not in ("__init__.py", "__main__.py", "__pycache__")
             and (p.suffix == ".py" or (p / "__init__.py").exists())}
    assert parts == set(table), f"parts missing from docs/architecture.md: " \
                                f"{sorted(parts - set(table))}, listed but absent: " \
                                f"{sorted(set(table) - parts)}"


def test_imports_only_point_down_the_layer_table():
    table = _layer_table()
    for path, me, parts in _package_imports():
        if me not in table:  # __init__ and __main__ re-export
            continue
        layer, siblings = table[me]
        for other in parts & set(table):
            ok = table[other][0] < layer or other in siblings
            assert ok, f"{path.relative_to(PKG)} ({me}, layer {layer}) imports {other} " \
                       f"(layer {table[other][0]}): not allowed by docs/architecture.md"


@pytest.mark.parametrize("path", sorted((PKG / "_kernels").glob("*.py")), ids=lambda p: p.name)
def test_kernels_import_only_numpy_numba_and_config(path):
    for name in _imports(path):
        # llvmlite is numba's own code generator (used for the prefetch intrinsic)
        ok = name.split(".")[0] in ("numpy", "numba", "llvmlite", "math") or name == ".._config"
        ok = ok or (name.startswith(".") and not name.startswith(".."))  # sibling kernels
        assert ok, f"{path.name} imports {name}"


@pytest.mark.parametrize("path", sorted((PKG / "tree").glob("*.py")), ids=lambda p: p.name)
def test_tree_never_sees_objectives(path):
    assert not any("objectives" in name for name in _imports(path))


def _sibling_imports(folder):
    """{module: the modules of the same folder it imports, anywhere in its body}."""
    graph = {}
    for path in sorted(folder.glob("*.py")):
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    deps.add(node.module.split(".")[0])
                else:
                    deps |= {a.name for a in node.names}
        graph[path.stem] = deps & {p.stem for p in folder.glob("*.py")} - {path.stem}
    return graph


def test_no_import_circle_among_the_tree_modules():
    """No module of tree/ imports, even inside a function, one that imports it back
    (criterion and levels did, through BinnedColumns, now in data/columns.py)."""
    graph = _sibling_imports(PKG / "tree")
    state = {}

    def visit(m, path):
        state[m] = "open"
        for d in sorted(graph[m]):
            assert state.get(d) != "open", f"import circle in tree/: {' -> '.join(path + [d])}"
            if d not in state:
                visit(d, path + [d])
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert graph["levels"] and graph["criterion"]  # the check reads real imports


def _foreign_underscore_reads(path):
    """``obj._name`` in the module at ``path`` where ``_name`` is not the module's own: not
    ``self``'s or ``cls``'s, and not an attribute the module sets on ``self`` or a
    function or class it defines (dunders aside)."""
    tree = ast.parse(path.read_text())
    own = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            own.add(n.name)
        elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) \
                and isinstance(n.value, ast.Name) and n.value.id in ("self", "cls"):
            own.add(n.attr)
    return sorted(f"{path.name}:{n.lineno} {ast.unparse(n)}" for n in ast.walk(tree)
                  if isinstance(n, ast.Attribute) and n.attr.startswith("_")
                  and not n.attr.startswith("__") and n.attr not in own
                  and not (isinstance(n.value, ast.Name) and n.value.id in ("self", "cls")))


def test_no_tree_module_reads_another_modules_underscore_attributes():
    """The splitter seam is sealed: a splitter reads the tree being grown from its
    TreeState record and its own arguments, the levels read the criterion splitter's
    public state, the grower the histogram pool's methods; no module of tree/ reaches
    into another's private attributes (splitters.py and levels.py read about 58 of the
    grower's before)."""
    found = [r for path in sorted((PKG / "tree").glob("*.py"))
             for r in _foreign_underscore_reads(path)]
    assert not found, found
    sample = PKG / "boosting" / "_state.py"  # (the check finds real ones)
    assert any("booster._start" in r for r in _foreign_underscore_reads(sample))


def test_growers_compose_instead_of_subclassing():
    """One grower class: the exact, local approx and criterion growers are a TreeGrower
    composed with their splitter and statistics, not subclasses of it (they were a chain
    of three classes overriding each other's steps). No grower class of tree/ derives
    from another class of tree/ (the tree methods may: ApproxMethod is HistMethod with
    per-tree bins), and each growth path's grower is a TreeGrower."""
    import numpy as np
    from boostwood.data.columns import SortedColumns
    from boostwood.data.validation import as_feature_matrix
    from boostwood.tree import GrowerParams, TreeGrower, exact_grower
    from boostwood.tree.criterion import CriterionStatistics, criterion_grower
    from boostwood.tree.splitters import CriterionSplitter, HistogramSplitter, SortedSplitter
    from boostwood.tree.statistics import GradientStatistics
    defined, derived = set(), []
    for path in sorted((PKG / "tree").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                defined.add(node.name)
                derived += [(path.name, node.name, b.id) for b in node.bases
                            if isinstance(b, ast.Name)]
    assert not [d for d in derived if d[2] in defined and "Grower" in d[1] + d[2]], derived
    X = np.random.default_rng(0).normal(size=(50, 3))
    cols = SortedColumns(as_feature_matrix(X, "data"))
    growers = [(TreeGrower(np.zeros((50, 3), np.uint8), np.full(3, 4), 5, GrowerParams()),
                HistogramSplitter, GradientStatistics),
               (exact_grower(cols, GrowerParams()), SortedSplitter, GradientStatistics),
               (criterion_grower(cols, GrowerParams(), 2, "gini"), CriterionSplitter,
                CriterionStatistics)]
    for grower, splitter, statistics in growers:
        assert type(grower) is TreeGrower
        assert type(grower.splitter) is splitter and type(grower.statistics) is statistics


#: Imports one kernel module in a fresh process whose ``boostwood`` package is an empty
#: stand-in (its ``__init__`` would import half the package) and prints the modules it
#: brought that are neither numpy, numba, llvmlite, the standard library, ``_config`` nor
#: another kernel module.
_IMPORT_ALONE = r"""
import importlib, sys, types
name, src = sys.argv[1], sys.argv[2]
import numba, numpy, llvmlite
pkg = types.ModuleType("boostwood")
pkg.__path__ = [src]
sys.modules["boostwood"] = pkg
before = set(sys.modules)
importlib.import_module("boostwood._kernels." + name)
ok = {"numpy", "numba", "llvmlite"} | set(sys.stdlib_module_names)
bad = sorted(m for m in set(sys.modules) - before
             if m.split(".")[0] not in ok | {"boostwood"}
             or (m.startswith("boostwood.") and m != "boostwood._config"
                 and not m.startswith("boostwood._kernels")))
print(" ".join(bad))
"""


@pytest.mark.parametrize("path", sorted(p for p in (PKG / "_kernels").glob("*.py")
                                        if p.stem != "__init__"), ids=lambda p: p.name)
def test_each_kernel_module_imports_alone_in_a_fresh_process(path):
    """In this process the package is imported already, so an import here proves
    nothing: a fresh one, with the package's ``__init__`` kept out, must import the
    module from numpy, numba and ``_config`` alone."""
    r = subprocess.run([sys.executable, "-c", _IMPORT_ALONE, path.stem, str(PKG)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "", f"{path.name} imports {r.stdout.strip()}"
