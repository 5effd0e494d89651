"""The package's floors: each module imports only from its own floor or the
ones below (docs/layout.md), so a newcomer can read keras_bert3 bottom up and
no cycle hides behind a function-local import. The few calls up a floor are
listed here with their reason; a new one fails this test."""

import ast
import pathlib

import pytest

pytestmark = pytest.mark.backend_free  # Files and Python only: no Keras backend reaches them.

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "keras_bert3"

FLOORS = [
    # Workarounds for upstream APIs; devices and cross-replica sums; backend-specific
    # fast ops, each beside its plain keras.ops reference (used by layers, models, optimizers);
    # file writes that fail cleanly and reads that name the file; old public names kept for a release;
    # graphs traced once a process for an object (the tokenizer's, the pairing's).
    {"upstream", "distribution", "ops", "files", "renamed", "version", "traced_once"},
    {"tokenizers"},  # Text to WordPiece ids.
    # The pretraining pipeline; Keras layers; scores of predictions (SQuAD's EM and F1: plain
    # Python, beside the layers so that models and tasks may use them); optimizers.
    {"data", "layers", "metrics", "optimizers"},
    {"preprocessing", "presets"},  # Text to task inputs; checkpoint files.
    {"models"},  # Backbone, pretrainer, tasks.
    {"export", "training"},  # SavedModel writers; the pretraining run.
    {"jobs"},  # The commands' work on files for each task: fine-tune, evaluate, predict.
    # Entry points; what the command's process leaves out; flags read from a file, defaults in the help.
    {"cli", "__main__", "__init__", "command_start", "flag_files"},
]

# Calls up a floor, each a function-local import with its reason.
UPWARD = {
    ("tokenizers", "presets"): "BertTokenizer.from_preset / save_to_preset read and write preset files.",
    ("models", "export"): "BertTask.export calls the task's SavedModel writer (export takes a built task).",
}


def floor_of(package: str) -> int:
    return next(i for i, names in enumerate(FLOORS) if package in names)


def imported_packages(path: pathlib.Path) -> set[str]:
    """The keras_bert3 packages `path` imports from, function-local imports included."""
    packages = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        for name in names:
            parts = name.split(".")
            if parts[0] == "keras_bert3" and len(parts) > 1:
                packages.add(parts[1])
    return packages


def package_of(path: pathlib.Path) -> str:
    relative = path.relative_to(PACKAGE).parts
    return relative[0] if len(relative) > 1 else path.stem


def test_every_package_has_a_floor():
    packages = {package_of(path) for path in PACKAGE.rglob("*.py")}
    assert packages <= set().union(*FLOORS), packages - set().union(*FLOORS)


def test_no_import_runs_up_a_floor():
    upward = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        package = package_of(path)
        for imported in imported_packages(path):
            if floor_of(imported) > floor_of(package) and (package, imported) not in UPWARD:
                upward.setdefault(f"{package} -> {imported}", []).append(str(path.relative_to(PACKAGE)))
    assert not upward, upward


def test_the_listed_upward_calls_still_exist():
    found = set()
    for path in PACKAGE.rglob("*.py"):
        found |= {(package_of(path), imported) for imported in imported_packages(path)}
    assert set(UPWARD) <= found, set(UPWARD) - found  # A mended one comes off the list.


def module_imports(root: pathlib.Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    """Each module of `packages` (under `root`): the modules of `packages` it
    imports by name, function-local imports included (`from p import m` names
    module `p.m` where there is one, else `p`)."""
    paths = {}
    for package in packages:
        for path in (root / package).rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    imports = {}
    for module, path in paths.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                found |= {
                    f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in paths else node.module for a in node.names
                }
            elif isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
        imports[module] = (found & set(paths)) - {module}
    return imports


def import_cycles(imports: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index, low, stack, cycles = {}, {}, [], []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in imports[module]:
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = stack[stack.index(module) :]
            del stack[stack.index(module) :]
            if len(group) > 1:
                cycles.append(sorted(group))

    for module in imports:
        if module not in index:
            visit(module)
    return cycles


def test_no_module_imports_one_that_imports_it_back():
    imports = module_imports(PACKAGE.parent, ("keras_bert3", "keras_bert3_demo"))
    assert len(imports) > 150 and "keras_bert3.export.onnx_text_model" in imports
    assert import_cycles(imports) == []
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]  # The check finds one.


def test_the_library_never_imports_the_demo():
    imports = module_imports(PACKAGE.parent, ("keras_bert3", "keras_bert3_demo"))
    library = {module: found for module, found in imports.items() if module.split(".")[0] == "keras_bert3"}
    assert not {module for module, found in library.items() if any(f.startswith("keras_bert3_demo") for f in found)}


@pytest.mark.slow
def test_importing_the_package_leaves_tensorflow_unconfigured():
    """Importing keras_bert3 builds nothing: TensorFlow's runtime has not
    started, so a process (a prepare-data worker) may still set its threads. (In a process forked from one that
    has imported TensorFlow and Keras, not keras_bert3: tests/warm_commands.py.)"""
    import sys

    from tests import warm_commands

    script = (
        "import keras_bert3, keras_bert3.data, keras_bert3.export, keras_bert3.training.pretraining_run\n"
        "import tensorflow as tf\n"
        "tf.config.threading.set_inter_op_parallelism_threads(1)\n"
    )
    done = warm_commands.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=PACKAGE.parent)
    assert done.returncode == 0, done.stderr[-2000:]


def test_private_attributes_of_other_objects_are_reached_in_upstream_only():
    """Keras', TensorFlow's and keras-hub's private attributes are reached only
    through keras_bert3/upstream/, where each is fenced (`require_private`)
    and tested against the installed version (tests/upstream/)."""
    allowed = {"os._exit"}  # The standard library's documented way out of a forked server.
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if package_of(path) == "upstream":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            text = ast.unparse(node)
            if text not in allowed:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {text}")
    assert not found, "move these reaches into keras_bert3/upstream/:\n" + "\n".join(found)
