"""Configuration keys, named as Kafka Streams names them, and their defaults."""
from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from streams_on_spark.error_handlers import (
    DESERIALIZATION_EXCEPTION_HANDLER,
    ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME,
    PROCESSING_EXCEPTION_HANDLER,
    PRODUCTION_EXCEPTION_HANDLER,
    configured_handler,
)

APPLICATION_ID = "application.id"
BOOTSTRAP_SERVERS = "bootstrap.servers"
DEFAULT_KEY_SERDE = "default.key.serde"
DEFAULT_VALUE_SERDE = "default.value.serde"
TOPOLOGY_OPTIMIZATION = "topology.optimization"
DEFAULT_TIMESTAMP_EXTRACTOR = "default.timestamp.extractor"
STATESTORE_CACHE_MAX_BYTES = "statestore.cache.max.bytes"
CACHE_MAX_BYTES_BUFFERING = "cache.max.bytes.buffering"   # the name before Kafka 3.4, still read
DEFAULT_CACHE_MAX_BYTES = 10 * 1024 * 1024
# where the Spark engine keeps tasks' local stores on each executor (default: Spark's per-application files directory)
STATE_DIR = "state.dir"
PROCESSING_GUARANTEE = "processing.guarantee"
AT_LEAST_ONCE = "at_least_once"
EXACTLY_ONCE_V2 = "exactly_once_v2"
# Kafka's private StreamsConfig.InternalConfig key: the wall-clock throttle of ON_WINDOW_CLOSE windowed aggregations
EMIT_INTERVAL_MS_KSTREAMS_WINDOWED_AGGREGATION = "__emit.interval.ms.kstreams.windowed.aggregation__"
DEFAULT_EMIT_INTERVAL_MS = 1000

log = logging.getLogger(__name__)


def _handler_field(key: str) -> Any:
    """A ``TaskConfig`` field holding the error handler ``key`` names (Kafka's default when not configured)."""
    return field(default_factory=lambda: configured_handler({}, key), compare=False, repr=False)


@dataclass(frozen=True)
class TaskConfig:
    """What a task reads from the application config."""

    application_id: str
    default_key_serde: Any = None
    default_value_serde: Any = None
    # error handlers, resolved and configured once (streams_on_spark.error_handlers)
    deserialization_handler: Any = _handler_field(DESERIALIZATION_EXCEPTION_HANDLER)
    processing_handler: Any = _handler_field(PROCESSING_EXCEPTION_HANDLER)
    production_handler: Any = _handler_field(PRODUCTION_EXCEPTION_HANDLER)
    dead_letter_queue_topic: Optional[str] = None
    timestamp_extractor: Any = None
    cache_max_bytes: int = DEFAULT_CACHE_MAX_BYTES
    # Kafka's test driver commits after every record; an application commits per micro-batch on Spark
    commit_every_record: bool = False
    processing_guarantee: str = AT_LEAST_ONCE
    # everything the application was configured with, for ``ProcessorContext.app_configs()``; never printed, as it
    # may hold client secrets
    app_configs: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @staticmethod
    def from_config(config: Optional[Mapping[str, Any]], default_app_id: Optional[str] = None, *,
                    commit_every_record: bool = False) -> "TaskConfig":
        config = dict(config or {})
        app_id = config.get(APPLICATION_ID) or default_app_id
        if not app_id:
            raise ValueError(f"Missing required configuration '{APPLICATION_ID}'")
        for key in (DEFAULT_KEY_SERDE, DEFAULT_VALUE_SERDE):
            serde = config.get(key)
            if serde is not None and not (hasattr(serde, "serialize") and hasattr(serde, "deserialize")):
                raise ValueError(f"Invalid value for configuration '{key}': expected a Serde (e.g. Serdes.String()), "
                                 f"got {serde!r}")
        dead_letter_queue_topic = config.get(ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME)
        if dead_letter_queue_topic is not None and (not isinstance(dead_letter_queue_topic, str)
                                                    or not dead_letter_queue_topic):
            raise ValueError(f"Invalid value {dead_letter_queue_topic!r} for configuration "
                             f"{ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME}: expected a topic name")
        return TaskConfig(app_id, config.get(DEFAULT_KEY_SERDE), config.get(DEFAULT_VALUE_SERDE),
                          configured_handler(config, DESERIALIZATION_EXCEPTION_HANDLER),
                          configured_handler(config, PROCESSING_EXCEPTION_HANDLER),
                          configured_handler(config, PRODUCTION_EXCEPTION_HANDLER), dead_letter_queue_topic,
                          config.get(DEFAULT_TIMESTAMP_EXTRACTOR), _cache_max_bytes(config), commit_every_record,
                          processing_guarantee(config), dict(config))

    @property
    def exactly_once(self) -> bool:
        return self.processing_guarantee == EXACTLY_ONCE_V2


def _cache_max_bytes(config: Mapping[str, Any]) -> int:
    """``statestore.cache.max.bytes`` (or the older ``cache.max.bytes.buffering``): the record cache per task."""
    key = STATESTORE_CACHE_MAX_BYTES if STATESTORE_CACHE_MAX_BYTES in config else CACHE_MAX_BYTES_BUFFERING
    value = config.get(key, DEFAULT_CACHE_MAX_BYTES)
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip().isdigit():
        raise ValueError(f"Invalid value {value!r} for configuration '{key}': expected an int >= 0 (bytes)")
    return int(value)


def processing_guarantee(config: Mapping[str, Any]) -> str:
    """``processing.guarantee``: ``at_least_once`` (the default) or ``exactly_once_v2``, with Kafka's error for
    anything else (Kafka 4 removed ``exactly_once`` and ``exactly_once_beta``)."""
    value = config.get(PROCESSING_GUARANTEE, AT_LEAST_ONCE)
    if value not in (AT_LEAST_ONCE, EXACTLY_ONCE_V2):
        raise ValueError(f"Invalid value {value} for configuration {PROCESSING_GUARANTEE}: String must be one of: "
                         f"{AT_LEAST_ONCE}, {EXACTLY_ONCE_V2}")
    return value


def internal_long(config: Mapping[str, Any], key: str, default: int) -> int:
    """Kafka's ``InternalConfig.getLong``: a number, or a numeric string (another string is a ``ValueError``, as
    ``Long.parseLong`` throws); a value of any other type is warned about and the default used."""
    value = config.get(key, default)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"Invalid value {value!r} for internal configuration '{key}': expected a long") from None
    log.warning("Invalid value (%s) on internal configuration '%s'. Please specify a numeric value.", value, key)
    return default


def dummy_application_id() -> str:
    """The test driver's default application id, as Kafka's (``dummy-topology-test-driver-app-id-<n>``)."""
    return f"dummy-topology-test-driver-app-id-{random.randint(0, 2**31 - 1)}"
