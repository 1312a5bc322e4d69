"""``KafkaStreams``: run a topology on Spark, one streaming query per subtopology.

Configured with Kafka Streams' keys (``application.id``, ``bootstrap.servers``, ``state.dir``, ...). With
``bootstrap.servers`` every subtopology reads Spark's Kafka source and writes through the Kafka connector; client
settings (``security.*``, ``sasl.*``, ``ssl.*``) pass through to Spark and the admin/producer clients. Without it
the topics are embedded multi-partition logs (``embedded.topics.dir``), so a topology runs with no Kafka at all. Checkpoints (task state and source offsets) live under ``checkpoint.location``, by default
``<state.dir>/<application.id>``; starting again on the same location resumes where the last run stopped.

Stopping: :meth:`KafkaStreams.close` (also on leaving a ``with`` block, and at interpreter exit). Started from the
main thread, the application also closes on SIGTERM and Ctrl-C (SIGINT): the signal becomes ``SystemExit(128 +
signal)`` in the main thread, so ``with`` blocks and ``finally`` clauses close it and the process exits quietly, as a
Kafka Streams application closes from its shutdown hook. Handlers the program installed itself are left alone.
"""
from __future__ import annotations

import atexit
import datetime
import enum
import logging
import os
import signal
import tempfile
import threading
import time
import weakref
from typing import Any, Callable, Mapping, Optional, Union

from streams_on_spark.checkpoint_manifest import CheckpointManifest, plan_restart, read_manifest, write_manifest
from streams_on_spark.config import (
    APPLICATION_ID,
    APPLICATION_SERVER,
    BOOTSTRAP_SERVERS,
    BROKER_WATCH_INTERVAL_MS,
    BROKER_WATCH_STALLED_MS,
    CHECKPOINT_LOCATION,
    DEFAULT_API_TIMEOUT_MS,
    EMBEDDED_TOPICS_BATCH_RECORDS,
    EMBEDDED_TOPICS_DIR,
    INTERACTIVE_QUERIES,
    PIPELINE_MODE,
    REPLICATION_FACTOR,
    STATE_DIR,
    TRIGGER_INTERVAL,
    TaskConfig,
)
from streams_on_spark.connectors.kafka_config import BrokerWatch, bootstrap_string, unreachable
from streams_on_spark.connectors.kafka_producer import PRODUCER_CONFIG_NAMES, PRODUCER_PREFIX, producer_settings
from streams_on_spark.errors import IllegalStateError, StreamsException
from streams_on_spark.metrics import Metrics
from streams_on_spark.runtime.snapshot import READABLE_SNAPSHOT_VERSIONS, SNAPSHOT_VERSION
from streams_on_spark.runtime.spark.checkpoints import CheckpointLocation
from streams_on_spark.runtime.spark.topics import TopicPlanner
from streams_on_spark.runtime.processor_graph import check_node_serdes
from streams_on_spark.topology.topology import Topology
from streams_on_spark.upgrade import windows_of

log = logging.getLogger(__name__)

# what of an application's config reaches its Kafka clients: security settings, Kafka Streams' consumer prefixes (the
# source's consumer only) and producer prefix (the tasks' producers only; main.producer., which Kafka Streams does not
# have, only to be refused), admin. (the admin client) and global.consumer. (the global stores' consumer), and
# these plain keys (the consumer's read sizes apply to Spark's Kafka source, the
# producer's own names to the tasks' producers; the admin client ignores what it does not have)
CLIENT_PREFIXES = ("security.", "sasl.", "ssl.", "consumer.", "main.consumer.", PRODUCER_PREFIX, "main.producer.",
                   "admin.", "global.consumer.")
CLIENT_KEYS = {"client.id", "client.dns.lookup", "request.timeout.ms", "default.api.timeout.ms",
               "max.poll.records", "max.partition.fetch.bytes", "fetch.max.bytes", "fetch.min.bytes",
               "fetch.max.wait.ms", *PRODUCER_CONFIG_NAMES}


