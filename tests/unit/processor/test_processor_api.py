"""The Processor API inside a task: forwarding, stores, metadata, punctuation by stream time and wall clock."""
from __future__ import annotations

import pytest

from streams_on_spark import (
    Processor,
    PunctuationType,
    Record,
    Serdes,
    StreamsException,
    Stores,
    TestRecord,
    Topology,
    TopologyTestDriver,
)

S = Serdes.String()


def driver_for(topology, wall=0):
    return TopologyTestDriver(topology, {"application.id": "papi"}, initial_wall_clock_time_ms=wall)


class Punctuating(Processor):
    fired: list = []

    def __init__(self, kind: PunctuationType, interval: int = 10) -> None:
        self.kind, self.interval = kind, interval

    def init(self, context):
        super().init(context)
        context.schedule(self.interval, self.kind, self.punctuate)

    def punctuate(self, now: int) -> None:
        Punctuating.fired.append(now)
        self.context.forward(Record("tick", str(now), now))

    def process(self, record):
        pass


def punctuation_topology(kind, interval=10):
    return (Topology()
            .add_source("src", "input", key_serde=S, value_serde=S)
            .add_processor("p", lambda: Punctuating(kind, interval), "src")
            .add_sink("sink", "ticks", "p", key_serde=S, value_serde=S))


def test_stream_time_punctuation_fires_once_per_check_and_skips_missed_intervals():
    Punctuating.fired = []
    with driver_for(punctuation_topology(PunctuationType.STREAM_TIME)) as driver:
        inp = driver.create_input_topic("input", S, S)
        inp.pipe_input("k", "v", 3)    # first record: schedule starts at 0 -> fires at stream time 3
        inp.pipe_input("k", "v", 5)    # next due at 10: no fire
        inp.pipe_input("k", "v", 42)   # jumps: one fire at 42, next at 50
        inp.pipe_input("k", "v", 20)   # out of order: stream time stays 42
        inp.pipe_input("k", "v", 50)   # fires at 50
        ticks = driver.create_output_topic("ticks", S, S).read_values_to_list()
    assert Punctuating.fired == [3, 42, 50]
    assert ticks == ["3", "42", "50"]


def test_wall_clock_punctuation_follows_the_mock_clock():
    Punctuating.fired = []
    with driver_for(punctuation_topology(PunctuationType.WALL_CLOCK_TIME, 100), wall=1_000) as driver:
        driver.advance_wall_clock_time(50)     # 1050 < 1100
        driver.advance_wall_clock_time(60)     # 1110 -> fire
        driver.advance_wall_clock_time(500)    # 1610 -> one fire, next at 1700
        driver.advance_wall_clock_time(90)     # 1700 -> fire
    assert Punctuating.fired == [1110, 1610, 1700]


def test_stream_time_punctuation_does_not_fire_on_wall_clock():
    Punctuating.fired = []
    with driver_for(punctuation_topology(PunctuationType.STREAM_TIME)) as driver:
        driver.advance_wall_clock_time(10_000)
    assert Punctuating.fired == []


def test_cancelled_schedule_stops_firing():
    fired = []

    class Once(Processor):
        def init(self, context):
            super().init(context)
            self.handle = context.schedule(5, PunctuationType.STREAM_TIME, self.tick)

        def tick(self, now):
            fired.append(now)
            self.handle.cancel()

        def process(self, record):
            pass

    topology = Topology().add_source("src", "input", key_serde=S, value_serde=S).add_processor("p", Once, "src")
    with driver_for(topology) as driver:
        inp = driver.create_input_topic("input", S, S)
        for ts in (1, 10, 20):
            inp.pipe_input("k", "v", ts)
    assert fired == [1]


