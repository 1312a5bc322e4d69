"""The test driver's modes as objects beside an application's: the clock (the micro-batch's time vs the driver's
mock clock moved by ticks), the batch execution (a batch processed whole vs Kafka's driver's one task, record by
record with its internal topics looped back) and the returned output (the driver's callback never travels to the
tasks). No Spark needed."""
from __future__ import annotations

import pickle

from pyspark import cloudpickle

from streams_on_spark import Consumed, Produced, Repartitioned, Serdes, StreamsBuilder
from streams_on_spark.config import TaskConfig
from streams_on_spark.record_batch import RecordBatch
from streams_on_spark.runtime.spark.clock import SYSTEM_CLOCK, MockClock, WallClock
from streams_on_spark.runtime.spark.execution import PROCESS_AVAILABLE, DriverTask
from streams_on_spark.runtime.spark.output import ReturnedOutput
from streams_on_spark.runtime.spark.task_function import SubtopologyTaskFunction
from streams_on_spark.topology.partitions import TopicLayout

S = Serdes.String()


class Punctuations:
    """Stands for a task: counts its wall-clock punctuations and the time its clock read at each."""

    def __init__(self, clock: WallClock) -> None:
        self.clock, self.at = clock, []

    def punctuate_wall_clock(self) -> bool:
        self.at.append(self.clock())
        return True


def test_the_system_clock_reads_the_batch_time_and_punctuates_after_the_batch():
    clock = SYSTEM_CLOCK.task_clock()
    assert SYSTEM_CLOCK.reads_batch_time and SYSTEM_CLOCK.tick_topic("app-subtopology-0") is None
    SYSTEM_CLOCK.start_batch(clock, saved_ms=-1, batch_ms=5_000)
    assert clock() == 5_000
    task = Punctuations(clock)
    SYSTEM_CLOCK.punctuate_before(task, clock, [])
    assert task.at == []
    SYSTEM_CLOCK.punctuate_after(task)
    assert task.at == [5_000]
    assert SYSTEM_CLOCK.saved_ms(clock) == -1   # nothing kept: a replay reads the batch's time again
    SYSTEM_CLOCK.start_batch(clock, saved_ms=-1, batch_ms=-1)   # outside a query: the system's time
    assert clock.fixed_ms is None


def test_the_mock_clock_moves_only_by_ticks_and_punctuates_before_the_batch():
    mock = MockClock(1_000)
    assert not mock.reads_batch_time and mock.tick_topic("app-subtopology-1") == "app-subtopology-1-wall-clock"
    clock = mock.task_clock()
    assert clock() == 1_000
    mock.start_batch(clock, saved_ms=-1, batch_ms=99_000)   # the batch's time is not read
    assert clock() == 1_000
    mock.start_batch(clock, saved_ms=3_000, batch_ms=99_000)   # the time the task kept in its state
    assert clock() == 3_000
    task = Punctuations(clock)
    mock.punctuate_before(task, clock, [])
    mock.punctuate_after(task)
    assert task.at == []
    mock.punctuate_before(task, clock, [4_000, 7_000])
    assert task.at == [7_000] and mock.saved_ms(clock) == 7_000


def function(execution, clock=SYSTEM_CLOCK) -> SubtopologyTaskFunction:
    """The one task of a topology writing each value to "out" directly and upper-cased through a repartition."""
    builder = StreamsBuilder()
    words = builder.stream("in", Consumed.with_(S, S))
    words.to("out", Produced.with_(S, S))
    (words.select_key(lambda k, v: v).repartition(Repartitioned.as_("by-value").with_key_serde(S).with_value_serde(S))
     .map_values(str.upper).to("out", Produced.with_(S, S)))
    internal = builder.build({"application.id": "app"}).internal_builder
    internal.application_id = "app"
    spec = execution.subtopologies(internal)[0]
    layout = TopicLayout.of(internal, "app", {"in": 1, "out": 1, "app-by-value-repartition": 1})
    return SubtopologyTaskFunction(internal, 0, TaskConfig("app"), layout, ReturnedOutput(), clock=clock,
                                   execution=execution, spec=spec)


def run(fn: SubtopologyTaskFunction, values: list[str]) -> list[tuple]:
    task = fn.new_task(0, None)
    batch = fn.execution.batch(task, fn.loop_back_topics())
    batch.add_record_batch("in", 0, 0, RecordBatch.of_columns("in", 0, list(range(len(values))), [None] * len(values),
                                                               [v.encode() for v in values], [()] * len(values)))
    batch.process()
    task.commit()
    out = [(r.topic.removeprefix("app-"), r.key, r.value) for r in batch.drain()]
    task.close()
    return out


def test_the_driver_task_runs_each_record_to_the_end_looping_its_internal_topics_back():
    fn = function(DriverTask())
    assert fn.loop_back_topics() == {"app-by-value-repartition"}
    assert fn.input_topics() == ["in"]   # the query does not read what the task loops back
    assert run(fn, ["a", "b"]) == [
        ("out", None, b"a"), ("by-value-repartition", b"a", b"a"), ("out", b"a", b"A"),
        ("out", None, b"b"), ("by-value-repartition", b"b", b"b"), ("out", b"b", b"B")]


def test_an_applications_task_processes_its_batch_whole_without_looping_back():
    fn = function(PROCESS_AVAILABLE)
    assert fn.loop_back_topics() == frozenset()
    assert len(PROCESS_AVAILABLE.subtopologies(fn.topology)) == 2   # a task per subtopology
    assert run(fn, ["a", "b"]) == [("out", None, b"a"), ("by-value-repartition", b"a", b"a"),
                                   ("out", None, b"b"), ("by-value-repartition", b"b", b"b")]


def test_a_mock_clock_adds_its_tick_topic_to_what_the_query_reads():
    fn = function(DriverTask(), MockClock(0))
    assert fn.tick_topic == "app-subtopology-0-wall-clock"
    assert fn.input_topics() == ["in", "app-subtopology-0-wall-clock"]
    assert function(PROCESS_AVAILABLE).tick_topic is None


def test_the_returned_output_reaches_the_tasks_without_the_drivers_callback():
    seen = []
    output = ReturnedOutput(seen.append)
    for dumps in (pickle.dumps, cloudpickle.dumps):
        copy = pickle.loads(dumps(output))
        assert isinstance(copy, ReturnedOutput) and copy.on_output is None
    assert output.on_output is not None


def test_the_applications_runtime_names_none_of_the_drivers_modes():
    """``SparkRuntime`` is given its clock, execution, output and the queries' sink; the test driver's objects
    (the mock clock, its one task, the returned output and the sink appending it) are built by the driver's engine."""
    import ast
    from pathlib import Path

    import streams_on_spark.runtime.spark.runtime as runtime

    tree = ast.parse(Path(runtime.__file__).read_text(encoding="utf-8"))
    used = ({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
            | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
            | {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names})
    assert not used & {"ReturnedOutput", "DriverAppend", "MockClock", "DriverTask", "_driver_topic"}
    assert {"SYSTEM_CLOCK", "PROCESS_AVAILABLE", "CommitReport"} <= used
