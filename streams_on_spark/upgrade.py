"""Is a topology change safe over existing state? ``check_upgrade`` applies the upgrade guide's rules to two topologies.

``before`` and ``after`` are each a :class:`Topology`, a :class:`TopologyDescription` or ``describe()`` text (Kafka
Streams' or ours), so a team can commit its description and compare it in CI. Every rule of the guide
(``reference/topology-upgrade-guide.txt``) is one function in :data:`RULES`, named by a short stable id; each returns
findings whose severity is ``"unsafe"`` (state or records are lost or misread), ``"restore"`` (state must be rebuilt
or moved), ``"warning"`` or ``"safe"``. Subtopologies are matched by what they read (their source topics), never by
their number. The check is pure: no I/O, no Spark.

Partition counts (``before_partitions`` / ``after_partitions``) map a *topic name* to its partition count, as the
admin client and the checkpoint manifest report them; a changed count of a topic read by a subtopology with stores
is unsafe. Windows are not in ``describe()`` text: a side given as text is checked for them when its windows come
along (``before_windows`` / ``after_windows``, as :func:`windows_of` records them; the checkpoint manifest keeps
them).
"""
from __future__ import annotations

import logging
import re
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any, Callable, Mapping, Optional, Union

from streams_on_spark.config import APPLICATION_ID, TOPOLOGY_OPTIMIZATION
from streams_on_spark.dsl.suppressed import BufferConfig, Suppressed
from streams_on_spark.dsl.windows import JoinWindows, SessionWindows, SlidingWindows, TimeWindows
from streams_on_spark.errors import bad_argument, require_instance, require_int
from streams_on_spark.topology.builder import ProcessorNodeSpec
from streams_on_spark.topology.description import Node, Processor, Sink, Source, TopologyDescription
from streams_on_spark.topology.topology import Topology

log = logging.getLogger(__name__)

SEVERITIES = ("unsafe", "restore", "warning", "safe")
# Kafka's generated names end in a 10-digit index, optionally followed by a suffix (``...-0000000004-store``,
# ``-repartition``, a foreign-key join's ``-topic``)
_GENERATED = re.compile(r"(.*?)(\d{10})(-[a-z][a-z-]*)?")
_OPTIMIZATIONS = ("reuse.ktable.source.topics", "merge.repartition.topics", "single.store.self.join")

TopologyLike = Union[Topology, TopologyDescription, str]


@dataclass(frozen=True)
class Finding:
    """One rule's verdict on one subject (a store, topic, subtopology, window or config)."""

    rule: str
    severity: str
    subject: str
    detail: str

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"Finding severity must be one of {list(SEVERITIES)}, got {self.severity!r}")