def test_forward_to_a_named_child_and_record_metadata():
    seen = []

    class Router(Processor):
        def process(self, record):
            self.context.forward(record, "left" if record.value == "L" else "right")

    class Tag(Processor):
        def __init__(self, tag):
            self.tag = tag

        def process(self, record):
            meta = self.context.record_metadata()
            seen.append((self.tag, record.value, meta.topic, meta.partition, meta.offset))

    topology = (Topology().add_source("src", "input", key_serde=S, value_serde=S)
                .add_processor("router", Router, "src")
                .add_processor("left", lambda: Tag("left"), "router")
                .add_processor("right", lambda: Tag("right"), "router"))
    with driver_for(topology) as driver:
        inp = driver.create_input_topic("input", S, S)
        inp.pipe_input("k", "L", 1)
        inp.pipe_input("k", "R", 2)
    assert seen == [("left", "L", "input", 0, 0), ("right", "R", "input", 0, 1)]


def test_forward_to_an_unknown_child_is_a_clear_error():
    class Bad(Processor):
        def process(self, record):
            self.context.forward(record, "nowhere")

    topology = Topology().add_source("src", "input", key_serde=S, value_serde=S).add_processor("bad", Bad, "src")
    with driver_for(topology) as driver:
        with pytest.raises(StreamsException, match="nowhere"):
            driver.create_input_topic("input", S, S).pipe_input("k", "v", 1)


def test_unconnected_store_is_a_clear_error():
    class Reader(Processor):
        def init(self, context):
            super().init(context)
            context.get_state_store("secret")

        def process(self, record):
            pass

    topology = (Topology().add_source("src", "input", key_serde=S, value_serde=S)
                .add_processor("reader", Reader, "src")
                .add_processor("other", Reader, "src")
                .add_state_store(Stores.key_value_store_builder(Stores.in_memory_key_value_store("secret"), S, S),
                                 "other"))
    with pytest.raises(StreamsException, match="^failed to initialize processor reader$") as raised:   # Kafka's
        driver_for(topology)
    assert "Processor reader has no access to StateStore secret" in str(raised.value.__cause__)


def test_processor_state_lives_in_its_store_per_task():
    class Dedup(Processor):
        def init(self, context):
            super().init(context)
            self.seen = context.get_state_store("seen")

        def process(self, record):
            if self.seen.put_if_absent(record.key, record.value) is None:
                self.context.forward(record)

    topology = (Topology().add_source("src", "input", key_serde=S, value_serde=S)
                .add_processor("dedup", Dedup, "src")
                .add_state_store(Stores.key_value_store_builder(Stores.in_memory_key_value_store("seen"), S, S),
                                 "dedup")
                .add_sink("out", "output", "dedup", key_serde=S, value_serde=S))
    with driver_for(topology) as driver:
        inp = driver.create_input_topic("input", S, S)
        inp.pipe_record_list([TestRecord("a", "1", 1), TestRecord("a", "2", 2), TestRecord("b", "3", 3)])
        assert driver.create_output_topic("output", S, S).read_key_values_to_list() == [("a", "1"), ("b", "3")]
        assert driver.get_key_value_store("seen").get("a") == "1"
        with pytest.raises(ValueError, match="should be accessed via `get_key_value_store\\(\\)`"):
            driver.get_state_store("seen")


@pytest.mark.parametrize("interval", [0, -5, 1.5])
def test_schedule_rejects_bad_intervals(interval):
    class Bad(Processor):
        def init(self, context):
            context.schedule(interval, PunctuationType.STREAM_TIME, lambda now: None)

        def process(self, record):
            pass

    topology = Topology().add_source("src", "input", key_serde=S, value_serde=S).add_processor("p", Bad, "src")
    with pytest.raises(StreamsException, match="^failed to initialize processor p$") as raised:
        driver_for(topology)
    assert "scheduling interval" in str(raised.value.__cause__)


