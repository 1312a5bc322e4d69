"""The ``streams-on-spark`` command: describe, check upgrades between, draw and reset applications' topologies.

Subcommands (``streams-on-spark COMMAND --help`` for each):

- ``describe MODULE:ATTR`` prints ``Topology#describe()``'s text (what a team commits to compare in CI);
- ``check-upgrade BEFORE AFTER`` runs :func:`streams_on_spark.upgrade.check_upgrade`; exit status 0 when the
  upgrade is safe, 1 when it is not;
- ``visualize MODULE:ATTR --format mermaid|dot`` draws the topology (:mod:`streams_on_spark.topology.visualize`);
- ``reset --application-id ID`` is Kafka's application reset tool (:func:`streams_on_spark.reset.reset_application`).

``MODULE:ATTR`` names a ``Topology``, a ``StreamsBuilder`` (built here, with the ``--config`` given) or a
zero-argument function returning either; MODULE is a dotted module importable from the current directory (as
``python -m`` finds it) or a file ``path/to/app.py``. A bad argument is one line on stderr naming it, exit status 2,
never a traceback.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import json
import logging
import os
import sys
from typing import Any, Mapping, NoReturn, Optional, Sequence, Union

from streams_on_spark.config import (
    APPLICATION_ID,
    BOOTSTRAP_SERVERS,
    CHECKPOINT_LOCATION,
    EMBEDDED_TOPICS_DIR,
    STATE_DIR,
)
from streams_on_spark.dsl.builder import StreamsBuilder
from streams_on_spark.reset import reset_application
from streams_on_spark.topology.description import TopologyDescription
from streams_on_spark.topology.topology import Topology
from streams_on_spark.topology.visualize import to_dot, to_mermaid
from streams_on_spark.upgrade import check_upgrade

log = logging.getLogger(__name__)

PROG = "streams-on-spark"
EXIT_OK, EXIT_UNSAFE, EXIT_USAGE = 0, 1, 2
RENDERERS = {"mermaid": to_mermaid, "dot": to_dot}


class UsageError(Exception):
    """A bad command-line argument; its message names the argument (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is a :class:`UsageError` (one line, prefixed with the subcommand) not an exit."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.split()[1:]
        hint = f" (see {self.prog} --help)"
        raise UsageError(f"{' '.join(command)}: {message}{hint}" if command else message + hint)


# -- loading topologies --------------------------------------------------------------------------------------------

def _import_module(module: str, argument: str) -> Any:
    """Import ``module`` (dotted name, from the current directory first) or run the file ``module`` (``*.py``)."""
    if module.endswith(".py") or os.sep in module or "/" in module:
        path = os.path.abspath(module)
        if not os.path.isfile(path):
            raise UsageError(f"{argument}: cannot import module '{module}' (no such file)")
        directory = os.path.dirname(path)
        if directory not in sys.path:
            sys.path.insert(0, directory)   # as `python path/to/app.py` does: its siblings import
        name = _file_module_name(path)
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise UsageError(f"{argument}: cannot import module '{module}' (not a Python source file)")
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[name] = loaded
        try:
            spec.loader.exec_module(loaded)
        except BaseException as e:   # noqa: B036 - a user module's SystemExit is its failure to import too
            sys.modules.pop(name, None)
            if isinstance(e, KeyboardInterrupt):
                raise
            raise UsageError(f"{argument}: cannot import module '{module}' ({_explain(e)})") from e
        return loaded
    if not all(part.isidentifier() for part in module.split(".")):
        raise UsageError(f"{argument}: '{module}' is neither a dotted module name nor a path to a .py file")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())   # as `python -m` does; a console script's sys.path lacks it
    try:
        return importlib.import_module(module)
    except BaseException as e:   # noqa: B036
        if isinstance(e, KeyboardInterrupt):
            raise
        raise UsageError(f"{argument}: cannot import module '{module}' ({_explain(e)})") from e


