"""The layering rules of DESIGN.md section 2, checked on the source."""
import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "src" / "boostwood"


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield ("." * node.level) + (node.module or "")


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


def test_every_kernel_module_imports_on_its_own():
    import importlib
    for path in (PKG / "_kernels").glob("*.py"):
        importlib.import_module(f"boostwood._kernels.{path.stem}")
