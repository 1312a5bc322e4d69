"""``SparkRuntime.process_all_available``: when the queries are done, without Spark (fake queries over fake topics)."""
from __future__ import annotations

from types import SimpleNamespace

from streams_on_spark.runtime.spark.runtime import SparkRuntime


class Topics:
    """End offsets of one-partition topics."""

    def __init__(self, **ends: int) -> None:
        self.ends = dict(ends)

    def end_offsets(self, topic: str) -> list[int]:
        return [self.ends.get(topic, 0)]


class Query:
    """A query that, asked to process what is available, reads its topics to their end and appends one record to
    each topic it writes per record read (as Spark's ``processAllAvailable`` returns once a batch is committed)."""

    def __init__(self, topics: Topics, reads: str, writes: tuple[str, ...] = (), until: int = 1 << 30) -> None:
        self.topics, self.reads, self.writes, self.until = topics, reads, writes, until
        self.read_to = 0
        self.calls = 0
        self.on_its_own = False   # runs its batches without being asked (a query with wall-clock timeouts)
        self.status = {"isTriggerActive": False, "isDataAvailable": False}
        self.recentProgress: list = []

    def processAllAvailable(self) -> None:
        self.calls += 1
        self._read()

    def _read(self) -> None:
        new = self.topics.ends.get(self.reads, 0) - self.read_to
        self.read_to += new
        for topic in self.writes:
            if self.topics.ends.get(topic, 0) < self.until:
                self.topics.ends[topic] = self.topics.ends.get(topic, 0) + new

    @property
    def lastProgress(self) -> dict:
        if self.on_its_own:
            self._read()
        return {"sources": [{"endOffset": {self.reads: {"0": self.read_to}}}]}


def runtime(topics: Topics, *queries: Query) -> SparkRuntime:
    rt = SparkRuntime.__new__(SparkRuntime)
    rt.connector = topics
    rt.queries = dict(enumerate(queries))
    rt.functions = {sid: SimpleNamespace(wall_clock_timeouts=False, input_topics=lambda q=q: [q.reads])
                    for sid, q in rt.queries.items()}
    rt.input_topics = sorted({q.reads for q in queries})
    rt._logged = {}
    return rt


def test_a_chain_of_queries_is_done_after_one_round():
    """The downstream query reads the upstream's output in the same round: no second round of empty triggers
    (each costs a trigger interval and a trigger per query) to see that nothing grew."""
    topics = Topics(sentences=5)
    upstream = Query(topics, "sentences", writes=("repartition",))
    downstream = Query(topics, "repartition", writes=("out",))
    runtime(topics, upstream, downstream).process_all_available(timeout_s=5)
    assert (upstream.read_to, downstream.read_to) == (5, 5)
    assert (upstream.calls, downstream.calls) == (1, 1)


def test_a_topic_written_downstream_and_read_upstream_takes_another_round():
    """A later query's output read by an earlier one (a loop back) is not yet read after the round: the queries
    run again until every topic is read to its end."""
    topics = Topics(sentences=3)
    first = Query(topics, "loop")
    second = Query(topics, "sentences", writes=("loop",))
    rt = runtime(topics, first, second)
    rt.process_all_available(timeout_s=5)
    assert (first.read_to, second.read_to) == (3, 3)
    assert first.calls == 2


def test_wall_clock_queries_need_a_round_that_grew_nothing():
    """A query with wall-clock timeouts runs batches without input, which its trigger status does not show: with
    one, the queries are done only after a whole round in which no topic they read grew."""
    topics = Topics(sentences=2)
    upstream = Query(topics, "sentences", writes=("repartition",))
    downstream = Query(topics, "repartition")
    rt = runtime(topics, upstream, downstream)
    rt.functions[1].wall_clock_timeouts = downstream.on_its_own = True   # its lag is awaited, not its triggers
    rt.process_all_available(timeout_s=5)
    assert downstream.read_to == 2
    assert upstream.calls == 2