def _file_module_name(path: str) -> str:
    """The file's own name (``app.py`` -> ``app``) unless that names another module (``json.py``) or is taken."""
    name = os.path.splitext(os.path.basename(path))[0]
    if name.isidentifier() and name not in sys.modules:
        try:
            found = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            found = None
        if found is not None and found.origin and os.path.isfile(found.origin) and os.path.samefile(found.origin, path):
            return name
    return f"_streams_on_spark_cli_{len(sys.modules)}_{name if name.isidentifier() else 'module'}"


def _explain(error: BaseException) -> str:
    """``Type: message`` on one line."""
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def load_target(spec: str, argument: str) -> Any:
    """The object ``MODULE:ATTR`` names (ATTR may be dotted: ``module:holder.topology``)."""
    module, sep, attr = spec.rpartition(":")
    if not sep or not module or not attr:
        raise UsageError(f"{argument}: expected MODULE:ATTR or path/to/app.py:ATTR, got '{spec}'")
    obj = _import_module(module, argument)
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{argument}: module '{module}' has no attribute '{attr}'")
        obj = getattr(obj, part)
    return obj


def load_topology(spec: str, argument: str, config: Optional[Mapping[str, Any]] = None) -> Topology:
    """``MODULE:ATTR`` as a :class:`Topology`: a Topology, a StreamsBuilder built with ``config``, or a
    zero-argument function returning either."""
    obj = load_target(spec, argument)
    if callable(obj) and not inspect.isclass(obj) and not isinstance(obj, (Topology, StreamsBuilder)):
        try:
            inspect.signature(obj).bind()
        except TypeError:
            raise UsageError(f"{argument}: '{spec}' needs arguments; give a Topology or a zero-argument function "
                             "returning one") from None
        except ValueError:   # no signature (a builtin): just call it
            pass
        try:
            obj = obj()
        except BaseException as e:   # noqa: B036
            if isinstance(e, KeyboardInterrupt):
                raise
            raise UsageError(f"{argument}: '{spec}' raised {_explain(e)}") from e
    if isinstance(obj, StreamsBuilder):
        try:
            obj = obj.build(dict(config or {}))
        except Exception as e:
            raise UsageError(f"{argument}: building '{spec}' failed: {_explain(e)}") from e
    elif config:
        log.warning("%s: '%s' is a built Topology: the config given (%s) does not rebuild it; name a StreamsBuilder "
                    "(or a function returning one) to build with it", argument, spec, ", ".join(config))
    if not isinstance(obj, Topology):
        what = f"the class {obj.__name__}" if inspect.isclass(obj) else f"a {type(obj).__name__}"
        raise UsageError(f"{argument}: '{spec}' is {what}, not a Topology (give a Topology, a "
                         "StreamsBuilder or a zero-argument function returning one)")
    return obj


def describe_topology(topology: Topology, spec: str, argument: str) -> TopologyDescription:
    """``topology.describe()``; a topology that fails to describe (an invalid graph) is the argument's fault."""
    try:
        return topology.describe()
    except Exception as e:
        raise UsageError(f"{argument}: '{spec}' cannot be described: {_explain(e)}") from e


def read_description(path: str, argument: str) -> TopologyDescription:
    """A file of ``describe()`` text (ours or Kafka Streams'), parsed."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else _explain(e)
        raise UsageError(f"{argument}: cannot read file '{path}' ({reason})") from e
    try:
        return TopologyDescription.parse(text)
    except Exception as e:
        raise UsageError(f"{argument}: '{path}' is not a topology description ({_explain(e)})") from e


def load_side(spec: str, argument: str,
              config: Optional[Mapping[str, Any]] = None) -> Union[Topology, TopologyDescription]:
    """A file of ``describe()`` text (parsed) when ``spec`` is an existing file, else ``MODULE:ATTR``'s Topology
    (kept whole: ``check_upgrade`` reads window sizes from it, which the text does not show)."""
    if os.path.isfile(spec):
        return read_description(spec, argument)
    if ":" not in spec:
        raise UsageError(f"{argument}: '{spec}' is neither a file of describe() text nor MODULE:ATTR")
    topology = load_topology(spec, argument, config)
    describe_topology(topology, spec, argument)   # a graph that cannot be described is this argument's fault
    return topology


def load_description(spec: str, argument: str, config: Optional[Mapping[str, Any]] = None) -> TopologyDescription:
    """A file of ``describe()`` text when ``spec`` is an existing file, else ``MODULE:ATTR``'s description."""
    side = load_side(spec, argument, config)
    return side.describe() if isinstance(side, Topology) else side


