"""The ``streams-on-spark`` command as users run it: the installed console script (and ``python -m
streams_on_spark``) in a subprocess, over a module of topologies written to a temp dir (the current directory)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from streams_on_spark.connectors.embedded import EmbeddedTopics

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = Path(sys.executable).parent / "streams-on-spark"
KAFKA_REFERENCE = ROOT / "tests" / "data" / "kafka-reference"

APPS = '''
from streams_on_spark import Grouped, Materialized, Serdes, StreamsBuilder, Stores, TimeWindows, Topology
from streams_on_spark.processor import Processor


def orders(extra_filter=False, upper=False):
    """An unnamed count after a filter: inserting an operator shifts the generated store name (the guide's case)."""
    builder = StreamsBuilder()
    stream = builder.stream("orders")
    if extra_filter:
        stream = stream.filter(lambda k, v: v is not None)
    stream.map_values(str.upper if upper else str.lower).group_by_key().count().to_stream().to("order-counts")
    return builder


def v1():
    return orders().build()


def v1_upper_case():
    return orders(upper=True).build()      # logic changed, structure the same


def v2_filter_first():
    return orders(extra_filter=True).build()


def windowed(size_ms):
    builder = StreamsBuilder()
    (builder.stream("views").group_by_key().windowed_by(TimeWindows.of_size_with_no_grace(size_ms))
     .count(Materialized.as_("views-per-window")))
    return builder


def five_minute_windows():
    return windowed(300_000)


def ten_minute_windows():
    return windowed(600_000)


def two_counts():
    """Two aggregations after one key change: topology.optimization=all merges their repartition topics."""
    builder = StreamsBuilder()
    rekeyed = builder.stream("clicks").select_key(lambda k, v: v)
    rekeyed.group_by_key(Grouped.as_("a")).count().to_stream().to("a-counts")
    rekeyed.group_by_key(Grouped.as_("b")).count().to_stream().to("b-counts")
    return builder


class Noop(Processor):
    def process(self, record):
        pass


topology = Topology()
topology.add_source("in", "input")
topology.add_processor("work", Noop, "in")
topology.add_state_store(Stores.key_value_store_builder(Stores.in_memory_key_value_store("work-store"),
                                                        Serdes.String(), Serdes.String()), "work")
topology.add_sink("out", "output", "work")

builder = orders()
number = 42


def needs_arguments(name):
    return topology


def fails():
    raise RuntimeError("no topology today")


def not_a_topology():
    return "Topologies:"
'''


@pytest.fixture
def apps(tmp_path):
    (tmp_path / "apps.py").write_text(APPS)
    (tmp_path / "broken.py").write_text("raise RuntimeError('broken at import')\n")
    (tmp_path / "exits.py").write_text("import sys\nsys.exit(3)\n")
    (tmp_path / "syntax.py").write_text("def (:\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "jobs.py").write_text("from apps import topology\n")
    return tmp_path


def cli(cwd, *args, module=False):
    """Run the installed console script (or ``python -m streams_on_spark``) in ``cwd``."""
    assert SCRIPT.exists(), f"{SCRIPT} is not installed: run `make setup` (pyproject's [project.scripts])"
    command = [sys.executable, "-m", "streams_on_spark"] if module else [str(SCRIPT)]
    return subprocess.run(command + [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=120)


def one_error_line(run, *fragments):
    """The run failed with exit status 2 and one line on stderr holding ``fragments`` (no traceback)."""
    assert run.returncode == 2, (run.returncode, run.stdout, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("streams-on-spark: error: "), run.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    assert run.stdout == ""
    return lines[0]


def in_process_describe(expression):
    """``str(describe())`` of a topology built here from the same module text (the expected output)."""
    namespace: dict = {}
    exec(compile(APPS, "apps.py", "exec"), namespace)
    return str(eval(expression, namespace).describe())


# -- describe ------------------------------------------------------------------------------------------------------

def test_describe_prints_the_topology_description(apps):
    for target, expected in [("apps:v1", "v1()"), ("apps:topology", "topology"), ("apps:builder", "orders().build()"),
                             ("apps:two_counts", "two_counts().build()"), ("pkg.jobs:topology", "topology"),
                             (apps / "apps.py", "v1()")]:
        spec = f"{target}:v1" if isinstance(target, Path) else target
        run = cli(apps, "describe", spec)
        assert run.returncode == 0 and run.stderr == "", run.stderr
        assert run.stdout == in_process_describe(expected), spec


def test_describe_from_a_file_path_in_another_directory_and_with_python_dash_m(apps, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    run = cli(elsewhere, "describe", f"{apps / 'apps.py'}:v2_filter_first")
    assert run.returncode == 0 and "KSTREAM-AGGREGATE-STATE-STORE-0000000003" in run.stdout, run.stderr
    run = cli(apps, "describe", "apps:topology", module=True)
    assert run.returncode == 0 and run.stdout == in_process_describe("topology")
    assert cli(elsewhere, "describe", "apps:v1").returncode == 2   # not importable from there


def test_a_streams_builder_is_built_with_the_config_given(apps):
    plain = cli(apps, "describe", "apps:two_counts").stdout
    optimized = cli(apps, "describe", "apps:two_counts", "--config", "topology.optimization=all").stdout
    assert plain.count("-repartition)") == 2 and optimized.count("-repartition)") == 1
    assert optimized == in_process_describe("two_counts().build({'topology.optimization': 'all'})")
    built = cli(apps, "describe", "apps:v1", "--config", "topology.optimization=all")
    assert built.returncode == 0 and built.stdout == in_process_describe("v1()")
    assert "'apps:v1' is a built Topology: the config given (topology.optimization) does not rebuild it" in built.stderr


@pytest.mark.parametrize("target, fragments", [
    ("nosuch:topology", ["describe: TOPOLOGY: cannot import module 'nosuch'", "No module named 'nosuch'"]),
    ("broken:topology", ["cannot import module 'broken'", "RuntimeError: broken at import"]),
    ("exits:topology", ["cannot import module 'exits'", "SystemExit: 3"]),
    ("syntax:topology", ["cannot import module 'syntax'", "SyntaxError"]),
    ("missing.py:topology", ["cannot import module 'missing.py' (no such file)"]),
    ("apps:nothing", ["module 'apps' has no attribute 'nothing'"]),
    ("apps:number", ["'apps:number' is a int, not a Topology"]),
    ("apps:Noop", ["'apps:Noop' is the class Noop, not a Topology"]),
    ("apps:not_a_topology", ["'apps:not_a_topology' is a str, not a Topology"]),
    ("apps:needs_arguments", ["'apps:needs_arguments' needs arguments"]),
    ("apps:fails", ["'apps:fails' raised RuntimeError: no topology today"]),
    ("apps", ["expected MODULE:ATTR or path/to/app.py:ATTR, got 'apps'"]),
    ("not a module:x", ["'not a module' is neither a dotted module name nor a path"]),
])
def test_describe_errors_are_one_line_naming_the_argument(apps, target, fragments):
    one_error_line(cli(apps, "describe", target), "describe: TOPOLOGY: ", *fragments)


def test_usage_errors_are_one_line_too(apps):
    one_error_line(cli(apps), "the following arguments are required: COMMAND")
    one_error_line(cli(apps, "describe"), "describe: the following arguments are required: TOPOLOGY")
    one_error_line(cli(apps, "frobnicate"), "invalid choice: 'frobnicate'")
    one_error_line(cli(apps, "visualize", "apps:v1", "--format", "png"),
                   "visualize: argument --format: invalid choice: 'png'")
    one_error_line(cli(apps, "describe", "apps:two_counts", "--config", "optimization"),
                   "describe: --config: expected KEY=VALUE, got 'optimization'")
    helped = cli(apps, "--help")
    assert helped.returncode == 0 and all(c in helped.stdout for c in ("describe", "check-upgrade", "visualize",
                                                                       "reset"))


# -- check-upgrade -------------------------------------------------------------------------------------------------

def committed_description(apps, target, name):
    """What a team commits: ``streams-on-spark describe TARGET > NAME``."""
    run = cli(apps, "describe", target)
    assert run.returncode == 0, run.stderr
    (apps / name).write_text(run.stdout)
    return name


def test_check_upgrade_exit_status_is_0_when_safe_and_1_when_unsafe(apps):
    """The CI recipe: the committed description of the running version against the new code."""
    before = committed_description(apps, "apps:v1", "topology-v1.txt")
    same = cli(apps, "check-upgrade", before, "apps:v1_upper_case")
    assert same.returncode == 0 and same.stderr == "", same.stdout + same.stderr
    assert same.stdout.startswith("Topology upgrade: safe") and "[safe] unchanged" in same.stdout
    unsafe = cli(apps, "check-upgrade", before, "apps:v2_filter_first")
    assert unsafe.returncode == 1 and unsafe.stderr == "", unsafe.stdout + unsafe.stderr
    assert unsafe.stdout.startswith("Topology upgrade: UNSAFE")
    assert ("[unsafe] store-renamed: KSTREAM-AGGREGATE-STATE-STORE-0000000002 -> "
            "KSTREAM-AGGREGATE-STATE-STORE-0000000003") in unsafe.stdout
    reverse = cli(apps, "check-upgrade", "apps:v2_filter_first", f"{apps / 'apps.py'}:v1", module=True)
    assert reverse.returncode == 1 and "store-renamed" in reverse.stdout
    assert cli(apps, "check-upgrade", "apps:v1", "apps:v1").returncode == 0


def test_check_upgrade_json(apps):
    before = committed_description(apps, "apps:v1", "topology-v1.txt")
    safe_run = cli(apps, "check-upgrade", before, "apps:v1", "--format", "json")
    unsafe_run = cli(apps, "check-upgrade", before, "apps:v2_filter_first", "--format", "json")
    safe, unsafe = json.loads(safe_run.stdout), json.loads(unsafe_run.stdout)
    assert (safe_run.returncode, unsafe_run.returncode) == (0, 1)
    assert safe["safe"] is True and unsafe["safe"] is False and unsafe["counts"]["unsafe"] == 1
    (renamed,) = [f for f in unsafe["findings"] if f["severity"] == "unsafe"]
    assert renamed["rule"] == "store-renamed" and "KSTREAM-AGGREGATE-STATE-STORE-0000000002" in renamed["subject"]


def test_check_upgrade_compares_topologies_whole(apps):
    """MODULE:ATTR passes the Topology itself, so window sizes (not in describe() text) are checked."""
    changed = cli(apps, "check-upgrade", "apps:five_minute_windows", "apps:ten_minute_windows")
    assert changed.returncode == 1 and "views-per-window" in changed.stdout, changed.stdout + changed.stderr
    assert "windows-not-checked" not in changed.stdout
    assert cli(apps, "check-upgrade", "apps:five_minute_windows", "apps:five_minute_windows").returncode == 0
    text = committed_description(apps, "apps:five_minute_windows", "windowed.txt")
    unchecked = cli(apps, "check-upgrade", text, "apps:ten_minute_windows")
    assert unchecked.returncode == 0 and "windows-not-checked" in unchecked.stdout


def test_check_upgrade_passes_configs_and_partition_counts_on(apps):
    """``--config-before/--config-after`` build each side's StreamsBuilder and reach the check, as do
    ``--partitions-before/--partitions-after``."""
    run = cli(apps, "check-upgrade", "apps:two_counts", "apps:two_counts", "--config-after",
              "topology.optimization=all")
    assert run.returncode == 1, run.stdout + run.stderr   # the merged repartition topic: another topology
    assert "[unsafe] repartition-removed: b-repartition" in run.stdout and "optimization-changed" in run.stdout
    same = cli(apps, "check-upgrade", "apps:two_counts", "apps:two_counts", "--config-before",
               "topology.optimization=all", "--config-after", "topology.optimization=all")
    assert same.returncode == 0, same.stdout + same.stderr
    resized = cli(apps, "check-upgrade", "apps:v1", "apps:v1", "--partitions-before", "orders=2",
                  "--partitions-after", "orders=4")
    assert resized.returncode == 1 and "[unsafe] partitions-changed: orders" in resized.stdout
    kept = cli(apps, "check-upgrade", "apps:v1", "apps:v1", "--partitions-before", "orders=4",
               "--partitions-after", "orders=4")
    assert kept.returncode == 0


def test_check_upgrade_errors_name_the_argument(apps):
    (apps / "garbage.txt").write_text("this is not a topology\n")
    (apps / "binary.txt").write_bytes(b"\xff\xfe\x00")
    one_error_line(cli(apps, "check-upgrade", "nothing.txt", "apps:v1"),
                   "check-upgrade: BEFORE: 'nothing.txt' is neither a file of describe() text nor MODULE:ATTR")
    one_error_line(cli(apps, "check-upgrade", "apps:v1", "garbage.txt"),
                   "check-upgrade: AFTER: 'garbage.txt' is not a topology description")
    one_error_line(cli(apps, "check-upgrade", "binary.txt", "apps:v1"),
                   "check-upgrade: BEFORE: cannot read file 'binary.txt'")
    one_error_line(cli(apps, "check-upgrade", "apps:v1", "broken:topology"),
                   "check-upgrade: AFTER: cannot import module 'broken'")
    one_error_line(cli(apps, "check-upgrade", "apps:v1", "apps:v1", "--format", "xml"), "invalid choice: 'xml'")
    one_error_line(cli(apps, "check-upgrade", "apps:v1", "apps:v1", "--partitions-before", "orders=many"),
                   "--partitions-before: partition count of 'orders' must be an integer, got 'many'")
    one_error_line(cli(apps, "check-upgrade", "apps:v1"), "the following arguments are required: AFTER")


# -- visualize -----------------------------------------------------------------------------------------------------

def render(dot_text):
    """Graphviz's SVG; fails (never skips) when `dot` is missing: `make test` installs Graphviz."""
    dot = shutil.which("dot")
    assert dot, "Graphviz's `dot` is not installed: `make test` installs it (apt-get install graphviz)"
    run = subprocess.run([dot, "-Tsvg"], input=dot_text, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and not run.stderr.strip(), run.stderr
    svg = ET.fromstring(run.stdout)
    ns = "{http://www.w3.org/2000/svg}"
    titles: dict = {}
    for g in svg.iter(f"{ns}g"):
        title = g.find(f"{ns}title")
        titles.setdefault(g.get("class"), set()).add(title.text if title is not None else None)
    return titles


def test_visualize_dot_renders_with_graphviz(apps):
    run = cli(apps, "visualize", "apps:two_counts", "--format", "dot")
    assert run.returncode == 0 and run.stdout.startswith("digraph topology {"), run.stderr
    drawn = render(run.stdout)
    assert drawn["cluster"] == {"cluster_sub0", "cluster_sub1", "cluster_sub2"}
    # each repartition topic joins subtopology 0's sink to the source of the subtopology that counts
    assert {"node:a-repartition-sink->topic:a-repartition", "topic:a-repartition->node:a-repartition-source",
            "node:b-repartition-sink->topic:b-repartition", "topic:b-repartition->node:b-repartition-source",
            "node:KSTREAM-AGGREGATE-0000000003->store:KSTREAM-AGGREGATE-STATE-STORE-0000000002"} <= drawn["edge"]
    assert {"topic:clicks", "topic:a-counts", "store:KSTREAM-AGGREGATE-STATE-STORE-0000000009"} <= drawn["node"]
    optimized = render(cli(apps, "visualize", "apps:two_counts", "--format", "dot",
                           "--config", "topology.optimization=all").stdout)
    assert optimized["cluster"] == {"cluster_sub0", "cluster_sub1"} and "topic:b-repartition" not in optimized["node"]


def test_visualize_a_description_kafka_streams_printed(apps):
    """A committed describe() text, here one Kafka Streams 4.3.1 itself printed (the reference goldens)."""
    (apps / "kafka.txt").write_text(json.loads((KAFKA_REFERENCE / "repartition-default.json").read_text())["topology"])
    drawn = render(cli(apps, "visualize", "kafka.txt", "--format", "dot").stdout)
    assert drawn["cluster"] == {"cluster_sub0", "cluster_sub1"}
    assert {"node:rekeyed-repartition-sink->topic:rekeyed-repartition",
            "topic:rekeyed-repartition->node:rekeyed-repartition-source",
            "node:KSTREAM-AGGREGATE-0000000005->store:rekeyed-counts"} <= drawn["edge"]
    mermaid = cli(apps, "visualize", "kafka.txt", "--format", "mermaid", module=True)
    assert mermaid.returncode == 0 and mermaid.stdout.count("  subgraph ") == 2


def test_visualize_mermaid_structure(apps):
    run = cli(apps, "visualize", "apps:topology")   # mermaid is the default
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "flowchart TB"
    assert lines.count('  subgraph sub0["Sub-topology: 0"]') == 1 and lines.count("  end") == 1
    ids = {label: line.split("[")[0].split("(")[0].strip() for line in lines
           for label in ["in", "work", "out", "work-store", "input", "output"] if f'"{label}"' in line}
    assert f"  {ids['input']} --> {ids['in']}" in lines and f"  {ids['in']} --> {ids['work']}" in lines
    assert f"  {ids['work']} --> {ids['out']}" in lines and f"  {ids['out']} --> {ids['output']}" in lines
    assert f"  {ids['work']} -.- {ids['work-store']}" in lines
    assert f'{ids["work-store"]}[("work-store")]' in run.stdout


def test_visualize_errors(apps):
    one_error_line(cli(apps, "visualize", "apps:fails", "--format", "dot"),
                   "visualize: TOPOLOGY: 'apps:fails' raised RuntimeError")
    one_error_line(cli(apps, "visualize", "nothing.txt"), "visualize: TOPOLOGY: 'nothing.txt' is neither")


# -- reset ---------------------------------------------------------------------------------------------------------

def test_reset_dry_run_lists_and_reset_deletes(apps):
    topics = EmbeddedTopics(str(apps / "topics"))
    for name in ("orders", "shop-counts-repartition", "shop-counts-changelog"):
        topics.create_topic(name, 2)
    (apps / "checkpoints" / "subtopology-0").mkdir(parents=True)
    args = ["reset", "--application-id", "shop", "--embedded-topics-dir", apps / "topics",
            "--checkpoint-location", apps / "checkpoints"]
    plan = cli(apps, *args, "--dry-run")
    assert plan.returncode == 0, plan.stderr
    assert plan.stdout.splitlines() == ["application shop: would delete", "  internal topic shop-counts-changelog",
                                        "  internal topic shop-counts-repartition",
                                        f"  checkpoints {apps / 'checkpoints'}"]
    assert (apps / "checkpoints").exists()
    done = cli(apps, *args, module=True)
    assert done.returncode == 0 and done.stdout.startswith("application shop: deleted\n"), done.stderr
    assert set(EmbeddedTopics(str(apps / "topics")).topics()) == {"orders"}
    assert not (apps / "checkpoints").exists()


def test_reset_errors(apps):
    one_error_line(cli(apps, "reset"), "reset: the following arguments are required: --application-id")
    one_error_line(cli(apps, "reset", "--application-id", ""), "reset: --application-id must not be empty")
    one_error_line(cli(apps, "reset", "--application-id", "x", "--config", "nonsense"),
                   "reset: --config: expected KEY=VALUE")
    # nothing listens on port 1: kafka-python's retries stay quiet, the failure is one line naming the option
    one_error_line(cli(apps, "reset", "--application-id", "x", "--bootstrap-servers", "127.0.0.1:1", "--dry-run",
                       "--config", "default.api.timeout.ms=1000"),
                   "reset: --bootstrap-servers: ", "cannot connect to Kafka")
    one_error_line(cli(apps, "reset", "--application-id", "x", "--bootstrap-servers", "127.0.0.1:1",
                       "--embedded-topics-dir", str(apps / "topics")),
                   "reset: argument --embedded-topics-dir: not allowed with argument --bootstrap-servers")