@dataclass
class UpgradeReport:
    """The findings of :func:`check_upgrade`, most severe first; ``is_safe`` when nothing is unsafe."""

    findings: list[Finding] = field(default_factory=list)

    @property
    def is_safe(self) -> bool:
        """No finding says state or records are lost or misread (``restore`` findings still cost a rebuild)."""
        return not self.unsafe

    @property
    def unsafe(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "unsafe"]

    @property
    def restore(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "restore"]

    def counts(self) -> dict[str, int]:
        """Findings per severity (every severity present, zero when none)."""
        return {s: sum(1 for f in self.findings if f.severity == s) for s in SEVERITIES}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``safe``, ``counts`` and the ``findings`` as dicts (the CLI's ``--format json``)."""
        return {"safe": self.is_safe, "counts": self.counts(), "findings": [asdict(f) for f in self.findings]}

    def __str__(self) -> str:
        counts = ", ".join(f"{n} {s}" for s, n in self.counts().items() if n)
        head = f"Topology upgrade: {'safe' if self.is_safe else 'UNSAFE'} ({counts or 'no findings'})"
        return "\n".join([head] + [f"- [{f.severity}] {f.rule}: {f.subject}: {f.detail}" for f in self.findings])


# ----------------------------------------------------------------------------------------------------------
# What a topology holds, as the rules see it


@dataclass(frozen=True)
class _Windows:
    """The time parameters of one stateful operator (its node spec's ``OperatorWindows``) and the processor's name."""

    kind: str                 # "aggregation", "join" or "suppression"
    spec: Any                 # TimeWindows / SlidingWindows / SessionWindows / JoinWindows / Suppressed
    processor: str


@dataclass
class _Group:
    """A subtopology or global store: the topics it reads and its stores (store -> processors using it)."""

    id: int
    is_global: bool
    nodes: dict[str, Node]
    sources: frozenset[str]
    stores: dict[str, list[str]]


class _View:
    """One side of the comparison: the description, its groups and (for a Topology) its windows."""

    def __init__(self, value: Any, what: str, windows: Optional[Mapping[str, Any]] = None) -> None:
        self.windows: Optional[dict[str, list[_Windows]]] = None
        if windows is not None:
            if isinstance(value, Topology):
                raise ValueError(f"{what}_windows: not with a Topology, whose windows are read from it")
            self.windows = _decode_windows(windows, f"{what}_windows")
        if isinstance(value, Topology):
            self.description = value.describe()
            self.windows = _windows_of(value)
        elif isinstance(value, TopologyDescription):
            self.description = value
        elif isinstance(value, str):
            try:
                self.description = TopologyDescription.parse(value)
            except ValueError as error:
                raise ValueError(f"{what}: {error}") from None
        else:
            raise bad_argument(what, "a Topology, a TopologyDescription or describe() text", value)
        self.text = str(self.description)
        self.groups = [_group(s.id, s.nodes, False) for s in self.description.subtopologies]
        self.groups += [_group(g.id, [g.source, g.processor], True) for g in self.description.global_stores]
        all_sources = {t for g in self.groups for t in g.sources}
        sinks = {n.topic for g in self.groups for n in g.nodes.values() if isinstance(n, Sink)}
        # internal topics (repartition, a foreign-key join's subscription topics): written and read by the topology
        self.repartition_topics = all_sources & sinks
        self.user_sources = all_sources - self.repartition_topics
        self.store_group = {store: g for g in self.groups for store in g.stores}
        self.processors = {name for g in self.groups for name, n in g.nodes.items() if isinstance(n, Processor)}

    def upstream_repartitions(self, store: str) -> set[str]:
        """The repartition topics feeding the processors that use ``store`` (within its subtopology)."""
        group = self.store_group[store]
        seen: set[str] = set()
        stack = list(group.stores[store])
        found: set[str] = set()
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            node = group.nodes[name]
            if isinstance(node, Source):
                found |= {t for t in node.topics if t in self.repartition_topics}
            stack.extend(p.name for p in node.predecessors)
        return found

    def key_changer(self, repartition_topic: str) -> str:
        """The operator whose records go to ``repartition_topic`` (the repartition's own null-key filter skipped)."""
        for group in self.groups:
            for node in group.nodes.values():
                if isinstance(node, Sink) and node.topic == repartition_topic:
                    current: Node = node
                    while current.predecessors:
                        current = next(iter(current.predecessors))
                        if not (current.name.endswith("-repartition-filter") or
                                current.name.startswith("KSTREAM-FILTER-") and len(current.successors) == 1
                                and isinstance(next(iter(current.successors)), Sink)):
                            return current.name
        return repartition_topic


def _group(group_id: int, nodes: list[Node], is_global: bool) -> _Group:
    stores: dict[str, list[str]] = {}
    for node in nodes:
        for store in getattr(node, "stores", ()):
            stores.setdefault(store, []).append(node.name)
    return _Group(group_id, is_global, {n.name: n for n in nodes},
                  frozenset(t for n in nodes if isinstance(n, Source) for t in n.topics), stores)


def _windows_of(topology: Topology) -> dict[str, list[_Windows]]:
    """Store name -> the windows of the operators using it, from their node specs' ``windows``."""
    out: dict[str, list[_Windows]] = {}
    for spec in topology.internal_builder.node_factories.values():
        if isinstance(spec, ProcessorNodeSpec) and spec.windows is not None:
            found = _Windows(spec.windows.kind, spec.windows.spec, spec.name)
            for store in spec.stores:
                out.setdefault(store, []).append(found)
    return out


_WINDOW_CLASSES = {cls.__name__: cls for cls in (TimeWindows, SlidingWindows, SessionWindows, JoinWindows, Suppressed)}


def windows_of(topology: Topology) -> dict[str, list[dict[str, Any]]]:
    """A topology's windows as JSON-ready data (store -> the windows of the operators using it), which
    ``check_upgrade``'s ``before_windows``/``after_windows`` take beside ``describe()`` text."""
    require_instance(topology, "topology", Topology)
    return {store: [{"kind": w.kind, "processor": w.processor, "type": type(w.spec).__name__, "spec": asdict(w.spec)}
                    for w in found] for store, found in _windows_of(topology).items()}


def _decode_windows(data: Mapping[str, Any], what: str) -> dict[str, list[_Windows]]:
    """The windows :func:`windows_of` recorded, as the rules compare them."""
    require_instance(data, what, Mapping)
    out: dict[str, list[_Windows]] = {}
    try:
        for store, entries in data.items():
            for entry in entries:
                fields = dict(entry["spec"])
                cls = _WINDOW_CLASSES[entry["type"]]
                if cls is Suppressed:
                    fields["buffer_config"] = BufferConfig(**fields["buffer_config"])
                out.setdefault(str(store), []).append(_Windows(str(entry["kind"]), cls(**fields),
                                                               str(entry["processor"])))
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{what}: not windows as windows_of records them ({type(error).__name__}: {error})") \
            from None
    return out


def _generated_key(name: str) -> Optional[tuple[str, str]]:
    match = _GENERATED.fullmatch(name)
    return (match.group(1), match.group(3) or "") if match else None


def _index(name: str) -> str:
    match = _GENERATED.fullmatch(name)
    return match.group(2) if match else ""


def _changelog(app_id: str, store: str) -> str:
    return f"{app_id}-{store}-changelog"


# ----------------------------------------------------------------------------------------------------------
# The comparison: pairs renamed stores and repartition topics once, for every rule


class TopologyChange:
    """``before`` -> ``after`` with configs and partition counts; renamed stores and topics paired."""

    def __init__(self, before: _View, after: _View, before_config: Mapping[str, Any],
                 after_config: Mapping[str, Any], before_partitions: Optional[Mapping[str, int]],
                 after_partitions: Optional[Mapping[str, int]], configs_given: bool) -> None:
        self.before, self.after = before, after
        self.before_config, self.after_config = before_config, after_config
        self.before_partitions, self.after_partitions = before_partitions, after_partitions
        self.configs_given = configs_given
        self.app_id = str(after_config.get(APPLICATION_ID) or before_config.get(APPLICATION_ID) or "<application.id>")

    @cached_property
    def store_renames(self) -> dict[str, str]:
        """Before store -> after store, for stores that vanished where another appeared in the same place."""
        removed = [s for s in self.before.store_group if s not in self.after.store_group]
        added = [s for s in self.after.store_group if s not in self.before.store_group]
        pairs: dict[str, str] = {}

        def pair(old: str, new: str) -> None:
            pairs[old] = new
            removed.remove(old)
            added.remove(new)

        # 1. the same (named) processor now uses a store of another name
        for old in list(removed):
            users = set(self.before.store_group[old].stores[old])
            for new in added:
                if users & set(self.after.store_group[new].stores[new]) and not self.before.store_group[old].is_global:
                    pair(old, new)
                    break
        # 2. a generated name whose index shifted (an operator inserted or removed before it)
        _pair_generated(removed, added, pair)
        # 3. one store vanished and one appeared in the subtopology of the same number or sources
        for old in list(removed):
            group = self.before.store_group[old]
            candidates = [new for new in added if self.after.store_group[new].is_global == group.is_global and
                          (self.after.store_group[new].id == group.id or self.after.store_group[new].sources ==
                           group.sources)]
            same_place = [o for o in removed if self.before.store_group[o] is group]
            if len(candidates) == 1 and len(same_place) == 1:
                pair(old, candidates[0])
        return pairs

    @cached_property
    def repartition_renames(self) -> dict[str, str]:
        """Before repartition topic -> after topic, paired as the stores are."""
        removed = sorted(self.before.repartition_topics - self.after.repartition_topics)
        added = sorted(self.after.repartition_topics - self.before.repartition_topics)
        pairs: dict[str, str] = {}

        def pair(old: str, new: str) -> None:
            pairs[old] = new
            removed.remove(old)
            added.remove(new)

        for old, new in self.store_renames.items():
            if f"{old}-repartition" in removed and f"{new}-repartition" in added:
                pair(f"{old}-repartition", f"{new}-repartition")
        _pair_generated(removed, added, pair)
        # the topic feeding a store that survived (or was renamed)
        for old in list(removed):
            readers = [g for g in self.before.groups if old in g.sources]
            stores = {self.store_renames.get(s, s) for g in readers for s in g.stores}
            candidates = [new for new in added
                          if any(new in g.sources and stores & set(g.stores) for g in self.after.groups)]
            if len(candidates) == 1:
                pair(old, candidates[0])
        return pairs

    def renamed_store(self, before_store: str) -> Optional[str]:
        """The after name of a before store (itself when kept), None when removed."""
        if before_store in self.after.store_group:
            return before_store
        return self.store_renames.get(before_store)

    def mapped_sources(self, group: _Group) -> frozenset[str]:
        """A before group's source topics under their after names."""
        return frozenset(self.repartition_renames.get(t, t) for t in group.sources)


def _pair_generated(removed: list[str], added: list[str], pair: Callable[[str, str], None]) -> None:
    by_key: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    for name in removed:
        key = _generated_key(name)
        if key:
            by_key.setdefault(key, ([], []))[0].append(name)
    for name in added:
        key = _generated_key(name)
        if key and key in by_key:
            by_key[key][1].append(name)
    for olds, news in by_key.values():
        for old, new in zip(sorted(olds, key=_index), sorted(news, key=_index)):
            pair(old, new)


# ----------------------------------------------------------------------------------------------------------
# The rules: one function each; RULES lists them with their stable ids


def unchanged(change: TopologyChange) -> list[Finding]:
    """Identical descriptions: only logic inside operators changed, which is safe."""
    if change.before.text != change.after.text:
        return []
    return [Finding("unchanged", "safe", "topology",
                    "describe() is identical: no store, internal topic or subtopology changed; changing the logic "
                    "inside the operators is safe as long as it does not change the keys, the partitioning or "
                    "internal topic names.")]


def processors_changed(change: TopologyChange) -> list[Finding]:
    """Processors added, removed or renamed: safe by themselves (state lives in stores and internal topics)."""
    added = sorted(change.after.processors - change.before.processors)
    removed = sorted(change.before.processors - change.after.processors)
    if not added and not removed:
        return []
    parts = ([f"added {added}"] if added else []) + ([f"removed {removed}"] if removed else [])
    return [Finding("processors-changed", "safe", "processors",
                    f"Processors {' and '.join(parts)}: on their own these are safe, since state lives in stores "
                    "and internal topics, which the other findings check.")]


def store_renamed(change: TopologyChange) -> list[Finding]:
    """A store under a new name: its state (and changelog) is left behind."""
    out = []
    for old, new in change.store_renames.items():
        changelogs = (f"the changelog becomes {_changelog(change.app_id, new)} and "
                      f"{_changelog(change.app_id, old)} is no longer read")
        if _generated_key(old) and _generated_key(old) == _generated_key(new):
            why = (f"its generated index shifted from {_index(old)} to {_index(new)} because an operator was "
                   "inserted or removed before it")
            remedy = ("name the operator (Materialized.as_ for the store, Named/Grouped for the others) before the "
                      "first deployment; for this one, reset the application or deploy blue/green")
        else:
            why = "it has a new name" + (" (a generated name replaced by a chosen one)" if _generated_key(old)
                                         else "")
            remedy = ("names cannot be added later without losing state: keep the old name, or reset the "
                      "application or deploy blue/green")
        out.append(Finding("store-renamed", "unsafe", f"{old} -> {new}",
                           f"Store {old} is now {new}: {why}, so {changelogs}, and its state is lost; {remedy}."))
    return out


def store_removed(change: TopologyChange) -> list[Finding]:
    """A store that is gone: its state is dropped (a global store's topic still holds its data)."""
    out = []
    for store, group in change.before.store_group.items():
        if change.renamed_store(store) is not None:
            continue
        if group.is_global:
            out.append(Finding("store-removed", "safe", store,
                               f"Global store {store} is removed; its topic still holds its data."))
        else:
            out.append(Finding("store-removed", "unsafe", store,
                               f"Store {store} is removed, and its state (changelog "
                               f"{_changelog(change.app_id, store)}) with it; if its operator was removed on purpose "
                               "the loss is intended, otherwise keep the operator's name (Materialized.as_)."))
    return out


def store_added(change: TopologyChange) -> list[Finding]:
    """A new store starts empty (safe); a new global store is first filled from its whole topic (restore)."""
    renamed = set(change.store_renames.values())
    out = []
    for store, group in change.after.store_group.items():
        if store in change.before.store_group or store in renamed:
            continue
        if group.is_global:
            out.append(Finding("store-added", "restore", store,
                               f"Global store {store} is new: it is filled from its whole topic before processing "
                               "starts."))
        else:
            out.append(Finding("store-added", "safe", store,
                               f"Store {store} is new: it starts empty and sees only records processed from now on "
                               "(reset the application if it must hold the history)."))
    return out


def repartition_renamed(change: TopologyChange) -> list[Finding]:
    """A repartition (internal) topic under a new name: records still in the old one are never read."""
    out = []
    for old, new in change.repartition_renames.items():
        shifted = (f" (its generated index shifted from {_index(old)} to {_index(new)} because an operator was "
                   "inserted or removed before it)" if _generated_key(old) and _generated_key(old) ==
                   _generated_key(new) else "")
        out.append(Finding("repartition-renamed", "unsafe", f"{old} -> {new}",
                           f"Internal topic {old} is now {new}{shifted}, so records still in {old} are never "
                           "processed; flush the repartition topic before the upgrade (stop the inputs until its "
                           "lag is 0), and name the operator that creates it (Grouped.as_, Repartitioned.as_, "
                           "TableJoined.as_) so it keeps its name."))
    return out


def repartition_removed(change: TopologyChange) -> list[Finding]:
    """A repartition topic that is gone: records still in it are lost unless it was flushed first."""
    return [Finding("repartition-removed", "unsafe", topic,
                    f"Internal topic {topic} is removed, so records still in it are never processed; flush the "
                    "repartition topic before the upgrade (stop the inputs until its lag is 0), or reset the "
                    "application.")
            for topic in sorted(change.before.repartition_topics - change.after.repartition_topics)
            if topic not in change.repartition_renames]


def repartition_added(change: TopologyChange) -> list[Finding]:
    """A new repartition topic: correct by itself (keys and stores are checked by other rules)."""
    renamed = set(change.repartition_renames.values())
    return [Finding("repartition-added", "safe", topic,
                    f"Internal topic {topic} is new: records are shuffled through it from now on (a new "
                    "subtopology); safe by itself, but see the key and store findings.")
            for topic in sorted(change.after.repartition_topics - change.before.repartition_topics)
            if topic not in renamed]


def store_moved(change: TopologyChange) -> list[Finding]:
    """A store in a subtopology that reads other topics: its state must be moved or rebuilt."""
    out = []
    for store, group in change.before.store_group.items():
        new = change.renamed_store(store)
        if new is None or new != store or group.is_global:
            continue
        before_sources = change.mapped_sources(group)
        after_group = change.after.store_group[store]
        if before_sources != after_group.sources:
            out.append(Finding("store-moved", "restore", store,
                               f"Store {store} moved from sub-topology {group.id} (reading {sorted(group.sources)}) "
                               f"to sub-topology {after_group.id} (reading {sorted(after_group.sources)}): Kafka "
                               "Streams restores it from its changelog in the new task directory; on Spark its state "
                               "stays in the old subtopology's checkpoint and must be carried over or rebuilt by "
                               "reprocessing."))
    return out


def subtopology_renumbered(change: TopologyChange) -> list[Finding]:
    """A stateful subtopology that reads the same topics under another number."""
    out = []
    seen: set[tuple[int, int]] = set()
    for store, group in change.before.store_group.items():
        if group.is_global or change.renamed_store(store) != store:
            continue
        after_group = change.after.store_group[store]
        if after_group.id != group.id and change.mapped_sources(group) == after_group.sources and \
                (group.id, after_group.id) not in seen:
            seen.add((group.id, after_group.id))
            out.append(Finding("subtopology-renumbered", "restore", f"sub-topology {group.id} -> {after_group.id}",
                               f"Sub-topology {group.id} (reading {sorted(after_group.sources)}) is now number "
                               f"{after_group.id}: Kafka Streams names task directories <subtopology>_<partition>, "
                               f"so it restores {sorted(after_group.stores)} from their changelogs; streams-on-spark "
                               "matches checkpoints by source topics and keeps them."))
    return out


def fewer_subtopologies(change: TopologyChange) -> list[Finding]:
    """Fewer subtopologies: old task directories of the missing numbers are left over."""
    before = {g.id for g in change.before.groups}
    after = {g.id for g in change.after.groups}
    missing = sorted(before - after)
    if not missing:
        return []
    return [Finding("fewer-subtopologies", "warning", f"sub-topologies {missing}",
                    f"Sub-topologies {missing} no longer exist: Kafka Streams may fail with 'Tried to lookup lag for "
                    "unknown task' on their leftover task directories; remove the task directories starting with "
                    f"{', '.join(f'{i}_' for i in missing)} from the state directory.")]


def key_changing_before_stateful(change: TopologyChange) -> list[Finding]:
    """A store now fed through a new repartition: a key-changing operation was put before it."""
    out = []
    for store in change.before.store_group:
        new = change.renamed_store(store)
        if new is None or change.before.store_group[store].is_global:
            continue
        if change.before.upstream_repartitions(store):
            continue    # already fed through a repartition: its keys were changed before (other rules see renames)
        introduced = sorted(change.after.upstream_repartitions(new))
        if introduced:
            changers = sorted({change.after.key_changer(t) for t in introduced})
            out.append(Finding("key-changing-before-stateful", "unsafe", new,
                               f"Store {new} is now fed through {introduced}, written by {changers}: a key-changing "
                               "operation (or a repartition) now runs before it, so state kept under the old keys "
                               "is not found and keys move to other partitions; change keys after the stateful "
                               "operators, or reset the application and reprocess (or deploy blue/green)."))
    return out


def windows_changed(change: TopologyChange) -> list[Finding]:
    """Window size/advance/gap of an aggregation (unsafe) versus grace, join windows or suppression (safe)."""
    if change.before.windows is None or change.after.windows is None:
        shared = [s for s in change.before.store_group if change.renamed_store(s) is not None]
        if not shared:
            return []
        return [Finding("windows-not-checked", "warning", "windows",
                        "Window sizes, grace periods and suppression are not in describe() text, so they could not "
                        "be checked; compare Topology objects (or pass before_windows/after_windows from "
                        "windows_of) to check them (an aggregation's window size, advance or gap must not change).")]
    out = []
    for store in change.before.store_group:
        new = change.renamed_store(store)
        if new is None:
            continue
        specs, new_specs = change.before.windows.get(store, []), change.after.windows.get(new, [])
        old_agg = [w for w in specs if w.kind == "aggregation"]
        if bool(old_agg) != any(w.kind == "aggregation" for w in new_specs):
            out.append(Finding("window-size-changed", "unsafe", new,
                               f"Store {new} {'is no longer' if old_agg else 'is now'} a windowed aggregation's: "
                               "its entries are keyed differently, so the stored results are misread; reset the "
                               "application or deploy blue/green."))
            continue
        for old_w, new_w in zip(specs, new_specs):
            if old_w.kind != new_w.kind or old_w.spec == new_w.spec:
                continue
            out.extend(_compare_windows(new, old_w, new_w))
    return _unique(out)


def _compare_windows(store: str, old: _Windows, new: _Windows) -> list[Finding]:
    a, b = old.spec, new.spec
    if old.kind == "join":
        return [Finding("join-window-changed", "safe", store,
                        f"The join {new.processor} now uses {b} instead of {a}: a windowed join stores the records "
                        "themselves, so the new window applies from now on.")]
    if old.kind == "suppression":
        return [Finding("suppression-changed", "safe", store,
                        f"Suppression {new.processor} changed its wait or buffer config: a physical property, safe "
                        "to change.")]
    if type(a) is not type(b) or _window_size(a) != _window_size(b):
        return [Finding("window-size-changed", "unsafe", store,
                        f"The windowed aggregation {new.processor} now uses {b} instead of {a}: the store holds "
                        "partial results per window, so results mix both window sizes until the old windows expire "
                        "(window size + grace); reset the application or deploy blue/green for correct results.")]
    return [Finding("window-grace-changed", "safe", store,
                    f"The windowed aggregation {new.processor} changed only its grace period ({a.grace_ms} ms -> "
                    f"{b.grace_ms} ms): safe to tune.")]


def _window_size(windows: Any) -> tuple[int, ...]:
    if isinstance(windows, TimeWindows):
        return (windows.size_ms, windows.advance_ms)
    if isinstance(windows, SlidingWindows):
        return (windows.time_difference_ms,)
    return (windows.inactivity_gap_ms,)


def source_topics_changed(change: TopologyChange) -> list[Finding]:
    """Input topics added (read from auto.offset.reset) or removed (no longer read)."""
    out = []
    for topic in sorted(change.before.user_sources - change.after.user_sources):
        out.append(Finding("source-topics-changed", "warning", topic,
                           f"Input topic {topic} is no longer read; records arriving in it from now on are not "
                           "processed."))
    for topic in sorted(change.after.user_sources - change.before.user_sources):
        out.append(Finding("source-topics-changed", "safe", topic,
                           f"Input topic {topic} is new: it is read from auto.offset.reset (earliest by default)."))
    return out


def optimization_changed(change: TopologyChange) -> list[Finding]:
    """``topology.optimization``: each optimization has its own rule for turning it on or off."""
    if not change.configs_given:
        return []
    before = _optimizations(change.before_config.get(TOPOLOGY_OPTIMIZATION), "before_config")
    after = _optimizations(change.after_config.get(TOPOLOGY_OPTIMIZATION), "after_config")
    out = []
    for name in _OPTIMIZATIONS:
        if (name in before) == (name in after):
            continue
        on = name in after
        if name == "reuse.ktable.source.topics":
            finding = ("safe", "enabled: safe; it cannot be disabled later, since the source topic served as the "
                       "changelog") if on else ("unsafe", "disabled: the new changelog misses the records already "
                                                "read; reset the application")
        elif name == "merge.repartition.topics":
            finding = ("unsafe", f"{'enabled' if on else 'disabled'}: repartition topics change; flush the "
                       "repartition topics before the upgrade, or reset the application")
        else:
            generated = [s for s in change.after.store_group if _generated_key(s)]
            finding = (("warning", f"enabled: safe only when every operator is named; generated store names "
                        f"{sorted(generated)} may shift") if generated else ("safe", "enabled with every operator "
                                                                             "named: safe")) if on else \
                ("unsafe", "disabled after use: the self-join's second store starts empty; reset the application")
        out.append(Finding("optimization-changed", finding[0], f"{TOPOLOGY_OPTIMIZATION}: {name}",
                           f"The {name} optimization is {finding[1]}."))
    return out


def _optimizations(value: Any, what: str) -> set[str]:
    if value is None or str(value).strip().lower() in ("", "none"):
        return set()
    text = str(value).strip().lower()
    if text == "all":
        return set(_OPTIMIZATIONS)
    rules = {v.strip() for v in text.split(",") if v.strip()}
    unknown = rules - set(_OPTIMIZATIONS)
    if unknown:
        raise ValueError(f"{what}: unrecognized {TOPOLOGY_OPTIMIZATION} value(s) {sorted(unknown)}; expected 'all', "
                         f"'none' or a comma list of {list(_OPTIMIZATIONS)}")
    return rules


def partitions_changed(change: TopologyChange) -> list[Finding]:
    """A changed partition count: unsafe for a topic read by a subtopology with stores, safe otherwise."""
    if change.before_partitions is None or change.after_partitions is None:
        return []
    out = []
    for topic in sorted(set(change.before_partitions) & set(change.after_partitions)):
        old, new = change.before_partitions[topic], change.after_partitions[topic]
        if old == new:
            continue
        stateful = sorted({s for g in change.after.groups if topic in g.sources and not g.is_global for s in g.stores})
        if stateful:
            out.append(Finding("partitions-changed", "unsafe", topic,
                               f"Topic {topic} has {new} partitions instead of {old} and feeds stores {stateful}: "
                               "keys hash to other partitions, so state kept for a key sits in another task's store; "
                               "deploy blue/green with new topics of the new count (or reset the application)."))
        else:
            out.append(Finding("partitions-changed", "safe", topic,
                               f"Topic {topic} has {new} partitions instead of {old}; no store reads it directly, so "
                               "only parallelism changes."))
    return out


def generated_names(change: TopologyChange) -> list[Finding]:
    """Stores and repartition topics still named by index: the next inserted operator renames them."""
    names = sorted([s for s in change.after.store_group if _generated_key(s)] +
                   [t for t in change.after.repartition_topics if _generated_key(t)])
    if not names:
        return []
    return [Finding("generated-names", "warning", "names",
                    f"{names} have generated names, which shift whenever an operator is added or removed before "
                    "them; name their operators (Materialized.as_, Grouped.as_, Named.as_, StreamJoined.with_name) "
                    "at the next reset or new deployment.")]


def _unique(findings: list[Finding]) -> list[Finding]:
    return list(dict.fromkeys(findings))


# (id, rule): the stable ids are what tests, the CLI's JSON and users' CI match on
RULES: list[tuple[str, Callable[[TopologyChange], list[Finding]]]] = [
    ("unchanged", unchanged),
    ("store-renamed", store_renamed),
    ("store-removed", store_removed),
    ("store-added", store_added),
    ("repartition-renamed", repartition_renamed),
    ("repartition-removed", repartition_removed),
    ("repartition-added", repartition_added),
    ("store-moved", store_moved),
    ("subtopology-renumbered", subtopology_renumbered),
    ("fewer-subtopologies", fewer_subtopologies),
    ("key-changing-before-stateful", key_changing_before_stateful),
    ("windows", windows_changed),
    ("source-topics-changed", source_topics_changed),
    ("optimization-changed", optimization_changed),
    ("partitions-changed", partitions_changed),
    ("processors-changed", processors_changed),
    ("generated-names", generated_names),
]


def check_upgrade(before: TopologyLike, after: TopologyLike, *, before_config: Optional[Mapping[str, Any]] = None,
                  after_config: Optional[Mapping[str, Any]] = None,
                  before_partitions: Optional[Mapping[str, int]] = None,
                  after_partitions: Optional[Mapping[str, int]] = None,
                  before_windows: Optional[Mapping[str, Any]] = None,
                  after_windows: Optional[Mapping[str, Any]] = None) -> UpgradeReport:
    """Apply every rule to ``before`` -> ``after``; configs compare ``topology.optimization``, partitions map a topic
    name to its partition count (both sides needed), windows (:func:`windows_of`, for a side given as a description)
    let the window rules check what ``describe()`` text does not show."""
    views = _View(before, "before", before_windows), _View(after, "after", after_windows)
    require_instance(before_config, "before_config", Mapping, optional=True)
    require_instance(after_config, "after_config", Mapping, optional=True)
    for what, partitions in (("before_partitions", before_partitions), ("after_partitions", after_partitions)):
        require_instance(partitions, what, Mapping, optional=True)
        for topic, count in (partitions or {}).items():
            require_int(count, f"{what}[{topic!r}]", minimum=1)
    change = TopologyChange(*views, before_config or {}, after_config or {}, before_partitions, after_partitions,
                    configs_given=before_config is not None or after_config is not None)
    findings = [finding for _, rule in RULES for finding in rule(change)]
    findings.sort(key=lambda f: SEVERITIES.index(f.severity))
    report = UpgradeReport(findings)
    log.debug("%s", report)
    return report


__all__ = ["Finding", "UpgradeReport", "check_upgrade", "windows_of", "RULES", "SEVERITIES"]
