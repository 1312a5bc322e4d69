"""A user's test file: nothing but the pytest plugin's ``topology_driver`` fixture, and a Processor, a mapper and a
Serde defined right here (on Spark they reach the workers pickled by value: no worker can import this module).

Plain ``pytest`` runs it locally; ``pytest --streams-engine=all --streams-partitions=1,4 <this file>`` runs each test
as ``local-1p``, ``local-4p``, ``spark-1p`` and ``spark-4p`` (test_pytest_plugin.py does, in a fresh pytest).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from streams_on_spark import Consumed, Grouped, Processor, Produced, Serde, Serdes, StreamsBuilder, Stores, Topology

S, L = Serdes.String(), Serdes.Long()


@dataclass(frozen=True)
class Click:
    user: str
    page: str


class ClickSerde(Serde):
    """JSON for ``Click``: a serde of the test's own."""

    def serialize(self, topic, value):
        return None if value is None else json.dumps(asdict(value), sort_keys=True).encode()

    def deserialize(self, topic, data):
        return None if data is None else Click(**json.loads(data))


class CountPerUser(Processor):
    """Counts each user's clicks in a key-value store and forwards the running count."""

    def init(self, context):
        super().init(context)
        self.store = context.get_state_store("clicks-per-user")

    def process(self, record):
        count = (self.store.get(record.key) or 0) + 1
        self.store.put(record.key, count)
        self.context.forward(record.with_value(count))


def by_user(key, click):
    """A mapper of the test's own: re-key each click by its user."""
    return click.user


def clicks_topology() -> Topology:
    return (Topology()
            .add_source("clicks", "clicks", key_serde=S, value_serde=ClickSerde())
            .add_processor("count", CountPerUser, "clicks")
            .add_state_store(Stores.key_value_store_builder(Stores.in_memory_key_value_store("clicks-per-user"), S, L),
                             "count")
            .add_sink("counts", "counts", "count", key_serde=S, value_serde=L))


CLICKS = [("alice", Click("alice", "/")), ("bob", Click("bob", "/a")), ("alice", Click("alice", "/b")),
          ("carol", Click("carol", "/")), ("alice", Click("alice", "/c")), ("bob", Click("bob", "/"))]


def test_a_processor_and_serde_of_the_test_module_count_per_user(topology_driver):
    driver = topology_driver(clicks_topology())
    driver.create_input_topic("clicks", S, ClickSerde()).pipe_key_value_list(CLICKS)
    records = driver.create_output_topic("counts", S, L).read_key_values_to_list()
    per_user: dict[str, list[int]] = {}
    for user, count in records:
        per_user.setdefault(user, []).append(count)
    assert per_user == {"alice": [1, 2, 3], "bob": [1, 2], "carol": [1]}
    stored = {e.key: e.value for p in driver.store_partitions("clicks-per-user")
              for e in driver.get_key_value_store("clicks-per-user", p).all()}
    assert stored == {"alice": 3, "bob": 2, "carol": 1}


def test_a_mapper_of_the_test_module_rekeys_before_counting(topology_driver):
    builder = StreamsBuilder()
    (builder.stream("clicks", Consumed.with_(S, ClickSerde()))
     .select_key(by_user)
     .group_by_key(Grouped.with_(S, ClickSerde()))
     .count()
     .to_stream()
     .to("counts", Produced.with_(S, L)))
    driver = topology_driver(builder.build())
    driver.create_input_topic("clicks", S, ClickSerde()).pipe_key_value_list(
        [(f"session-{i}", click) for i, (_, click) in enumerate(CLICKS)])
    latest = driver.create_output_topic("counts", S, L).read_key_values_to_map()
    assert latest == {"alice": 3, "bob": 2, "carol": 1}
