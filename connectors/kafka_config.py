"""Kafka client settings shared by the admin client and the producers: secrets masked in logs and messages, a
``sasl.jaas.config`` read for its options, Kafka's (Java) client settings as kafka-python's keywords."""
from __future__ import annotations

import importlib
import logging
import re
import socket
import threading
import time
from typing import Any, Callable, Iterable, Mapping, Optional, Union

log = logging.getLogger(__name__)

MASK = "******"
_SECRET_MARKERS = ("password", "secret", "jaas", "token", "key")


def is_secret(name: str) -> bool:
    """Whether a client setting's value must be masked (its name contains password/secret/jaas/token/key)."""
    lowered = name.lower()
    return any(marker in lowered for marker in _SECRET_MARKERS)


def mask_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``config`` with the values of secret settings replaced by ``******`` (for logs and messages)."""
    return {k: (MASK if is_secret(str(k)) and v is not None else v) for k, v in config.items()}


_JAAS_OPTION = re.compile(r"""(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([^\s;]+))""")


def _jaas_options(jaas: str) -> dict[str, str]:
    """``username``/``password``/... of a ``sasl.jaas.config`` login module line."""
    return {m.group(1): next(g for g in m.group(2, 3, 4) if g is not None) for m in _JAAS_OPTION.finditer(jaas)}


# Kafka (Java) client settings whose kafka-python name is the same with '_' for '.'.
_DIRECT = {"security.protocol", "sasl.mechanism", "sasl.kerberos.service.name", "sasl.kerberos.domain.name",
           "client.id", "request.timeout.ms", "retry.backoff.ms", "reconnect.backoff.ms",
           "reconnect.backoff.max.ms", "connections.max.idle.ms", "metadata.max.age.ms", "send.buffer.bytes",
           "receive.buffer.bytes", "client.dns.lookup", "ssl.cipher.suites"}
# Settings that only matter to the JVM clients (Spark) and have no kafka-python counterpart worth mapping.
_JVM_ONLY_PREFIXES = ("ssl.keystore.", "ssl.truststore.type", "ssl.protocol", "ssl.enabled.protocols",
                      "ssl.keymanager.", "ssl.trustmanager.", "ssl.secure.random", "sasl.login.",
                      "sasl.client.callback", "sasl.kerberos.", "sasl.oauthbearer.", "ssl.engine.factory")


def _python_client_config(client_config: Mapping[str, Any],
                          unmapped: Optional[Callable[[str], None]] = None) -> dict[str, Any]:
    """kafka-python keyword arguments equivalent to Kafka's client settings (those that have one); ``unmapped`` is
    told each setting without one (by default it applies to Spark's JVM clients only and is logged at DEBUG)."""
    out: dict[str, Any] = {}
    for key, value in client_config.items():
        if value is None:
            continue
        text = str(value)
        if key in _DIRECT:
            out[key.replace(".", "_")] = int(text) if key.endswith((".ms", ".bytes")) else text
        elif key == "sasl.jaas.config":
            options = _jaas_options(text)
            if "username" in options:
                out["sasl_plain_username"] = options["username"]
            if "password" in options:
                out["sasl_plain_password"] = options["password"]
        elif key == "ssl.truststore.location" and str(client_config.get("ssl.truststore.type", "")).upper() == "PEM":
            out["ssl_cafile"] = text
        elif key == "ssl.keystore.location" and str(client_config.get("ssl.keystore.type", "")).upper() == "PEM":
            out["ssl_certfile"] = text
            out.setdefault("ssl_keyfile", text)
        elif key == "ssl.key.password":
            out["ssl_password"] = text
        elif key == "ssl.endpoint.identification.algorithm":
            out["ssl_check_hostname"] = text.strip().lower() == "https"
        elif unmapped is not None:
            unmapped(key)
        elif not key.startswith(_JVM_ONLY_PREFIXES):
            log.debug("client setting %s has no kafka-python equivalent; it applies to Spark only", key)
    return out


def client_settings_of(config: Mapping[str, Any], client: str, prefix: str) -> dict[str, Any]:
    """kafka-python keyword arguments for one client of the library from the application's ``prefix`` settings
    (Kafka Streams' ``admin.``, ``global.consumer.``); a setting that client has no equivalent for is logged at
    WARNING, naming it, rather than dropped in silence."""
    def unmapped(key: str) -> None:
        log.warning("The configuration '%s%s' was supplied but has no effect on streams-on-spark: the %s "
                    "(kafka-python) has no such setting.", prefix, key, client)
    return _python_client_config(config, unmapped)


class _RedactingFilter(logging.Filter):
    """Masks the registered secret values in every record of kafka-python's loggers (kafka-python logs its whole
    client configuration, passwords included, at DEBUG)."""

    def __init__(self) -> None:
        super().__init__("")
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            try:
                text = record.getMessage()
            except Exception:
                return True
            redacted = text
            for secret in sorted(self.secrets, key=len, reverse=True):
                redacted = redacted.replace(secret, MASK)
            if redacted != text:
                record.msg, record.args = redacted, ()
        return True


_REDACTING_FILTER = _RedactingFilter()


class _OutageFilter(logging.Filter):
    """One line per broker outage: kafka-python's clients report a broker they cannot reach on every retry (a
    WARNING and an ERROR or two, ~7 lines a second). While the library keeps kafka-python quiet (the application
    set no level on the ``kafka`` logger), those reports are dropped and the library says once that Kafka is
    unreachable, and once that it is reachable again (kafka-python's INFO "Connected"/"Bootstrap complete", which
    this filter reads and drops with every other record below WARNING)."""

    # what kafka-python 3 says while a broker is down; from "socket disconnected" on, seen when a running broker
    # stopped (a test's own broker stopped and started again: tests/integration/kafka/test_broker_outage.py; a send
    # on a connection reset, and a connection made just as the broker went, one CI run in many)
    FAILURE = re.compile(r"Connection (failed|lost)|Bootstrap (connection to \S+ failed|\S+ not ready|failed)|"
                         r"Bootstrap attempt to \S+ failed|Unable to bootstrap|DNS lookup failed|ECONNREFUSED|"
                         r"KafkaConnectionError|NodeNotReady|socket disconnected$|No node available|"
                         r"Error receiving network data|Error sending request data|"
                         r"Failed to build connection log_prefix")
    # not worth a line: a request the lost connection cancelled, reported when it is given up (possibly after the
    # recovery: the outage's line said it already), and kafka-python's note that one of its own tasks was slow (a
    # busy machine, during an outage or not)
    NOISE = re.compile(r"^Metadata refresh: failed Cancelled|It is blocking the event loop")
    RECOVERED = re.compile(r": Connected$|^Bootstrap complete")
    ADDRESS = re.compile(r"\bat \[?([\w.\-]+:\d+)")   # "Attempting bootstrap to bootstrap-0 at host:port ..."
    # a broker that is back takes connections before it serves every request (its metadata, its coordinators still
    # loading): a failure this soon after the recovery is its start, not a new outage (the first failure after it is)
    SETTLE_S = 10.0

    def __init__(self) -> None:
        super().__init__("")
        self.active = False          # set by quiet_kafka_python_logs when the application configured no level
        self.bootstraps: list[str] = []
        self.address: Optional[str] = None   # the broker kafka-python last tried (from its INFO lines)
        self.down: Optional[str] = None      # where the outage is, while there is one
        self.recovered_at = float("-inf")    # when the last outage was said to be over (``clock()``)
        self.clock: Callable[[], float] = time.monotonic
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.active:
            return True
        try:
            text = record.getMessage()
        except Exception:
            return record.levelno >= logging.WARNING
        if record.levelno < logging.WARNING:
            address = self.ADDRESS.search(text)
            if address is not None:
                self.address = address.group(1)
            if self.down is not None and self.RECOVERED.search(text):
                self.recovered()
            return False
        if self.NOISE.search(text):
            return False
        if self.FAILURE.search(text):
            self.unreachable(self._where(), text)
            return False
        return True

    def unreachable(self, where: str, reason: str) -> None:
        """Say once per outage that Kafka at ``where`` is unreachable (whoever noticed it first)."""
        with self._lock:
            if self.down is not None or self.clock() - self.recovered_at < self.SETTLE_S:
                return
            self.down = where
        log.warning("Kafka at %s is unreachable (%s); retrying", where, reason)

    def recovered(self) -> None:
        """Say once that Kafka is reachable again, if an outage was reported."""
        with self._lock:
            where, self.down = self.down, None
            if where is not None:
                self.recovered_at = self.clock()
        if where is not None:
            log.warning("Kafka at %s is reachable again", where)

    def _where(self) -> str:
        return self.address or ",".join(self.bootstraps) or "the configured bootstrap servers"


_OUTAGE_FILTER = _OutageFilter()


def bootstrap_string(servers: Union[str, Iterable[str]]) -> str:
    """``bootstrap.servers`` as the comma-separated string the clients and the probe take: Kafka's LIST type comes as
    a string or (typed by ``StreamsConfig``, or given so) a list of addresses."""
    return servers if isinstance(servers, str) else ",".join(str(a).strip() for a in servers)


def unreachable(bootstrap: str, timeout_s: float = 3.0) -> Optional[str]:
    """Why no address of ``bootstrap`` takes a TCP connection (refused, unknown host, no route), or None when one does
    or the answer is not definite (a timeout: the Kafka clients then decide, within ``default.api.timeout.ms``)."""
    reasons = []
    for address in (a.strip() for a in bootstrap.split(",") if a.strip()):
        host, _, port = address.split("://", 1)[-1].rpartition(":")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s) as probe:
                if probe.getsockname() == probe.getpeername():   # the kernel connected the probe to itself: no
                    reasons.append(f"{address}: Connection refused")   # listener (a port of the ephemeral range)
                    continue
            return None
        except (socket.timeout, ValueError):
            return None
        except OSError as e:
            reasons.append(f"{address}: {e.strerror or e}")
    return "; ".join(reasons) or None


