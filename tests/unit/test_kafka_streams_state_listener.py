"""``KafkaStreams.set_state_listener`` without Spark: the listener sees every transition of closing an application
that never started, as Kafka's (CREATED -> PENDING_SHUTDOWN -> NOT_RUNNING), and bad listeners are refused."""
from __future__ import annotations

import pytest

from streams_on_spark import KafkaStreams, Serdes, StreamsBuilder
from streams_on_spark.errors import IllegalStateError
from streams_on_spark.kafka_streams import State


def streams(tmp_path) -> KafkaStreams:
    builder = StreamsBuilder()
    builder.stream("in").to("out")
    return KafkaStreams(builder.build(), {"application.id": "listener", "checkpoint.location": str(tmp_path / "ck"),
                                          "default.key.serde": Serdes.String(), "default.value.serde": Serdes.String()})


def test_closing_a_created_application_goes_through_pending_shutdown(tmp_path):
    app = streams(tmp_path)
    seen: list[tuple[State, State]] = []
    app.set_state_listener(lambda new, old: seen.append((new, old)))
    app.close()
    app.close()   # already NOT_RUNNING: no transition
    assert seen == [(State.PENDING_SHUTDOWN, State.CREATED), (State.NOT_RUNNING, State.PENDING_SHUTDOWN)]
    with pytest.raises(IllegalStateError, match="Can only set StateListener before calling start"):
        app.set_state_listener(lambda new, old: None)


def test_a_failing_listener_is_logged_and_the_transition_happens(tmp_path, caplog):
    app = streams(tmp_path)

    def broken(new, old):
        raise RuntimeError("listener bug")

    app.set_state_listener(broken)
    app.close()
    assert app.state is State.NOT_RUNNING
    assert "state listener failed on CREATED -> PENDING_SHUTDOWN" in caplog.text


def test_a_listener_must_be_callable(tmp_path):
    with pytest.raises(ValueError, match="state listener must be callable"):
        streams(tmp_path).set_state_listener("not a function")   # type: ignore[arg-type]