@pytest.mark.parametrize("args, fragment", [
    (("k", "v", None), "Malformed Record: timestamp must be an int (ms), got None"),
    (("k", "v", "5"), "Malformed Record: timestamp must be an int (ms), got '5'"),
    (("k", "v", 1.5), "Malformed Record: timestamp must be an int (ms), got 1.5"),
    (("k", "v", True), "Malformed Record: timestamp must be an int (ms), got True"),
    (("k", "v", -1), "Malformed Record: timestamp may not be negative, got -1"),
    (("k", "v", 0, 5), "headers must be a dict or an iterable of (key, value) pairs, got 5"),
    (("k", "v", 0, "h=1"), "headers must be a dict or an iterable of (key, value) pairs, got 'h=1'"),
    (("k", "v", 0, [("h",)]), "each header must be a (key, value) pair, got ('h',)"),
    (("k", "v", 0, {1: b"x"}), "header keys must be str, got int"),
    (("k", "v", 0, {"h": 1}), "header 'h' must be bytes, str or None, got int"),
])
def test_record_rejects_bad_timestamps_and_headers_at_construction(args, fragment):
    with pytest.raises(ValueError) as excinfo:
        Record(*args)
    assert fragment in str(excinfo.value)


def test_record_normalizes_headers_and_integral_timestamps():
    numpy = pytest.importorskip("numpy")
    record = Record("k", "v", numpy.int64(7), {"h": "x"})
    assert record.timestamp == 7 and type(record.timestamp) is int
    assert record.headers == (("h", b"x"),)
    assert Record("k", "v", 0, [["h", None]]).headers == (("h", None),)
    assert record.with_headers(None).headers == ()
    with pytest.raises(ValueError, match="timestamp must be an int"):
        record.with_timestamp(None)


class _Forwarder(Processor):
    """On each wall-clock punctuation, forwards one record downstream."""

    def init(self, context):
        super().init(context)
        context.schedule(100, PunctuationType.WALL_CLOCK_TIME, lambda now: context.forward(Record("k", "hop", now)))

    def process(self, record):
        pass


class _Counter(Processor):
    """Counts what it processed (in its store); on each wall-clock punctuation forwards the count so far."""

    def init(self, context):
        super().init(context)
        self.store = context.get_state_store("seen")
        context.schedule(100, PunctuationType.WALL_CLOCK_TIME,
                         lambda now: context.forward(Record("count", str(self.store.get("n") or 0), now)))

    def process(self, record):
        self.store.put("n", (self.store.get("n") or 0) + 1)


def test_every_task_punctuates_before_any_punctuation_output_is_processed():
    """Kafka punctuates all tasks in one pass (one task in its driver), then processes what they produced."""
    topology = (Topology()
                .add_source("src", "in", key_serde=S, value_serde=S)
                .add_processor("forwarder", _Forwarder, "src")
                .add_sink("to-mid", "mid", "forwarder", key_serde=S, value_serde=S)
                .add_source("mid-src", "mid", key_serde=S, value_serde=S)
                .add_processor("counter", _Counter, "mid-src")
                .add_state_store(Stores.key_value_store_builder(Stores.in_memory_key_value_store("seen"), S,
                                                                Serdes.Long()), "counter")
                .add_sink("to-out", "out", "counter", key_serde=S, value_serde=S))
    with driver_for(topology, wall=0) as driver:
        out = driver.create_output_topic("out", S, S)
        driver.advance_wall_clock_time(100)   # both fire; the counter has not seen the forwarded record yet
        assert out.read_values_to_list() == ["0"]
        driver.advance_wall_clock_time(100)   # it was processed after the first pass
        assert out.read_values_to_list() == ["1"]


def test_a_processor_reads_the_application_config():
    """Kafka's ``ProcessorContext.appConfigs()``: every setting the application was given."""
    seen = {}

    class ReadsConfig(Processor):
        def init(self, context):
            super().init(context)
            seen.update(context.app_configs())

        def process(self, record):
            pass

    topology = Topology().add_source("src", "in", key_serde=S, value_serde=S).add_processor("p", ReadsConfig, "src")
    with TopologyTestDriver(topology, {"application.id": "papi", "my.threshold": 7}):
        pass
    assert seen["my.threshold"] == 7 and seen["application.id"] == "papi"