class BrokerWatch:
    """The outage line for what the library's Python clients do not see: Spark's Kafka source (JVM clients, their
    logs kept off the console) waits for an unreachable broker without a word. While the application runs, a daemon
    thread looks every ``interval_s`` (``broker.watch.interval.ms``) whether its queries ``stalled()`` (no progress for
    ``broker.watch.stalled.ms``); only then does it try a TCP connection to ``bootstrap`` (as ``KafkaStreams.start()``
    does), and says once that Kafka is unreachable, and once that it is reachable again, through the same one line as
    kafka-python's outages (one line per outage, whoever noticed it)."""

    def __init__(self, bootstrap: str, stalled: Callable[[], bool], interval_s: float) -> None:
        self.bootstrap = bootstrap
        self._stalled = stalled
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="streams-on-spark-broker-watch", daemon=True)

    def start(self) -> "BrokerWatch":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def check(self) -> None:
        """One look: probe the broker when the queries stalled or an outage is being reported."""
        if _OUTAGE_FILTER.down is None and not self._stalled():
            return
        reason = unreachable(self.bootstrap)
        if reason is not None:
            _OUTAGE_FILTER.unreachable(self.bootstrap, reason)
        else:
            _OUTAGE_FILTER.recovered()

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                self.check()
            except Exception:   # a watch must never end the application: say why it looked no further
                log.debug("broker watch: the check failed", exc_info=True)