def _key_values(pairs: Optional[Sequence[str]], argument: str) -> dict[str, str]:
    """``k=v`` arguments as a dict (later ones win)."""
    out: dict[str, str] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{argument}: expected KEY=VALUE, got '{pair}'")
        out[key.strip()] = value.strip()
    return out


def _partition_counts(pairs: Optional[Sequence[str]], argument: str) -> Optional[dict[str, int]]:
    """``TOPIC=N`` arguments as ``{topic: n}``; None when none were given."""
    if not pairs:
        return None
    counts = {}
    for topic, value in _key_values(pairs, argument).items():
        try:
            counts[topic] = int(value)
        except ValueError:
            raise UsageError(f"{argument}: partition count of '{topic}' must be an integer, got '{value}'") from None
        if counts[topic] < 1:
            raise UsageError(f"{argument}: partition count of '{topic}' must be at least 1, got {counts[topic]}")
    return counts


# -- subcommands ---------------------------------------------------------------------------------------------------

def _describe(args: argparse.Namespace) -> int:
    config = _key_values(args.config, "--config")
    topology = load_topology(args.topology, "TOPOLOGY", config)
    sys.stdout.write(str(describe_topology(topology, args.topology, "TOPOLOGY")))
    return EXIT_OK


def _check_upgrade(args: argparse.Namespace) -> int:
    before_config = _key_values(args.config_before, "--config-before")
    after_config = _key_values(args.config_after, "--config-after")
    before = load_side(args.before, "BEFORE", before_config)
    after = load_side(args.after, "AFTER", after_config)
    try:
        report = check_upgrade(
            before, after, before_config=before_config or None, after_config=after_config or None,
            before_partitions=_partition_counts(args.partitions_before, "--partitions-before"),
            after_partitions=_partition_counts(args.partitions_after, "--partitions-after"))
    except (ValueError, TypeError) as e:
        raise UsageError(_explain(e)) from e
    if args.format == "json":
        sys.stdout.write(json.dumps(report.to_dict(), indent=2, sort_keys=True) + "\n")
    else:
        text = str(report)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return EXIT_OK if report.is_safe else EXIT_UNSAFE


def _visualize(args: argparse.Namespace) -> int:
    description = load_description(args.topology, "TOPOLOGY", _key_values(args.config, "--config"))
    sys.stdout.write(RENDERERS[args.format](description))
    return EXIT_OK


