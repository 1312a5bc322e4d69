"""A windowed operator's time parameters are typed fields (``OperatorWindows``) of its supplier and node spec: the
processor is built from them and the upgrade check reads them (issue 28, item 4)."""
from __future__ import annotations

import pytest

from streams_on_spark import JoinWindows, SessionWindows, StreamsBuilder, Suppressed, TimeWindows
from streams_on_spark.dsl.suppressed import BufferConfig
from streams_on_spark.errors import TopologyException
from streams_on_spark.serde import Serdes
from streams_on_spark.topology.builder import InternalTopologyBuilder, ProcessorNodeSpec
from streams_on_spark.window import OperatorWindows

S = Serdes.String()


def specs(topology) -> dict[str, ProcessorNodeSpec]:
    return {n: s for n, s in topology.internal_builder.node_factories.items() if isinstance(s, ProcessorNodeSpec)}


def test_a_windowed_aggregation_and_its_suppression_carry_their_windows():
    windows = TimeWindows.of_size_and_grace(100, 20)
    builder = StreamsBuilder()
    (builder.stream("in").group_by_key().windowed_by(windows).count()
     .suppress(Suppressed.until_window_closes(BufferConfig.unbounded())).to_stream().to("out"))
    by_kind = {s.windows.kind: s for s in specs(builder.build()).values() if s.windows is not None}
    aggregation, suppression = by_kind["aggregation"], by_kind["suppression"]
    assert aggregation.windows == OperatorWindows("aggregation", windows, 20)
    assert aggregation.supplier().windows is windows          # the processor reads the same field
    assert aggregation.stores and aggregation.stores[0].startswith("KSTREAM-AGGREGATE-STATE-STORE-")
    assert suppression.windows.spec.final_results and suppression.windows.grace_ms == 20
    assert suppression.supplier().wait_ms == 20
    assert set(by_kind) == {"aggregation", "suppression"}      # sources, sinks and stateless nodes carry none


def test_a_session_aggregation_carries_its_session_windows():
    windows = SessionWindows.of_inactivity_gap_and_grace(50, 7)
    builder = StreamsBuilder()
    builder.stream("in").group_by_key().windowed_by(windows).count().to_stream().to("out")
    [spec] = [s for s in specs(builder.build()).values() if s.windows is not None]
    assert spec.windows == OperatorWindows.aggregation(windows) and spec.windows.grace_ms == 7
    assert spec.supplier().windows is windows


def test_both_sides_of_a_stream_stream_join_carry_the_users_join_windows():
    windows = JoinWindows.of_time_difference_and_grace(10, 5).before(30)
    builder = StreamsBuilder()
    builder.stream("left").join(builder.stream("right"), lambda a, b: (a, b), windows).to("out")
    joins = {n: s for n, s in specs(builder.build()).items() if s.windows is not None}
    assert sorted(n.split("-0")[0] for n in joins) == ["KSTREAM-JOINOTHER", "KSTREAM-JOINTHIS"]
    for name, spec in joins.items():
        assert spec.windows == OperatorWindows("join", windows, 5)
        processor = spec.supplier()
        assert (processor.window_before_ms, processor.window_after_ms, processor.grace_ms) == (30, 10, 5)
        # each side reads its own bounds: the right side looks the other way
        expected = (30, 10) if "JOINTHIS" in name else (10, 30)
        assert (processor.before_ms, processor.after_ms) == expected


def test_operator_windows_refuse_an_unknown_kind_or_no_windows():
    with pytest.raises(ValueError, match="kind must be one of"):
        OperatorWindows("hopping", TimeWindows.of_size_with_no_grace(10), 0)
    with pytest.raises(ValueError, match="needs its window specification"):
        OperatorWindows("join", None, 0)


def test_add_processor_refuses_windows_of_another_type():
    builder = InternalTopologyBuilder()
    builder.add_source("source", ["in"])
    with pytest.raises(TopologyException, match="windows must be OperatorWindows, got TimeWindows"):
        builder.add_processor("p", object, ["source"], TimeWindows.of_size_with_no_grace(10))