class State(enum.Enum):
    """Lifecycle, as Kafka's ``KafkaStreams.State`` (the subset a Spark-hosted application goes through)."""

    CREATED = "CREATED"
    REBALANCING = "REBALANCING"   # starting: the queries start, the interactive queries' copy is loaded
    RUNNING = "RUNNING"
    PENDING_SHUTDOWN = "PENDING_SHUTDOWN"
    NOT_RUNNING = "NOT_RUNNING"
    ERROR = "ERROR"


def checkpoint_location(config: Mapping[str, Any]) -> str:
    """Where an application's checkpoints live: ``checkpoint.location``, else ``<state.dir>/<application.id>``
    (``state.dir`` defaulting to ``<tmp>/kafka-streams``, Kafka's default)."""
    state_dir = config.get(STATE_DIR) or os.path.join(tempfile.gettempdir(), "kafka-streams")
    return str(config.get(CHECKPOINT_LOCATION) or os.path.join(state_dir, str(config.get(APPLICATION_ID))))


def client_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Kafka client settings passed through to Spark's Kafka source and the admin/producer clients."""
    return {k: v for k, v in config.items() if k.startswith(CLIENT_PREFIXES) or k in CLIENT_KEYS}


class KafkaStreams:
    """A topology running on Spark Structured Streaming; a context manager that closes itself."""

    def __init__(self, topology: Topology, config: Mapping[str, Any], spark: Any = None) -> None:
        if not isinstance(topology, Topology):
            raise ValueError(f"topology must be a Topology, got {type(topology).__name__}")
        self._task_config = TaskConfig.from_config(config)
        # typed values are read from self._task_config.streams_config; its originals, as given, are handed on
        # (client settings, paths)
        self._config = self._task_config.app_configs
        self._task_config.check_micro_batches()
        self._topology = topology
        self._spark = spark
        self._runtime: Any = None
        self._embedded: Any = None
        self._connector: Any = None
        self.state = State.CREATED
        self._state_listener: Optional[Callable[[State, State], None]] = None
        self._signal_handlers: dict[int, Any] = {}
        self._interactive: Any = None
        self._broker_watch: Any = None
        self.checkpoint_location = checkpoint_location(self._config)
        if self._config.get(BOOTSTRAP_SERVERS):   # the producers' settings fail here, not at start()
            producer_settings(client_config(self._config), exactly_once=self._task_config.exactly_once)
            self._task_config.streams_config.check_embedded_only_keys()

    @property
    def application_id(self) -> str:
        return self._task_config.application_id

    def set_state_listener(self, listener: Optional[Callable[[State, State], None]]) -> None:
        """Call ``listener(new_state, old_state)`` on every state change, as Kafka's ``StateListener``; only before
        :meth:`start` (IllegalStateError after, as Kafka). The listener runs in the thread that changed the state."""
        if self.state is not State.CREATED:
            raise IllegalStateError(f"Can only set StateListener before calling start(). Current state is: "
                                    f"{self.state.value}")
        if listener is not None and not callable(listener):
            raise ValueError(f"state listener must be callable(new_state, old_state), got {type(listener).__name__}")
        self._state_listener = listener

    def _set_state(self, new: State) -> None:
        """Move to ``new`` and tell the state listener (nothing happens when already there)."""
        old = self.state
        if new is old:
            return
        self.state = new
        log.debug("application %s: state %s -> %s", self.application_id, old.value, new.value)
        if self._state_listener is not None:
            try:
                self._state_listener(new, old)
            except Exception:  # a failing listener must not leave the application half-started or half-closed
                log.exception("application %s: state listener failed on %s -> %s", self.application_id,
                              old.value, new.value)

    def metrics(self) -> Metrics:
        """Kafka's metrics of the running application, by :class:`~streams_on_spark.metrics.MetricName`: per task
        (``stream-task-metrics``), per subtopology query as a stream thread (``stream-thread-metrics``) and its
        source (``consumer-fetch-manager-metrics``); see
        :class:`~streams_on_spark.runtime.spark.runtime.RuntimeMetrics` for the names provided.
        Empty before :meth:`start`; after :meth:`close` the last values."""
        return Metrics() if self._runtime is None else self._runtime.metrics()

    @property
    def embedded_topics(self) -> Any:
        """The embedded topics this application reads and writes (create input topics and append here)."""
        if self._embedded is None:
            from streams_on_spark.connectors.embedded import EmbeddedTopics
            self._embedded = EmbeddedTopics(self._config.get(EMBEDDED_TOPICS_DIR))
        return self._embedded

    @property
    def spark(self) -> Any:
        """The SparkSession the application runs in (known once started)."""
        return self._spark

    def _make_connector(self) -> Any:
        """The Kafka connector, else the embedded topics' (neither needs a Spark session)."""
        bootstrap = self._config.get(BOOTSTRAP_SERVERS)
        if not bootstrap:
            from streams_on_spark.connectors.embedded_connector import EmbeddedTopicsConnector
            return EmbeddedTopicsConnector(self.embedded_topics,
                                           self._task_config.streams_config.get(EMBEDDED_TOPICS_BATCH_RECORDS))
        from streams_on_spark.connectors.kafka import KafkaConnector
        group = self.application_id if self._task_config.exactly_once else None
        config = self._task_config.streams_config
        return KafkaConnector(bootstrap_string(bootstrap), client_config(self._config),
                              timeout_ms=config.get(DEFAULT_API_TIMEOUT_MS),
                              replication_factor=config.get(REPLICATION_FACTOR), exactly_once_group=group)

    def __enter__(self) -> "KafkaStreams":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def start(self) -> None:
        """Check topics, create the repartition topics, start one query per subtopology.

        What can be checked without Spark is checked before its session starts (which takes seconds): the Kafka
        connector jars a local session needs, the broker, the source topics and the checkpoints' topology (an unsafe
        upgrade is refused), so each of these fails at once."""
        if self.state is not State.CREATED:
            raise IllegalStateError(f"KafkaStreams can only be started once (state is {self.state.value})")
        builder = self._topology.internal_builder
        check_node_serdes(builder, self._task_config)   # Kafka's source and sink init, before any of Spark
        kafka = bool(self._config.get(BOOTSTRAP_SERVERS))
        jars: list[str] = []
        if kafka and self._spark is None:
            from streams_on_spark.connectors.kafka import kafka_jars
            from streams_on_spark.runtime.spark.session import starts_local_session
            jars = kafka_jars(required=starts_local_session())   # a local session reads Kafka only with them
        if kafka:
            bootstrap = bootstrap_string(self._config[BOOTSTRAP_SERVERS])
            why = unreachable(bootstrap)
            if why:
                raise StreamsException(f"Kafka at {bootstrap} is unreachable ({why}): "
                                       f"check {BOOTSTRAP_SERVERS} and that the brokers are up")
        self._connector = connector = self._make_connector()
        existing = connector.topics()
        planner = TopicPlanner.for_application(builder, self._task_config, existing)
        pipelines = self._pipelines(builder, planner, kafka)
        self._pipelined = frozenset(t for p in pipelines for t in p.topics)
        location = CheckpointLocation(self.checkpoint_location)
        location.ensure_exists()   # a remote one (hdfs://, s3a://) is read and created through Spark
        manifest = None if location.is_remote and self._spark is None else self._check_checkpoints(planner)
        if self._spark is None:
            from streams_on_spark.runtime.spark import application_session
            self._spark = application_session(self.application_id, jars=jars)
        if manifest is None:
            manifest = self._check_checkpoints(planner)   # before anything is created or run
        layout = planner.create(connector, skip=self._pipelined)   # pipeline mode: Spark's shuffle replaces those
        from streams_on_spark.runtime.spark import SparkRuntime
        self._runtime = SparkRuntime(builder, self._task_config, layout, connector, self._spark, location,
                                     trigger_interval=self._task_config.streams_config.get(TRIGGER_INTERVAL),
                                     checkpoint_names=manifest.checkpoints, pipelines=pipelines,
                                     interactive_queries=self._task_config.streams_config.get(INTERACTIVE_QUERIES))
        write_manifest(location, manifest, self._spark)
        self._set_state(State.REBALANCING)   # as Kafka's start(); stale-store queries answer from here on
        try:
            self._runtime.start()
        except Exception:
            self._set_state(State.ERROR)
            self._runtime.stop()
            raise
        self._set_state(State.RUNNING)
        if kafka:   # Spark's Kafka source waits for a broker that went away without a word: say it (once)
            self._broker_watch = self._start_broker_watch(self._runtime)
        self._close_on_signals()
        atexit.register(_close_at_exit, weakref.ref(self))
        log.info("application %s running %d subtopology queries (%s), checkpoints in %s", self.application_id,
                 len(self._runtime.queries), self._task_config.processing_guarantee, self.checkpoint_location)

    def _start_broker_watch(self, runtime: Any) -> BrokerWatch:
        """The broker watch over ``runtime``'s queries, with the timings of ``broker.watch.stalled.ms`` and
        ``broker.watch.interval.ms`` (validated with the config at construction)."""
        config = self._task_config.streams_config
        stalled_after_s = config.get(BROKER_WATCH_STALLED_MS) / 1000
        return BrokerWatch(bootstrap_string(config.get(BOOTSTRAP_SERVERS)), lambda: runtime.stalled(stalled_after_s),
                           config.get(BROKER_WATCH_INTERVAL_MS) / 1000).start()

    def _check_checkpoints(self, planner: TopicPlanner) -> CheckpointManifest:
        """Compare the topology with the one the checkpoints were written for, refusing an unsafe change: the
        manifest of this run, written when it starts (see :mod:`streams_on_spark.checkpoint_manifest`)."""
        location = CheckpointLocation(self.checkpoint_location)
        existing = location.checkpoint_names(self._spark)
        return plan_restart(read_manifest(location, self._spark), self._topology.describe(),
                            planner.read_partitions(), self._task_config.streams_config, SNAPSHOT_VERSION, existing,
                            readable_formats=READABLE_SNAPSHOT_VERSIONS, pipelined=self._pipelined,
                            windows=windows_of(self._topology))

    def _pipelines(self, builder: Any, planner: TopicPlanner, kafka: bool) -> list:
        """Pipeline mode's fused subtopologies (none unless ``pipeline.mode=true``; see
        :mod:`streams_on_spark.runtime.spark.pipeline`)."""
        if not self._task_config.streams_config.get(PIPELINE_MODE):
            return []
        if kafka and self._task_config.exactly_once:
            log.warning("%s=true is not supported with exactly_once_v2 on Kafka (a task's transaction commits the "
                        "positions of the topics it reads): every subtopology keeps its own query", PIPELINE_MODE)
            return []
        from streams_on_spark.runtime.spark.pipeline import plan_pipelines
        return plan_pipelines(builder, self._task_config, planner.layout())

    def _running(self) -> Any:
        if self.state is not State.RUNNING or self._runtime is None:
            raise IllegalStateError(f"KafkaStreams is not running (state is {self.state.value}); call start()")
        return self._runtime

    def process_all_available(self, timeout_s: float = 600.0) -> None:
        """Block until every topic the application reads is fully processed (for tests and batch-like runs)."""
        try:
            self._running().process_all_available(timeout_s)
        except StreamsException:
            self._set_state(State.ERROR)
            raise

    def await_termination(self, timeout_s: Optional[float] = None) -> bool:
        """Block until a query stops (True) or ``timeout_s`` passes (False); a failed query raises."""
        runtime = self._running()
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            failure = runtime.failure()
            if failure is not None:
                self._set_state(State.ERROR)
                raise failure
            if any(not query.isActive for query in runtime.queries.values()):
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False
            next(iter(runtime.queries.values())).awaitTermination(0.2)  # wait on Spark, a slice at a time

    # ------------------------------------------------------------------ interactive queries
    def _queries(self) -> Any:
        from streams_on_spark.query.service import InteractiveQueries
        from streams_on_spark.runtime.spark.standby import ApplicationQueryableState
        if self._interactive is None:
            self._interactive = InteractiveQueries(ApplicationQueryableState(
                self._topology.internal_builder, lambda: self.state.value, lambda: self._runtime,
                self._task_config.streams_config.get(APPLICATION_SERVER) or None))
        return self._interactive

    def store(self, parameters: Any) -> Any:
        """Kafka's ``store()``: a read-only store over every task, read from the driver's copy of the tasks' stores
        (``interactive.queries=true``; see "Querying state")."""
        return self._queries().store(parameters)

    def query(self, request: Any) -> Any:
        """Kafka's IQv2 ``query()``: per partition, from the driver's copy; each result's position is the micro-batch
        it reflects (``interactive.queries=true``)."""
        return self._queries().query(request)

    def query_metadata_for_key(self, store_name: str, key: Any, key_serializer: Any) -> Any:
        """Kafka's ``queryMetadataForKey()``: the partition of ``key``'s task (and this instance's host)."""
        return self._queries().query_metadata_for_key(store_name, key, key_serializer)

    def metadata_for_all_streams_clients(self) -> list[Any]:
        """Kafka's ``metadataForAllStreamsClients()``: this instance, which runs every task (its
        ``application.server``, every store and source topic partition); empty without ``application.server``."""
        return self._queries().metadata_for_all_streams_clients()

    def streams_metadata_for_store(self, store_name: str) -> list[Any]:
        """Kafka's ``streamsMetadataForStore()``: the instances holding ``store_name`` (this one, or none)."""
        return self._queries().streams_metadata_for_store(store_name)

    def read_tasks(self, subtopology_id: int) -> dict[int, Any]:
        """Offline copies of a subtopology's tasks with the state Spark holds (to inspect stores)."""
        return self._running().read_tasks(subtopology_id)

    def close(self, timeout: Union[float, datetime.timedelta, None] = None) -> bool:
        """Stop every query and release the clients, as Kafka's ``close(Duration)``: True if everything stopped
        within ``timeout`` (seconds or a timedelta; None waits as long as it takes). A micro-batch in flight may
        finish first (its transactions commit) or is interrupted and replayed by the next start. The checkpoints
        stay, so a new instance resumes from them."""
        if isinstance(timeout, datetime.timedelta):
            timeout = timeout.total_seconds()
        if timeout is not None and timeout < 0:
            raise ValueError(f"timeout must be >= 0, got {timeout}")
        self._restore_signals()
        if self._broker_watch is not None:
            self._broker_watch.stop()
        stopped = True
        if self.state is State.NOT_RUNNING:
            return stopped
        was = self.state
        self._set_state(State.PENDING_SHUTDOWN)   # from CREATED too, as Kafka's close()
        if self._runtime is not None and was in (State.REBALANCING, State.RUNNING, State.ERROR):
            log.info("application %s closing", self.application_id)
            stopped = self._runtime.stop(timeout)
        if self._connector is not None:
            self._connector.close()
        self._set_state(State.NOT_RUNNING)
        return stopped

    def _close_on_signals(self) -> None:
        """Turn SIGTERM and SIGINT into ``SystemExit`` in the main thread while running (see the module doc)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in (signal.SIGTERM, signal.SIGINT):
            current = signal.getsignal(signum)
            if current in (signal.SIG_DFL, signal.default_int_handler) or _from_pyspark(current):
                self._signal_handlers[signum] = current
                signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, frame: Any) -> None:
        log.info("application %s: %s received, closing", self.application_id, signal.Signals(signum).name)
        self._restore_signals()   # a second signal acts as it did before start()
        raise SystemExit(128 + signum)

    def _restore_signals(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        handlers, self._signal_handlers = self._signal_handlers, {}
        for signum, handler in handlers.items():
            if signal.getsignal(signum) == self._on_signal:
                signal.signal(signum, handler)


def _from_pyspark(handler: Any) -> bool:
    """pyspark's own SIGINT handler (it cancels every Spark job, which fails the queries with errors)."""
    return getattr(handler, "__module__", "").startswith("pyspark.")


def _close_at_exit(ref: "weakref.ReferenceType[KafkaStreams]") -> None:
    streams = ref()
    if streams is not None and streams.state in (State.REBALANCING, State.RUNNING, State.ERROR,
                                                 State.PENDING_SHUTDOWN):
        streams.close(30.0)