def _reset(args: argparse.Namespace) -> int:
    config: dict[str, Any] = _key_values(args.config, "--config")
    config[APPLICATION_ID] = args.application_id
    for key, value in ((BOOTSTRAP_SERVERS, args.bootstrap_servers), (CHECKPOINT_LOCATION, args.checkpoint_location),
                       (STATE_DIR, args.state_dir), (EMBEDDED_TOPICS_DIR, args.embedded_topics_dir)):
        if value is not None:
            config[key] = value
    if not config.get(APPLICATION_ID):
        raise UsageError("--application-id must not be empty")
    if not config.get(BOOTSTRAP_SERVERS) and not config.get(EMBEDDED_TOPICS_DIR):
        log.warning("reset: neither --bootstrap-servers nor --embedded-topics-dir given: no internal topics to "
                    "delete, only checkpoints")
    try:
        result = reset_application(config, dry_run=args.dry_run)
    except Exception as e:
        where = "--bootstrap-servers" if config.get(BOOTSTRAP_SERVERS) else "--checkpoint-location"
        raise UsageError(f"{where}: {_explain(e)}") from e
    sys.stdout.write(str(result) + "\n")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    """The ``streams-on-spark`` argument parser and its subcommands."""
    parser = _Parser(prog=PROG, description="Describe, compare, draw and reset streams-on-spark topologies.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    target_help = ("MODULE:ATTR (or path/to/app.py:ATTR): a Topology, a StreamsBuilder or a zero-argument function "
                   "returning one")
    config_help = "KEY=VALUE config used to build a StreamsBuilder (e.g. topology.optimization=all); repeatable"

    describe = commands.add_parser("describe", help="print Topology#describe()'s text",
                                   description="Print the topology's describe() text (Kafka Streams' format).")
    describe.add_argument("topology", metavar="TOPOLOGY", help=target_help)
    describe.add_argument("--config", action="append", metavar="KEY=VALUE", help=config_help)
    describe.set_defaults(run=_describe)

    check = commands.add_parser(
        "check-upgrade", help="is replacing BEFORE with AFTER safe for running state? (exit 1: unsafe)",
        description="Compare two topologies for a rolling upgrade over existing state and checkpoints. Exit status "
                    "0 when safe, 1 when unsafe, 2 on bad arguments.")
    for name in ("before", "after"):
        check.add_argument(name, metavar=name.upper(),
                           help=f"a file of describe() text, or {target_help}")
    check.add_argument("--format", choices=("text", "json"), default="text", help="report format (default text)")
    for name in ("before", "after"):
        check.add_argument(f"--config-{name}", action="append", metavar="KEY=VALUE",
                           help=f"the {name.upper()} application's config (topology.optimization, ...); repeatable")
        check.add_argument(f"--partitions-{name}", action="append", metavar="TOPIC=N",
                           help=f"partition count of a source topic {name} the upgrade; repeatable")
    check.set_defaults(run=_check_upgrade)

    visualize = commands.add_parser(
        "visualize", help="draw the topology as Mermaid or Graphviz DOT",
        description="Draw the topology: subtopologies as clusters, topics and stores as their own shapes.")
    visualize.add_argument("topology", metavar="TOPOLOGY", help=f"a file of describe() text, or {target_help}")
    visualize.add_argument("--format", choices=sorted(RENDERERS), default="mermaid", help="(default mermaid)")
    visualize.add_argument("--config", action="append", metavar="KEY=VALUE", help=config_help)
    visualize.set_defaults(run=_visualize)

    reset = commands.add_parser(
        "reset", help="delete an application's internal topics and checkpoints (stop it first)",
        description="Kafka's application reset tool: delete the application's internal topics, its checkpoints and "
                    "(on Kafka) its consumer group, so it restarts from its inputs' beginning. Stop it first.")
    reset.add_argument("--application-id", required=True, metavar="ID")
    topics = reset.add_mutually_exclusive_group()   # an application's topics are Kafka's or embedded
    topics.add_argument("--bootstrap-servers", metavar="HOST:PORT[,...]", help="the Kafka cluster")
    topics.add_argument("--embedded-topics-dir", metavar="DIR", help="the embedded topics (no Kafka)")
    reset.add_argument("--checkpoint-location", metavar="PATH",
                       help="the application's checkpoint.location (default <state.dir>/<application.id>)")
    reset.add_argument("--state-dir", metavar="DIR", help="the application's state.dir")
    reset.add_argument("--config", action="append", metavar="KEY=VALUE",
                       help="more application config (security.protocol, sasl.*, ...); repeatable")
    reset.add_argument("--dry-run", action="store_true", help="list what would be deleted; delete nothing")
    reset.set_defaults(run=_reset)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; the exit status (0 ok/safe, 1 unsafe upgrade, 2 bad arguments)."""
    logging.basicConfig(level=logging.WARNING, format=f"{PROG}: %(levelname)s: %(message)s")
    # kafka-python logs every refused connection attempt; a failure reaches the user as the one-line error
    logging.getLogger("kafka").setLevel(logging.CRITICAL)
    # the build's KIP-1111 warning lists generated names: describe prints them, check-upgrade reports them itself
    logging.getLogger("streams_on_spark.topology.builder").setLevel(logging.ERROR)
    try:
        args = build_parser().parse_args(argv)
        try:
            return args.run(args)
        except UsageError as e:
            raise UsageError(f"{args.command}: {e}") from e
    except UsageError as e:
        sys.stderr.write(f"{PROG}: error: {e}\n")
        return EXIT_USAGE
    except SystemExit as e:   # --help
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:   # `streams-on-spark describe x | head`: the reader left; no error at exit either
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