def quiet_kafka_python_logs(bootstrap_servers: str = "") -> None:
    """kafka-python logs every connection, bootstrap and metadata refresh at INFO, and every failed retry while a
    broker is down at WARNING and ERROR: unless the application set the ``kafka`` logger's level itself
    (``logging.getLogger("kafka").setLevel(logging.INFO)`` brings them all back), only its other warnings pass, and
    an outage is one line when it starts and one when it ends (:class:`_OutageFilter`)."""
    if bootstrap_servers and bootstrap_servers not in _OUTAGE_FILTER.bootstraps:
        _OUTAGE_FILTER.bootstraps.append(bootstrap_servers)
    logger = logging.getLogger("kafka")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.INFO)   # the filter reads INFO's "Connected" and drops everything below WARNING
        _OUTAGE_FILTER.active = True


def quiet_kafka_python_clients(bootstrap_servers: str = "") -> None:
    """The quieting the library's own kafka-python clients get (:func:`quiet_kafka_python_logs`: below WARNING off,
    an outage one line, secrets masked), for an application's own clients: an admin creating its topics, a producer
    feeding them. Call it before creating them (the examples do, in ``configure_logging``): kafka-python's INFO
    lines then never show, and neither do its warnings that the library drops (a slow I/O task's "It is blocking
    the event loop"). A level the application set on the ``kafka`` logger is left alone, as are its lines."""
    importlib.import_module("kafka")   # kafka-python's loggers exist from its import on; the filters go on each
    quiet_kafka_python_logs(bootstrap_servers)
    _guard_kafka_python_logs(())


def _guard_kafka_python_logs(secrets: Iterable[str]) -> None:
    """Register ``secrets`` and put the redacting and outage filters on every kafka-python logger that exists now
    (they are module-level, created when kafka-python's modules are imported, so call this after importing a
    client)."""
    _REDACTING_FILTER.secrets.update(secrets)
    names = ["kafka"] + [n for n in list(logging.Logger.manager.loggerDict) if n.startswith("kafka.")]
    for name in names:
        logger = logging.getLogger(name)
        for guard in (_REDACTING_FILTER, _OUTAGE_FILTER):
            if guard not in logger.filters:
                logger.addFilter(guard)
