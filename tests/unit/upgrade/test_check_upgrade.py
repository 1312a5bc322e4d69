"""``check_upgrade``: one test per rule of the upgrade guide (reference/topology-upgrade-guide.txt), each built from
the guide's own example with our DSL and checked both on the ``Topology`` objects and on their parsed ``describe()``
text; the Kafka goldens (written by Kafka Streams 4.3.1) give texts Kafka produced itself."""
from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest

from streams_on_spark import (
    BufferConfig,
    Consumed,
    Grouped,
    JoinWindows,
    Materialized,
    Named,
    Produced,
    Serdes,
    SessionWindows,
    SlidingWindows,
    StreamJoined,
    StreamsBuilder,
    Suppressed,
    TimeWindows,
    Topology,
)
from streams_on_spark.upgrade import RULES, SEVERITIES, Finding, UpgradeReport, check_upgrade, windows_of

S = Serdes.String()
GOLDENS = Path(__file__).resolve().parents[2] / "data" / "kafka-reference"
FORMS = ["topology", "text"]


def as_form(topology: Topology, form: str):
    """The topology itself, or its describe() text (which check_upgrade parses)."""
    return topology if form == "topology" else str(topology.describe())


def found(report: UpgradeReport) -> set[tuple[str, str, str]]:
    return {(f.rule, f.severity, f.subject) for f in report.findings}


def rules(report: UpgradeReport) -> set[str]:
    return {f.rule for f in report.findings}


