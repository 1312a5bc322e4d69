"""The library's layers import downward only, and the DSL's classes are the only modules that import each other in a
cycle (as Kafka's do). Every import counts, including those inside functions: a function-level import of a higher
layer is still the house fighting its plan. A new module must be given its layer here."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# where each top-level package or module ships (pyproject's package-dir)
SOURCES = {"streams_on_spark": ROOT / "streams_on_spark", "streams_on_spark.connectors": ROOT / "connectors",
           "streams_on_spark.state": ROOT / "state"}
# bottom to top; a module may import its own layer and the ones below it
LAYERS = [
    {"errors", "keyvalue", "window", "emit", "change", "metrics", "lazy", "files", "headers",   # leaf types
     "records", "partitioner", "record_batch"},      # the records every layer passes: Kafka's, and their batches
    {"serde"},
    {"error_handlers", "timestamp_extractors", "config"},
    {"state"},
    {"query"},                                       # interactive queries over the tasks' stores
    {"processor"},                                   # the Processor API
    {"operators"},                                   # the DSL's operators (processors)
    {"topology"},
    {"dsl"},
    {"connectors"},                                  # the runtime's topics: embedded and Kafka (no Spark)
    {"runtime"},
    {"testing"},
    {"kafka_streams", "upgrade", "checkpoint_manifest"},
    {"reset", "cli", "__main__", "class_archive"},   # class_archive: a word count run to write a JVM class archive
    {""},                                            # the package itself: re-exports the API
]
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}


def modules() -> dict[str, Path]:
    found = {}
    for package, directory in SOURCES.items():
        for path in sorted(directory.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(directory).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


MODULES = set(modules())


def area(module: str) -> str:
    """The layer name of a library module: its first component below the package."""
    if module.startswith("streams_on_spark.connectors"):
        return "connectors"
    if module.startswith("streams_on_spark.state"):
        return "state"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def imports(path: Path, module: str, runtime_only: bool = False) -> list[tuple[str, int]]:
    """The library modules ``path`` imports (absolute names), with line numbers; ``runtime_only`` leaves out the
    imports under ``if TYPE_CHECKING:`` (type hints, never executed)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(n) for block in ast.walk(tree)
                   if isinstance(block, ast.If) and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING"
                   for stmt in block.body for n in ast.walk(stmt)} if runtime_only else set()
    out = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:   # relative import
                base = ".".join(module.split(".")[: -node.level] + ([base] if base else []))
            if base.startswith("streams_on_spark"):
                # ``from package import submodule`` imports the submodule
                out.extend((f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base, node.lineno)
                           for a in node.names)
        elif isinstance(node, ast.Import):
            out.extend((a.name, node.lineno) for a in node.names if a.name.startswith("streams_on_spark"))
    return out


def test_every_module_has_a_layer():
    unknown = sorted({area(m) for m in modules()} - set(RANK))
    assert not unknown, f"give these a layer in tests/unit/test_layers.py: {unknown}"


def test_no_layer_imports_a_higher_one():
    upward = []
    for module, path in modules().items():
        for target, line in imports(path, module):
            if RANK.get(area(target), -1) > RANK[area(module)]:
                upward.append(f"{path.relative_to(ROOT)}:{line} {module} imports {target}")
    assert not upward, "upward imports:\n" + "\n".join(upward)


def test_the_only_import_cycle_is_inside_the_dsl():
    mods = modules()
    graph = {m: sorted({t for t, _ in imports(p, m, runtime_only=True) if t in mods and t != m})
             for m, p in mods.items()}
    cycles = [c for c in strongly_connected(graph) if len(c) > 1]
    outside = [sorted(c) for c in cycles if not all(m.startswith("streams_on_spark.dsl") for m in c)]
    assert not outside, f"import cycles outside the DSL: {outside}"