def golden(name: str) -> dict:
    return json.loads((GOLDENS / f"{name}.json").read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------------------------------------------
# "Adding or removing DSL operators": the clicks example, a filter inserted before an unnamed count


CLICKS_BEFORE = """Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000000 (topics: [clicks])
      --> KSTREAM-AGGREGATE-0000000002
    Processor: KSTREAM-AGGREGATE-0000000002 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000001])
      --> KTABLE-TOSTREAM-0000000003
      <-- KSTREAM-SOURCE-0000000000
    Processor: KTABLE-TOSTREAM-0000000003 (stores: [])
      --> KSTREAM-SINK-0000000004
      <-- KSTREAM-AGGREGATE-0000000002
    Sink: KSTREAM-SINK-0000000004 (topic: total-clicks)
      <-- KTABLE-TOSTREAM-0000000003

"""

CLICKS_AFTER = """Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000000 (topics: [clicks])
      --> KSTREAM-FILTER-0000000001
    Processor: KSTREAM-FILTER-0000000001 (stores: [])
      --> KSTREAM-AGGREGATE-0000000003
      <-- KSTREAM-SOURCE-0000000000
    Processor: KSTREAM-AGGREGATE-0000000003 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000002])
      --> KTABLE-TOSTREAM-0000000004
      <-- KSTREAM-FILTER-0000000001
    Processor: KTABLE-TOSTREAM-0000000004 (stores: [])
      --> KSTREAM-SINK-0000000005
      <-- KSTREAM-AGGREGATE-0000000003
    Sink: KSTREAM-SINK-0000000005 (topic: total-clicks)
      <-- KTABLE-TOSTREAM-0000000004

"""


def clicks(*, filtered: bool, store: str | None = None) -> Topology:
    builder = StreamsBuilder()
    stream = builder.stream("clicks")
    if filtered:
        stream = stream.filter(lambda _k, v: v is not None)
    grouped = stream.group_by_key()
    table = grouped.count(Materialized.as_(store)) if store else grouped.count()
    table.to_stream().to("total-clicks")
    return builder.build()


def test_our_clicks_example_describes_as_the_guide_prints_it():
    assert str(clicks(filtered=False).describe()) == CLICKS_BEFORE
    assert str(clicks(filtered=True).describe()) == CLICKS_AFTER


@pytest.mark.parametrize("form", FORMS)
def test_an_inserted_operator_shifts_a_generated_store_name(form):
    report = check_upgrade(as_form(clicks(filtered=False), form), as_form(clicks(filtered=True), form),
                           after_config={"application.id": "clicks-app"})
    old, new = "KSTREAM-AGGREGATE-STATE-STORE-0000000001", "KSTREAM-AGGREGATE-STATE-STORE-0000000002"
    assert ("store-renamed", "unsafe", f"{old} -> {new}") in found(report)
    assert not report.is_safe and [f.rule for f in report.unsafe] == ["store-renamed"]
    (renamed,) = report.unsafe
    assert "generated index shifted from 0000000001 to 0000000002" in renamed.detail
    assert f"clicks-app-{new}-changelog" in renamed.detail and f"clicks-app-{old}-changelog" in renamed.detail
    assert "Materialized.as_" in str(report)        # the remedy: name the operator
    assert ("generated-names", "warning", "names") in found(report)


@pytest.mark.parametrize("before, after", [(CLICKS_BEFORE, CLICKS_AFTER),
                                           (clicks(filtered=False).describe(), clicks(filtered=True).describe())],
                         ids=["text", "TopologyDescription"])
def test_the_guides_own_clicks_texts_give_the_same_verdict(before, after):
    report = check_upgrade(before, after)
    assert {f.rule for f in report.unsafe} == {"store-renamed"}
    assert "<application.id>-KSTREAM-AGGREGATE-STATE-STORE-0000000002-changelog" in str(report)


@pytest.mark.parametrize("form", FORMS)
def test_the_same_insert_is_safe_when_the_store_is_named(form):
    report = check_upgrade(as_form(clicks(filtered=False, store="clicks-store"), form),
                           as_form(clicks(filtered=True, store="clicks-store"), form))
    assert report.is_safe and not report.restore
    assert ("processors-changed", "safe", "processors") in found(report)
    assert "KSTREAM-FILTER-0000000001" in next(f.detail for f in report.findings if f.rule == "processors-changed")


# ---------------------------------------------------------------------------------------------------------------
# "Adding/removing/merging subtopologies" and "Changing keys": the daily orders example, groupByKey -> groupBy


ORDERS_BEFORE = """Topologies:
   Sub-topology: 0
    Source: DailyOrders (topics: [orders-by-customer])
      --> AggregateDailyOrders
    Processor: AggregateDailyOrders (stores: [orders])
      --> OrdersToStream
      <-- DailyOrders
    Processor: OrdersToStream (stores: [])
      --> ShipOrders
      <-- AggregateDailyOrders
    Sink: ShipOrders (topic: order-forms-to-ship)
      <-- OrdersToStream

"""

ORDERS_AFTER = """Topologies:
   Sub-topology: 0
    Source: DailyOrders (topics: [orders-by-customer])
      --> GroupOrders
    Processor: GroupOrders (stores: [])
      --> GroupOrders-repartition-filter
      <-- DailyOrders
    Processor: GroupOrders-repartition-filter (stores: [])
      --> GroupOrders-repartition-sink
      <-- GroupOrders
    Sink: GroupOrders-repartition-sink (topic: GroupOrders-repartition)
      <-- GroupOrders-repartition-filter

  Sub-topology: 1
    Source: GroupOrders-repartition-source (topics: [GroupOrders-repartition])
      --> AggregateDailyOrders
    Processor: AggregateDailyOrders (stores: [orders])
      --> OrdersToStream
      <-- GroupOrders-repartition-source
    Processor: OrdersToStream (stores: [])
      --> ShipOrders
      <-- AggregateDailyOrders
    Sink: ShipOrders (topic: order-forms-to-ship)
      <-- OrdersToStream

"""

DAY, TWO_HOURS = datetime.timedelta(days=1), datetime.timedelta(hours=2)


def daily_orders(*, group_by: bool = False, windows=None, store: str = "orders") -> Topology:
    builder = StreamsBuilder()
    orders = builder.stream("orders-by-customer", Consumed.as_("DailyOrders"))
    grouped = (orders.group_by(lambda k, _v: k.replace("!", ""), Grouped.as_("GroupOrders")) if group_by
               else orders.group_by_key(Grouped.as_("GroupOrders")))
    (grouped.windowed_by(windows or TimeWindows.of_size_and_grace(DAY, TWO_HOURS))
     .reduce(lambda a, b: a + b, Named.as_("AggregateDailyOrders"), Materialized.as_(store))
     .to_stream(Named.as_("OrdersToStream"))
     .to("order-forms-to-ship", Produced.as_("ShipOrders")))
    return builder.build()


def test_our_daily_orders_example_describes_as_the_guide_prints_it():
    assert str(daily_orders().describe()) == ORDERS_BEFORE
    assert str(daily_orders(group_by=True).describe()) == ORDERS_AFTER


@pytest.mark.parametrize("before, after", [(daily_orders(), daily_orders(group_by=True)),
                                           (ORDERS_BEFORE, ORDERS_AFTER)], ids=FORMS)
def test_group_by_key_to_group_by_moves_the_store_and_changes_its_keys(before, after):
    report = check_upgrade(before, after)
    assert {("store-moved", "restore", "orders"), ("key-changing-before-stateful", "unsafe", "orders"),
            ("repartition-added", "safe", "GroupOrders-repartition")} <= found(report)
    moved = next(f for f in report.findings if f.rule == "store-moved")
    assert "sub-topology 0 (reading ['orders-by-customer'])" in moved.detail
    assert "sub-topology 1 (reading ['GroupOrders-repartition'])" in moved.detail
    keys = next(f for f in report.findings if f.rule == "key-changing-before-stateful")
    assert "['GroupOrders']" in keys.detail and "reset the application" in keys.detail and "blue/green" in keys.detail
    assert [f.rule for f in report.unsafe] == ["key-changing-before-stateful"]


# "Removing repartition topics": groupBy -> groupByKey drops the repartition topic


@pytest.mark.parametrize("form", FORMS)
def test_a_removed_repartition_topic_loses_the_records_in_it_unless_flushed(form):
    report = check_upgrade(as_form(daily_orders(group_by=True), form), as_form(daily_orders(), form))
    assert ("repartition-removed", "unsafe", "GroupOrders-repartition") in found(report)
    assert ("store-moved", "restore", "orders") in found(report)
    assert ("fewer-subtopologies", "warning", "sub-topologies [1]") in found(report)
    assert "key-changing-before-stateful" not in rules(report)
    assert "flush the repartition topic" in str(report)
    assert "Tried to lookup lag for unknown task" in str(report)


def word_count(*, filtered: bool = False, named: bool = False, branch: bool = False, upper: bool = True) -> Topology:
    builder = StreamsBuilder()
    if branch:
        builder.stream("clicks").to("clicks-copy")
    words = builder.stream("sentences", Consumed.with_(S, S)).flat_map_values(
        lambda v: (v.upper() if upper else v.lower()).split())
    if filtered:
        words = words.filter(lambda _k, w: w != "")
    grouped = words.group_by(lambda _k, w: w, Grouped.with_(S, S, name="by-word" if named else None))
    counts = grouped.count(Materialized.as_("word-counts")) if named else grouped.count()
    counts.to_stream().to("counts")
    return builder.build()


@pytest.mark.parametrize("form", FORMS)
def test_an_inserted_operator_renames_a_generated_repartition_topic(form):
    report = check_upgrade(as_form(word_count(), form), as_form(word_count(filtered=True), form))
    renamed = [f for f in report.findings if f.rule == "repartition-renamed"]
    assert [(f.severity, f.subject) for f in renamed] == [
        ("unsafe", "KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition -> "
                   "KSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition")]
    assert "generated index shifted from 0000000003 to 0000000004" in renamed[0].detail
    assert "Grouped.as_" in renamed[0].detail and "flush the repartition topic" in renamed[0].detail
    assert ("store-renamed", "unsafe", "KSTREAM-AGGREGATE-STATE-STORE-0000000003 -> "
            "KSTREAM-AGGREGATE-STATE-STORE-0000000004") in found(report)
    # the store keeps reading through a repartition: no new key change, no move
    assert not rules(report) & {"key-changing-before-stateful", "store-moved", "repartition-removed"}


@pytest.mark.parametrize("form", FORMS)
def test_names_added_later_rename_the_store_and_the_repartition_topic(form):
    """You can't add names later to make an upgrade safe: naming them is itself the rename."""
    report = check_upgrade(as_form(word_count(), form), as_form(word_count(named=True), form))
    assert {("store-renamed", "unsafe", "KSTREAM-AGGREGATE-STATE-STORE-0000000003 -> word-counts"),
            ("repartition-renamed", "unsafe",
             "KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition -> by-word-repartition")} <= found(report)
    assert "a generated name replaced by a chosen one" in str(report)


@pytest.mark.parametrize("form", FORMS)
def test_named_operators_make_the_same_insert_safe(form):
    report = check_upgrade(as_form(word_count(named=True), form), as_form(word_count(named=True, filtered=True), form))
    assert report.is_safe and not report.restore and "generated-names" not in rules(report)


# ---------------------------------------------------------------------------------------------------------------
# "Changing store names"


@pytest.mark.parametrize("form", FORMS)
def test_a_renamed_store_leaves_its_changelog_and_state_behind(form):
    report = check_upgrade(as_form(daily_orders(), form), as_form(daily_orders(store="orders-v2"), form),
                           before_config={"application.id": "daily-order-aggregator"},
                           after_config={"application.id": "daily-order-aggregator"})
    (renamed,) = report.unsafe
    assert (renamed.rule, renamed.subject) == ("store-renamed", "orders -> orders-v2")
    assert "daily-order-aggregator-orders-v2-changelog" in renamed.detail
    assert "daily-order-aggregator-orders-changelog is no longer read" in renamed.detail


def with_extra_store(*, extra: bool, global_table: bool = False) -> Topology:
    builder = StreamsBuilder()
    builder.stream("orders-by-customer").group_by_key().count(Materialized.as_("orders")).to_stream().to("out")
    if extra:
        if global_table:
            builder.global_table("products", Consumed.with_(S, S), Materialized.as_("products"))
        else:
            builder.stream("returns").group_by_key().count(Materialized.as_("returns")).to_stream().to("out-2")
    return builder.build()


@pytest.mark.parametrize("form", FORMS)
def test_a_new_store_starts_empty_and_a_new_global_store_is_filled_from_its_topic(form):
    added = check_upgrade(as_form(with_extra_store(extra=False), form), as_form(with_extra_store(extra=True), form))
    assert ("store-added", "safe", "returns") in found(added) and added.is_safe
    assert ("source-topics-changed", "safe", "returns") in found(added)
    glob = check_upgrade(as_form(with_extra_store(extra=False), form),
                         as_form(with_extra_store(extra=True, global_table=True), form))
    assert ("store-added", "restore", "products") in found(glob) and glob.is_safe


@pytest.mark.parametrize("form", FORMS)
def test_a_removed_store_drops_its_state(form):
    report = check_upgrade(as_form(with_extra_store(extra=True), form), as_form(with_extra_store(extra=False), form),
                           after_config={"application.id": "shop"})
    assert ("store-removed", "unsafe", "returns") in found(report)
    assert ("source-topics-changed", "warning", "returns") in found(report)
    assert "shop-returns-changelog" in str(report)
    glob = check_upgrade(as_form(with_extra_store(extra=True, global_table=True), form),
                         as_form(with_extra_store(extra=False), form))
    assert ("store-removed", "safe", "products") in found(glob) and glob.is_safe


# ---------------------------------------------------------------------------------------------------------------
# "Updating stateful operation configs": window size (unsafe for aggregations) versus grace, joins, suppression


def windowed_count(windows) -> Topology:
    builder = StreamsBuilder()
    (builder.stream("clicks").group_by_key().windowed_by(windows)
     .count(Named.as_("WindowedCount"), Materialized.as_("clicks-per-window")).to_stream().to("out"))
    return builder.build()


@pytest.mark.parametrize("before, after", [
    (TimeWindows.of_size_with_no_grace(100), TimeWindows.of_size_with_no_grace(10)),   # the guide's 100 ms -> 10 ms
    (TimeWindows.of_size_with_no_grace(100), TimeWindows.of_size_with_no_grace(100).advance_by(50)),
    (SessionWindows.of_inactivity_gap_with_no_grace(100), SessionWindows.of_inactivity_gap_with_no_grace(200)),
    (SlidingWindows.of_time_difference_with_no_grace(100), SlidingWindows.of_time_difference_with_no_grace(10)),
], ids=["time-size", "time-advance", "session-gap", "sliding-difference"])
def test_a_changed_window_size_of_an_aggregation_is_unsafe(before, after):
    report = check_upgrade(windowed_count(before), windowed_count(after))
    (changed,) = report.unsafe
    assert (changed.rule, changed.subject) == ("window-size-changed", "clicks-per-window")
    assert "WindowedCount" in changed.detail and "mix both window sizes" in changed.detail


def test_a_changed_grace_period_is_safe():
    report = check_upgrade(windowed_count(TimeWindows.of_size_and_grace(100, 10)),
                           windowed_count(TimeWindows.of_size_and_grace(100, 50)))
    assert report.is_safe and ("window-grace-changed", "safe", "clicks-per-window") in found(report)
    assert ("unchanged", "safe", "topology") in found(report)


def windowed_join(windows) -> Topology:
    builder = StreamsBuilder()
    left, right = builder.stream("left"), builder.stream("right")
    left.join(right, lambda a, b: (a, b), windows, StreamJoined.with_(S, S, S).with_name("join")
              .with_store_name("join-store")).to("joined")
    return builder.build()


def test_a_changed_join_window_is_safe():
    report = check_upgrade(windowed_join(JoinWindows.of_time_difference_with_no_grace(100)),
                           windowed_join(JoinWindows.of_time_difference_and_grace(10, 5)))
    assert report.is_safe
    changed = {f.subject for f in report.findings if f.rule == "join-window-changed" and f.severity == "safe"}
    assert changed and all(s.startswith("join-store") for s in changed)


def test_a_join_window_change_names_the_users_windows_on_both_sides():
    """Both join stores report the JoinWindows the user gave (read from the join's typed windows, not from the
    positional constructor arguments, where the right side's bounds are swapped)."""
    before = JoinWindows.of_time_difference_and_grace(10, 5).before(30)
    after = JoinWindows.of_time_difference_and_grace(10, 5).before(40)
    report = check_upgrade(windowed_join(before), windowed_join(after))
    details = {f.subject: f.detail for f in report.findings if f.rule == "join-window-changed"}
    assert set(details) == {"join-store-this-join-store", "join-store-other-join-store"}
    for detail in details.values():
        assert f"now uses {after} instead of {before}" in detail
        assert "beforeMs=40, afterMs=10, graceMs=5" in detail


def suppressed_count(buffer: BufferConfig) -> Topology:
    builder = StreamsBuilder()
    (builder.stream("clicks").group_by_key().windowed_by(TimeWindows.of_size_and_grace(100, 10))
     .count(Materialized.as_("counts")).suppress(Suppressed.until_window_closes(buffer).with_name("final"))
     .to_stream().to("out"))
    return builder.build()


def test_a_changed_suppression_buffer_is_safe():
    report = check_upgrade(suppressed_count(BufferConfig.unbounded()),
                           suppressed_count(BufferConfig.max_records_(1000).shutdown_when_full()))
    assert report.is_safe and ("suppression-changed", "safe", "final-store") in found(report)


def test_windows_cannot_be_checked_from_text():
    before = windowed_count(TimeWindows.of_size_with_no_grace(100))
    after = windowed_count(TimeWindows.of_size_with_no_grace(10))
    for pair in ((str(before.describe()), after), (before, str(after.describe()))):
        report = check_upgrade(*pair)
        assert ("windows-not-checked", "warning", "windows") in found(report)
        assert report.is_safe     # unknown, not known to be unsafe
        assert "window-size-changed" not in rules(report)


def test_text_with_the_windows_windows_of_recorded_is_checked_as_the_topologies_are():
    """What the checkpoint manifest does: describe() text plus the JSON-ready windows of each side."""
    def text_and_windows(topology: Topology) -> tuple[str, dict]:
        return str(topology.describe()), json.loads(json.dumps(windows_of(topology)))   # through JSON, as stored

    for make, before, after, expected in [
        (windowed_count, TimeWindows.of_size_with_no_grace(100), TimeWindows.of_size_with_no_grace(10),
         ("window-size-changed", "unsafe", "clicks-per-window")),
        (windowed_count, TimeWindows.of_size_and_grace(100, 10), TimeWindows.of_size_and_grace(100, 50),
         ("window-grace-changed", "safe", "clicks-per-window")),
        (suppressed_count, BufferConfig.unbounded(), BufferConfig.max_records_(1000).shutdown_when_full(),
         ("suppression-changed", "safe", "final-store")),
    ]:
        (text, windows), (new_text, new_windows) = text_and_windows(make(before)), text_and_windows(make(after))
        report = check_upgrade(text, new_text, before_windows=windows, after_windows=new_windows)
        assert expected in found(report) and "windows-not-checked" not in rules(report)
        assert found(report) == found(check_upgrade(make(before), make(after)))
        same = check_upgrade(text, text, before_windows=windows, after_windows=windows)
        assert {f.rule for f in same.findings} == {"unchanged"}
    joined = windows_of(windowed_join(JoinWindows.of_time_difference_and_grace(10, 5)))
    assert {w["type"] for found_ in joined.values() for w in found_} == {"JoinWindows"}


def test_windows_that_are_not_windows_of_data_are_refused_naming_the_side():
    text = str(windowed_count(TimeWindows.of_size_with_no_grace(100)).describe())
    with pytest.raises(ValueError, match="before_windows: not windows as windows_of records them"):
        check_upgrade(text, text, before_windows={"clicks-per-window": [{"kind": "aggregation"}]})
    with pytest.raises(ValueError, match="after_windows: not with a Topology"):
        check_upgrade(text, windowed_count(TimeWindows.of_size_with_no_grace(100)), after_windows={})
    with pytest.raises(ValueError, match="after_windows"):
        check_upgrade(text, text, after_windows=["not", "a", "mapping"])
    with pytest.raises(ValueError, match="topology"):
        windows_of(text)


# ---------------------------------------------------------------------------------------------------------------
# "Updating processing logic", renumbered subtopologies, input topics


@pytest.mark.parametrize("form", FORMS)
def test_changed_logic_with_the_same_structure_is_safe(form):
    report = check_upgrade(as_form(word_count(named=True), form), as_form(word_count(named=True, upper=False), form))
    assert report.is_safe
    assert ("unchanged", "safe", "topology") in found(report)
    assert not [f for f in report.findings if f.severity in ("unsafe", "restore")]


@pytest.mark.parametrize("form", FORMS)
def test_a_new_subtopology_before_a_stateful_one_renumbers_it(form):
    report = check_upgrade(as_form(word_count(named=True), form), as_form(word_count(named=True, branch=True), form))
    assert report.is_safe
    assert ("subtopology-renumbered", "restore", "sub-topology 1 -> 2") in found(report)
    assert ("source-topics-changed", "safe", "clicks") in found(report)
    assert "store-moved" not in rules(report)
    back = check_upgrade(as_form(word_count(named=True, branch=True), form), as_form(word_count(named=True), form))
    assert ("fewer-subtopologies", "warning", "sub-topologies [2]") in found(back)
    assert ("source-topics-changed", "warning", "clicks") in found(back)


# ---------------------------------------------------------------------------------------------------------------
# "Changing configs": topology.optimization


def test_kafkas_own_descriptions_with_merge_repartition_topics_turned_on():
    """Two describe() texts written by Kafka Streams itself: the same app with optimization none, then all."""
    none, every = golden("selectkey-optimization-none"), golden("selectkey-optimization-all")
    report = check_upgrade(none["topology"], every["topology"], before_config=none["config"],
                           after_config=every["config"])
    assert {("repartition-removed", "unsafe", "concat-repartition"),
            ("optimization-changed", "unsafe", "topology.optimization: merge.repartition.topics"),
            ("optimization-changed", "safe", "topology.optimization: reuse.ktable.source.topics"),
            ("store-moved", "restore", "concat"),
            ("fewer-subtopologies", "warning", "sub-topologies [2]")} <= found(report)
    assert not [f for f in report.findings if f.subject == "counts" and f.severity != "safe"]
    assert "key-changing-before-stateful" not in rules(report)   # the key was already changed before


def test_kafkas_own_description_compared_with_itself_is_unchanged():
    text = golden("wordcount-cached")["topology"]
    report = check_upgrade(text, text)
    assert report.is_safe and ("unchanged", "safe", "topology") in found(report)


def test_our_topology_against_kafkas_committed_description():
    """A team commits Kafka Streams' description and checks its new code against it in CI."""
    committed = golden("wordcount-cached")["topology"]
    builder = StreamsBuilder()
    (builder.stream("sentences", Consumed.with_(S, S)).flat_map_values(str.split)
     .filter(lambda _k, w: len(w) > 1)
     .group_by(lambda _k, w: w, Grouped.with_(S, S, name="by-word")).count(Materialized.as_("word-counts"))
     .to_stream().to("word-counts-out"))
    report = check_upgrade(committed, builder.build())
    assert report.is_safe and not report.restore
    assert ("windows-not-checked", "warning", "windows") in found(report)


@pytest.mark.parametrize("before, after, severity", [
    ("none", "reuse.ktable.source.topics", "safe"),
    ("reuse.ktable.source.topics", "none", "unsafe"),
    ("none", "merge.repartition.topics", "unsafe"),
    ("all", "single.store.self.join,reuse.ktable.source.topics", "unsafe"),
])
def test_each_optimization_has_its_own_upgrade_rule(before, after, severity):
    topology = word_count(named=True)
    report = check_upgrade(topology, topology, before_config={"topology.optimization": before},
                           after_config={"topology.optimization": after})
    assert [f.severity for f in report.findings if f.rule == "optimization-changed"] == [severity]


def test_single_store_self_join_needs_every_operator_named():
    report = check_upgrade(word_count(), word_count(), before_config={}, after_config={"topology.optimization":
                                                                                       "single.store.self.join"})
    assert ("optimization-changed", "warning", "topology.optimization: single.store.self.join") in found(report)
    assert check_upgrade(word_count(named=True), word_count(named=True), before_config={},
                         after_config={"topology.optimization": "single.store.self.join"}).findings[0].severity \
        == "safe"


def test_a_changed_dsl_store_format_is_unsafe_where_there_are_stores():
    topology = word_count(named=True)
    report = check_upgrade(topology, topology, before_config={}, after_config={"dsl.store.format": "headers"})
    assert ("dsl-store-format-changed", "unsafe", "dsl.store.format") in found(report)
    assert "from DEFAULT to HEADERS" in report.unsafe[0].detail
    assert "dsl-store-format-changed" not in rules(check_upgrade(topology, topology, before_config={
        "dsl.store.format": "HEADERS"}, after_config={"dsl.store.format": "headers"}))


def test_no_configs_means_no_optimization_check():
    assert "optimization-changed" not in rules(check_upgrade(word_count(), word_count()))


# ---------------------------------------------------------------------------------------------------------------
# "Increasing topic partitions"


@pytest.mark.parametrize("form", FORMS)
def test_more_partitions_for_a_stateful_subtopology_is_unsafe(form):
    topology = as_form(word_count(named=True), form)
    before = {"sentences": 4, "by-word-repartition": 4}
    report = check_upgrade(topology, topology, before_partitions=before,
                           after_partitions={"sentences": 8, "by-word-repartition": 8})
    assert {("partitions-changed", "unsafe", "by-word-repartition"),
            ("partitions-changed", "safe", "sentences")} <= found(report)
    assert "blue/green" in str(report)
    assert check_upgrade(topology, topology, before_partitions=before, after_partitions=before).is_safe


# ---------------------------------------------------------------------------------------------------------------
# The report and its inputs


def test_the_report_explains_itself_and_serializes_to_json():
    report = check_upgrade(word_count(), word_count(filtered=True))
    text = str(report)
    assert text.splitlines()[0].startswith("Topology upgrade: UNSAFE (2 unsafe")
    assert all(line.startswith("- [") for line in text.splitlines()[1:])
    data = json.loads(json.dumps(report.to_dict()))
    assert data["safe"] is False and data["counts"]["unsafe"] == 2
    assert {"rule", "severity", "subject", "detail"} == set(data["findings"][0])
    assert [f["severity"] for f in data["findings"]] == sorted((f["severity"] for f in data["findings"]),
                                                               key=SEVERITIES.index)


def test_rules_have_unique_stable_ids():
    ids = [rule_id for rule_id, _ in RULES]
    assert len(ids) == len(set(ids)) and "store-renamed" in ids and "partitions-changed" in ids


def test_a_finding_has_a_known_severity():
    with pytest.raises(ValueError, match="severity must be one of"):
        Finding("store-renamed", "bad", "x", "y")


@pytest.mark.parametrize("kwargs, message", [
    ({"before": 42}, "before must be a Topology, a TopologyDescription or describe\\(\\) text, got 42"),
    ({"after": "Topologies:\n  nonsense\n"}, "after: not a topology description: line 2"),
    ({"before_partitions": {"clicks": 0}}, "before_partitions\\['clicks'\\] must be an int >= 1"),
    ({"after_partitions": ["clicks"]}, "after_partitions must be a Mapping"),
    ({"after_config": {"topology.optimization": "fast"}}, "after_config: unrecognized topology.optimization"),
])
def test_bad_input_is_a_value_error_naming_it(kwargs, message):
    args = {"before": word_count(), "after": word_count(), **kwargs}
    with pytest.raises(ValueError, match=message):
        check_upgrade(args.pop("before"), args.pop("after"), **args)


def test_an_aggregation_that_becomes_windowed_is_unsafe():
    builder = StreamsBuilder()
    (builder.stream("clicks").group_by_key().count(Named.as_("WindowedCount"), Materialized.as_("clicks-per-window"))
     .to_stream().to("out"))
    plain = builder.build()
    windowed = windowed_count(TimeWindows.of_size_with_no_grace(100))
    for before, after in ((plain, windowed), (windowed, plain)):
        report = check_upgrade(before, after)
        assert [(f.rule, f.subject) for f in report.unsafe] == [("window-size-changed", "clicks-per-window")]


SUBSCRIPTION = """Topologies:
   Sub-topology: 0
    Source: in (topics: [orders])
      --> register
    Processor: register (stores: [])
      --> to-subscription
      <-- in
    Sink: to-subscription (topic: KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic)
      <-- register

  Sub-topology: 1
    Source: from-subscription (topics: [KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic])
      --> subscribe
    Processor: subscribe (stores: [subscriptions])
      --> none
      <-- from-subscription

"""


def test_any_topic_the_topology_writes_and_reads_is_internal_like_a_repartition_topic():
    """A foreign-key join's subscription topics end in -topic, not -repartition."""
    after = SUBSCRIPTION.replace("0000000006-topic", "0000000007-topic")
    report = check_upgrade(SUBSCRIPTION, after)
    (renamed,) = report.unsafe
    assert (renamed.rule, renamed.subject) == (
        "repartition-renamed", "KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic -> "
                               "KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000007-topic")
    assert "generated index shifted from 0000000006 to 0000000007" in renamed.detail
    assert not rules(report) & {"source-topics-changed", "store-moved"}