def strongly_connected(graph: dict[str, list[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[set[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    components.append(component)
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(graph[child])))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return components


# the parts of a StreamTask (Kafka's PartitionGroup/RecordQueue, ProcessorStateManager, PunctuationQueue, and the task
# snapshot), below the task inside the runtime layer: none imports the task, its batch paths or an engine
TASK_PARTS = ("record_queue", "state_manager", "punctuation", "snapshot")
ABOVE_TASK_PARTS = ("task", "fused", "local", "global_task", "spark")


def test_the_task_parts_sit_below_the_task():
    mods = modules()
    upward = [f"{module} imports {target}" for part in TASK_PARTS
              for module in [f"streams_on_spark.runtime.{part}"]
              for target, _ in imports(mods[module], module)
              if any(target == f"streams_on_spark.runtime.{above}"
                     or target.startswith(f"streams_on_spark.runtime.{above}.") for above in ABOVE_TASK_PARTS)]
    assert not upward, "the task's parts import what sits above them:\n" + "\n".join(upward)


def spark_imports(path: Path) -> list[int]:
    """The lines of ``path`` that import pyspark (at any depth)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "pyspark"
            or isinstance(node, ast.Import) and any(a.name.split(".")[0] == "pyspark" for a in node.names)]


def test_the_spark_sources_live_with_the_spark_runtime(tmp_path):
    """The connectors hold topics (files, Kafka's clients) and give a Spark source its options; the Spark sources
    themselves (the embedded topics' data source, Spark's Kafka rows packed) are the Spark runtime's, so no
    connector imports pyspark."""
    found = [f"{path.relative_to(ROOT)}:{line}" for module, path in modules().items()
             if area(module) == "connectors" for line in spark_imports(path)]
    assert not found, f"the connectors import pyspark (a Spark source belongs in runtime/spark/): {found}"
    probe = tmp_path / "embedded_connector.py"
    probe.write_text("def f():\n    from pyspark.sql.datasource import DataSource\n")
    assert spark_imports(probe) == [2]
    assert spark_imports(ROOT / "streams_on_spark" / "runtime" / "spark" / "embedded_source.py")


def test_the_checks_see_an_upward_import(tmp_path):
    """The checks are not vacuous: a function-level import of the DSL from an operator module, and of an operator
    from the Processor API, are found."""
    path = tmp_path / "windowed.py"
    path.write_text("def f():\n    from streams_on_spark.dsl.windows import TimeWindows\n")
    ((target, line),) = imports(path, "streams_on_spark.operators.windowed")
    assert target == "streams_on_spark.dsl.windows" and line == 2
    assert RANK[area(target)] > RANK[area("streams_on_spark.operators.windowed")]
    api = tmp_path / "api.py"
    api.write_text("from streams_on_spark.operators.stateless import KStreamFilter\n")
    ((target, _),) = imports(api, "streams_on_spark.processor.api")
    assert RANK[area(target)] > RANK[area("streams_on_spark.processor.api")]
    core = tmp_path / "records.py"
    core.write_text("from streams_on_spark.connectors.embedded import EmbeddedTopics\n")
    ((target, _),) = imports(core, "streams_on_spark.records")
    assert RANK[area(target)] > RANK[area("streams_on_spark.records")]
    assert sorted(map(sorted, strongly_connected({"a": ["b"], "b": ["a"], "c": []}))) == [["a", "b"], ["c"]]
    part = tmp_path / "punctuation.py"
    part.write_text("from streams_on_spark.runtime.task import StreamTask\n")
    ((target, _),) = imports(part, "streams_on_spark.runtime.punctuation")
    assert target == "streams_on_spark.runtime.task" and target.split(".")[-1] in ABOVE_TASK_PARTS


def test_pyflakes_finds_nothing_in_the_library_or_the_tests():
    """No unused import, undefined name or shadowed import (pyflakes) in code that ships or tests it."""
    import subprocess
    import sys
    paths = [str(ROOT / d) for d in ("streams_on_spark", "connectors", "state", "tests")]
    run = subprocess.run([sys.executable, "-m", "pyflakes", *paths], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
