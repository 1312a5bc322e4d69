"""The Spark session an application runs in: the one its environment configured, else a local one.

``spark-submit``, a cluster's launcher or a notebook configure Spark before the application asks for a session;
their ``--master``, ``--conf`` and ``--jars``/``--packages`` always win. Only a plain ``python app.py`` with no
Spark configured gets :func:`local_session`, the project's loopback defaults.
"""
from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sys
from typing import Any, Iterable, Iterator, Optional


log = logging.getLogger(__name__)

FORKED_WORKERS = "STREAMS_ON_SPARK_FORKED_WORKERS"
DIST_CLASSPATH = "SPARK_DIST_CLASSPATH"   # what Spark's launcher appends to a JVM's class path
STATE_STORE_PROVIDER = "spark.sql.streaming.stateStore.providerClass"
ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
ROCKSDB_CHANGELOG_CHECKPOINTING = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"
# SQL settings the runtime relies on, applied only where the user set nothing: tracebacks of task errors in full
# (the runtime extracts the Python error from them), time for a query to stop mid-batch on close(), and the
# RocksDB state store (transformWithStateInPandas needs it; tasks' changelogs are appended, not rewritten) with
# changelog checkpointing (a state commit writes the batch's changes, not a RocksDB checkpoint of every file), without
# counting rows (the count reads a whole list before each append: measured O(list length) per append), and list state
# handed to Python a few elements at a time (changelog rows are up to a few MB; Spark's default of 10,000 elements per
# Arrow batch ran its state server out of heap on a 100 MB list and hung the task).
RUNTIME_DEFAULTS = {
    "spark.sql.execution.pyspark.udf.simplifiedTraceback.enabled": "false",
    "spark.sql.streaming.stopTimeout": "30s",
    STATE_STORE_PROVIDER: ROCKSDB_PROVIDER,
    ROCKSDB_CHANGELOG_CHECKPOINTING: "true",
    "spark.sql.streaming.stateStore.rocksdb.trackTotalNumberOfRows": "false",
    "spark.sql.execution.arrow.transformWithStateInPandas.maxRecordsPerBatch": "16",
}


# Hadoop's local file system with permissions set and links looked up through java.nio (jvm/local-fs, built into the
# package by `make setup`): without Hadoop's native library, which pip's pyspark lacks, Hadoop runs a chmod or
# readlink child process for every checkpoint and state file it writes, 7-10 ms each from the Spark JVM here.
LOCAL_FS_JAR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "jars",
                            "streams-on-spark-local-fs.jar")
LOCAL_FS_CONF = {
    "spark.hadoop.fs.file.impl": "streamsonspark.hadoop.NioLocalFileSystem",
    "spark.hadoop.fs.AbstractFileSystem.file.impl": "streamsonspark.hadoop.NioLocalFs",
}


# The local JVM compiles with HotSpot's C1 compiler only (no C2). In a local session the JVM moves record batches
# between Python workers and does little per record, and it is short-lived (a test session, an example): C2's
# compilations of Spark's planner, encoders and scheduler cost more CPU than they give back. Measured on the 2-core
# box (JFR, /proc): the word count's first 1M words took the JVM 3.0-3.4 CPU-seconds with C1 against 5.9-6.6 with C2
# (C2's compiler threads the largest JVM consumer after the state server), and a Spark-engine test 2.6-2.9 s against
# 3.5 s (bench/test_time.py, alternating). A long-running local application can pass ``java_options=""``.
LOCAL_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1"

# A class-data-sharing archive of what a Spark JVM loads (HotSpot's dynamic AppCDS): the JVM maps Spark's ~10k classes
# from it instead of reading, verifying and linking each from the jars, and a local session starts in about half the
# time (5.2-5.7 s against 9.1-10.6 s, its first job 1.8-2.1 s against 4.1-4.5 s on the 2-core machine).
# ``python -m streams_on_spark.class_archive PATH`` writes one (``make class-archive``; ``make test`` builds and uses
# it); a local session uses the one this variable names. The archive holds the class path it was written with, Spark's
# jars only, and serves every JVM whose class path starts so: a local session (the local file system's jar comes
# after Spark's, :func:`_appended_to_class_path`), a driver spark-submit starts, a standalone cluster's daemons and
# executors when their SPARK_CONF_DIR does not exist (a conf dir, even an empty one, goes first on the class path).
# An archive of another JDK or class path is refused by the JVM, which then starts as without one, and says nothing
# (QUIET).
CLASS_ARCHIVE_ENV = "STREAMS_ON_SPARK_CLASS_ARCHIVE"
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"   # the JVM's notes on an archive it refuses or writes, off the console


def java_options_with_archive(java_options: str) -> str:
    """``java_options`` plus the class archive ``STREAMS_ON_SPARK_CLASS_ARCHIVE`` names, where that file exists (a
    warning names a missing one: the JVM then starts without it)."""
    archive = os.environ.get(CLASS_ARCHIVE_ENV, "")
    if archive and not os.path.isfile(archive):
        log.warning("%s=%s, but there is no such file: the JVM starts without a class archive (build it with "
                    "`python -m streams_on_spark.class_archive %s` or `make class-archive`)", CLASS_ARCHIVE_ENV,
                    archive, archive)
    if not archive or not os.path.isfile(archive):
        return java_options
    return f"{java_options} -XX:SharedArchiveFile={archive} {QUIET}".strip()


def local_session(app_name: str = "streams-on-spark", cores: int = 2, jars: Iterable[str] = (),
                  java_options: str = LOCAL_JAVA_OPTIONS, max_failures: int = 1, local_files: bool = True) -> Any:
    """A local SparkSession set up as this project needs it: loopback only, no UI, small shuffles, local files
    written without a process per file (:data:`LOCAL_FS_JAR`; ``local_files=False``: with Hadoop's own local file
    system, as a cluster's JVMs write them), and the JVM started with ``java_options`` (:data:`LOCAL_JAVA_OPTIONS`: its
    JIT compiler for short local runs; and the class archive ``STREAMS_ON_SPARK_CLASS_ARCHIVE`` names,
    :func:`java_options_with_archive`). ``max_failures``: the attempts a task gets before its job fails (Spark's
    ``local[cores,max_failures]``; a local master's default is one)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession
    master = f"local[{cores}]" if max_failures == 1 else f"local[{cores},{max_failures}]"
    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.sql.shuffle.partitions", str(cores))
               .config("spark.default.parallelism", str(cores)))
    java_options = java_options_with_archive(java_options)   # STREAMS_ON_SPARK_CLASS_ARCHIVE: a faster start
    if java_options:
        builder = builder.config("spark.driver.extraJavaOptions", java_options)
    for key, value in RUNTIME_DEFAULTS.items():
        builder = builder.config(key, value)
    jars = [str(j) for j in jars]
    if jars:
        builder = builder.config("spark.jars", ",".join(jars))
    class_path: tuple[str, ...] = ()
    if local_files and os.path.isfile(LOCAL_FS_JAR):   # local mode: the driver's JVM runs the tasks too
        class_path = (LOCAL_FS_JAR,)
        for key, value in LOCAL_FS_CONF.items():
            builder = builder.config(key, value)
    elif local_files:
        log.warning("%s is missing (run `make setup`, or install the wheel): local checkpoints are written with "
                    "Hadoop's own local file system, a chmod process per file", LOCAL_FS_JAR)
    with _forked_workers(), _appended_to_class_path(class_path), _environment(_launch_environment()):
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if class_path and LOCAL_FS_JAR not in spark._jvm.java.lang.System.getProperty("java.class.path").split(os.pathsep):
        # a spark-env.sh that sets SPARK_DIST_CLASSPATH itself (Spark's launcher sources it) replaced ours, or the
        # JVM was already running
        hadoop = spark.sparkContext._jsc.hadoopConfiguration()
        for key in LOCAL_FS_CONF:
            hadoop.unset(key.removeprefix("spark.hadoop."))
        log.warning("%s is not on the class path of the session's JVM (does a spark-env.sh set %s, or was Spark "
                    "started before?): local checkpoints are written with Hadoop's own local file system, a chmod "
                    "process per file", LOCAL_FS_JAR, DIST_CLASSPATH)
    return spark


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """This process's environment with ``values`` set while the block runs (what Spark's launcher, and the JVM it
    starts, inherit), then as it was."""
    before = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# The JVM of Spark's launcher (spark-class runs org.apache.spark.launcher.Main, which only prints the real JVM's
# command) on C1 with the serial collector: it runs for a fraction of a second, and C2's compiler threads and the
# parallel collector's setup cost it more than they give back (measured: 0.25-0.3 CPU-seconds against 0.45-0.55).
LAUNCHER_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def _launch_environment() -> dict[str, str]:
    """What a local session's launch is given where the environment has nothing: ``SPARK_HOME`` (pyspark's own
    directory where it is a Spark home, :func:`pip_spark_home`: without it spark-submit starts a Python interpreter
    to find it, ``find_spark_home.py``) and ``SPARK_LAUNCHER_OPTS`` (:data:`LAUNCHER_JAVA_OPTIONS`)."""
    values = {}
    if not os.environ.get("SPARK_HOME"):
        import pyspark
        home = pip_spark_home(os.path.dirname(os.path.abspath(pyspark.__file__)))
        if home is not None:
            values["SPARK_HOME"] = home
    if "SPARK_LAUNCHER_OPTS" not in os.environ:
        values["SPARK_LAUNCHER_OPTS"] = LAUNCHER_JAVA_OPTIONS
    return values


def pip_spark_home(package_dir: str) -> Optional[str]:
    """``package_dir`` (pyspark's directory) if it is a Spark home, as in a pip install of pyspark (Spark's scripts
    in ``bin``, its jars in ``jars``), else None: a pyspark of a Spark distribution (its ``python`` directory), whose
    scripts find their home themselves. (pyspark's own search, ``find_spark_home._find_spark_home``, is private.)"""
    if os.path.isfile(os.path.join(package_dir, "bin", "spark-submit")) and os.path.isdir(
            os.path.join(package_dir, "jars")):
        return package_dir
    return None


def _appended_to_class_path(jars: Iterable[str]) -> contextlib.AbstractContextManager:
    """While a new local session's JVM is launched, ``jars`` come last on its class path: through
    ``SPARK_DIST_CLASSPATH``, which Spark's launcher appends after Spark's own jars (``spark.driver.extraClassPath``
    would put them first, and the JVM would refuse the class archive, whose class path is Spark's jars)."""
    jars = list(jars)
    before = os.environ.get(DIST_CLASSPATH)
    if not jars:
        return contextlib.nullcontext()
    return _environment({DIST_CLASSPATH: os.pathsep.join(([before] if before else []) + jars)})


_fork_server = None   # this process's ForkServer, once a local session has started one


@contextlib.contextmanager
def _forked_workers() -> Iterator[None]:
    """While a new local SparkContext is made, ``PYSPARK_PYTHON`` is the launcher of a :class:`ForkServer` when the
    workers' Python is this process's own (the context keeps it as its ``pythonExec``; this process's environment is
    restored, so its other children start Python as before). ``STREAMS_ON_SPARK_FORKED_WORKERS=false`` turns it off.
    Local masters only (a local session, or ``spark-submit --master 'local[...]'``): the context's ``pythonExec`` is
    also what a cluster's executors would start, and the launcher exists on this machine only.

    ``PYSPARK_DRIVER_PYTHON`` too, where it is unset or this process's Python: a JVM launched meanwhile (a local
    session's) keeps it as its ``PythonUtils.defaultPythonExec``, the Python of the worker with which Spark looks up
    the installed Python data sources (``pyspark.sql.worker.lookup_data_sources``, once per JVM, when the first
    Python data source is registered: the embedded topics'): forked, it no longer imports pyspark from Spark's ``pyspark.zip``, which holds no
    bytecode (measured: 1.6-1.7 CPU-seconds, 4 s under load)."""
    global _fork_server
    from pyspark import SparkContext
    given = os.environ.get("PYSPARK_PYTHON")
    python = shutil.which(given or "python3")   # pyspark's default when PYSPARK_PYTHON is unset
    if (SparkContext._active_spark_context is not None or not _is_this_python(python)
            or os.environ.get(FORKED_WORKERS, "true").lower() == "false"):
        yield
        return
    from streams_on_spark.runtime.spark.fork_server import ForkServer
    from streams_on_spark.runtime.spark.task_function import DRIVER_WORKER
    if _fork_server is None or _fork_server.process.poll() is not None:
        # pyspark's driver worker of transformWithStateInPandas prints debug lines that Spark copies to the console
        _fork_server = ForkServer(sys.executable, quiet=(DRIVER_WORKER,))
    forked = {"PYSPARK_PYTHON": _fork_server.launcher}
    driver = os.environ.get("PYSPARK_DRIVER_PYTHON")
    if driver is None or _is_this_python(shutil.which(driver)):
        forked["PYSPARK_DRIVER_PYTHON"] = _fork_server.launcher
    with _environment(forked):
        yield


def _is_this_python(python: str | None) -> bool:
    """Whether ``python`` is this process's interpreter in its environment: the same program in the same directory,
    each with symbolic links resolved (a venv reached through a linked directory is the same; a link elsewhere to
    this program, or the base interpreter a venv's ``python`` links to, is another environment)."""
    if python is None:
        return False

    def where(path: str) -> tuple[str, str]:
        return os.path.realpath(os.path.dirname(os.path.abspath(path))), os.path.realpath(path)
    return where(python) == where(sys.executable)


def is_spark_connect(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect session (``SparkSession.builder.remote(...)``): its ``foreachBatch``
    functions run in a Python worker of the server, not in this process."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def spark_configured() -> bool:
    """Whether something already set Spark up for this process: a running session, or a launcher (spark-submit,
    the pyspark shell) that started the JVM gateway, or a ``MASTER`` in the environment."""
    from pyspark import SparkContext
    return (SparkContext._active_spark_context is not None or "PYSPARK_GATEWAY_PORT" in os.environ
            or bool(os.environ.get("MASTER")))


def starts_local_session() -> bool:
    """Whether :func:`application_session` will start a :func:`local_session`: no Spark Connect server, no active
    session, no Spark configured by a launcher (the one case where the library itself must find jars)."""
    from pyspark.sql import SparkSession
    return not os.environ.get("SPARK_REMOTE") and SparkSession.getActiveSession() is None and not spark_configured()


def application_session(app_name: str, jars: Iterable[str] = ()) -> Any:
    """The session ``KafkaStreams`` runs in when given none (see the module docstring).

    With Spark configured, the configured session is used (``getOrCreate``): the app name and the runtime's SQL
    defaults are added only where the configuration has none, and ``jars`` are never added (the JVM is already
    running: pass them with ``--jars``/``--packages``). Otherwise a :func:`local_session` with ``jars``.
    """
    from pyspark import SparkConf
    from pyspark.sql import SparkSession
    if os.environ.get("SPARK_REMOTE"):   # Spark Connect: the server the environment names (SPARK_REMOTE)
        session = SparkSession.builder.getOrCreate()
        log.info("running in a Spark Connect session (%s)", os.environ["SPARK_REMOTE"])
        return session
    if starts_local_session():
        log.info("no Spark configured: starting a local session (local[2], loopback)")
        return local_session(app_name, jars=jars)
    session = SparkSession.getActiveSession()
    if session is None:
        from pyspark import SparkContext
        SparkContext._ensure_initialized()  # the launcher's JVM, whose system properties hold its settings
        given = SparkConf()  # what spark-submit, spark-defaults.conf or the launcher set
        builder = SparkSession.builder
        if not given.contains("spark.app.name"):
            builder = builder.appName(app_name)
        for key, value in RUNTIME_DEFAULTS.items():
            if not given.contains(key):
                builder = builder.config(key, value)
        if not given.contains(SPARK_LOG_LEVEL) and spark_default_log_profile(SparkContext._jvm):
            builder = builder.config(SPARK_LOG_LEVEL, "WARN")
        # spark-submit --master 'local[...]': the workers run on this machine, forked (pyspark's driver worker quiet)
        local = given.get("spark.master", "").startswith("local")
        with _forked_workers() if local else contextlib.nullcontext():
            session = builder.getOrCreate()
    else:
        given = session.sparkContext.getConf()
        for key, value in RUNTIME_DEFAULTS.items():
            if not given.contains(key) and session.conf.get(key, None) in (None, ""):
                session.conf.set(key, value)
    log.info("running in the configured Spark session (master %s, app %s)", session.sparkContext.master,
             session.sparkContext.appName)
    return session


SPARK_LOG_LEVEL = "spark.log.level"
SPARK_DEFAULT_LOG_PROFILE = "org/apache/spark/log4j2-defaults.properties"


def spark_default_log_profile(jvm: Any) -> bool:
    """Whether the JVM logs with Spark's default log4j profile (everything at INFO), i.e. the user configured no
    log4j of their own. Then the application's session logs Spark at WARN (``spark.log.level``), as Spark's shells
    do: a user who wants Spark's INFO sets ``spark.log.level=INFO`` or a log4j2 configuration."""
    try:
        configuration = jvm.org.apache.logging.log4j.LogManager.getContext(False).getConfiguration()
        return str(configuration.getConfigurationSource().getLocation()).endswith(SPARK_DEFAULT_LOG_PROFILE)
    except Exception:   # another logging backend: leave it as configured
        log.debug("could not read the JVM's log4j configuration", exc_info=True)
        return False


# Spark's loggers that report a failed task or query (the Python traceback and pages of JVM stack, three times over)
# on the driver's console: the runtime raises the same failure as the user's error (runtime/spark/errors.py); and
# the context cleaner's report of its interruption when the JVM stops
TASK_FAILURE_LOGGERS = (
    "org.apache.spark.executor.Executor",                                    # "Exception in task ..."
    "org.apache.spark.scheduler.TaskSetManager",                             # "Lost task ...", "aborting job"
    "org.apache.spark.sql.execution.streaming.runtime.MicroBatchExecution",  # "Query ... terminated with error"
    # "Error cleaning broadcast" with an InterruptedException's JVM stack when the JVM stops (SparkContext.stop
    # interrupts the cleaner mid-RPC); the cleaner's work is best-effort cleanup of what a stopping JVM drops anyway
    "org.apache.spark.ContextCleaner",
)
# Spark's warnings about what the runtime does on purpose, once per query or batch: streaming queries run without
# adaptive execution; a batch takes longer than the trigger (catching up); the state server's socket closes when
# a task ends; close() cancels the job groups of queries that are idle
ROUTINE_WARNING_LOGGERS = (
    "org.apache.spark.sql.execution.streaming.runtime.ResolveWriteToStream",
    "org.apache.spark.sql.execution.streaming.runtime.ProcessingTimeExecutor",
    "org.apache.spark.sql.execution.python.streaming.TransformWithStateInPySparkStateServer",
    "org.apache.spark.scheduler.DAGScheduler",
)
# the JVM Kafka clients of Spark's Kafka source and sink (consumer, producer, admin): a WARN for every reconnect
# attempt while a broker is down (several a second), and Kafka's notes on the configs Spark hands them; only ERROR
# passes, as for kafka-python's clients (docs/logging.md says how to bring them back)
KAFKA_CLIENT_LOGGERS = ("org.apache.kafka",)


def quiet_spark_logs(spark: Any) -> None:
    """Keep Spark's reports of failed tasks and queries (:data:`TASK_FAILURE_LOGGERS`: only what is fatal passes),
    its routine warnings about the runtime's queries (:data:`ROUTINE_WARNING_LOGGERS`: errors pass) and the JVM Kafka
    clients' warnings (:data:`KAFKA_CLIENT_LOGGERS`: errors pass) off the console. A logger the application's log4j
    configuration names is left as configured."""
    try:
        jvm = spark.sparkContext._jvm
        log4j = jvm.org.apache.logging.log4j
        configuration = log4j.LogManager.getContext(False).getConfiguration()
        for names, level in ((TASK_FAILURE_LOGGERS, log4j.Level.FATAL), (ROUTINE_WARNING_LOGGERS, log4j.Level.ERROR),
                             (KAFKA_CLIENT_LOGGERS, log4j.Level.ERROR)):
            for name in names:
                if configuration.getLoggerConfig(name).getName() != name:
                    log4j.core.config.Configurator.setLevel(name, level)
    except Exception:   # another logging backend, or no JVM of ours (Spark Connect): Spark's logs stay as they are
        log.debug("could not quiet Spark's task failure logs", exc_info=True)


def forget_hadoop_property_sources(spark: Any) -> None:
    """Drop the session's record of where each Hadoop property came from (Hadoop's ``Configuration`` keeps the file
    or call that set each one, for ``getPropertySources`` and configuration dumps alone). Every micro-batch of a
    stateful query broadcasts a copy of the session's Hadoop configuration (Spark's ``StateStoreRDD``), and
    ``Configuration.write`` gzips each property's sources one property at a time: ~1,100 properties, 115 KB and
    10-25 ms on the driver before each batch's job (a second stream per property on each executor reading it),
    against 69 KB and 2-5 ms without them. Properties set later record their source again; where the field cannot
    be reached (another Hadoop, Spark Connect) nothing changes."""
    if is_spark_connect(spark):
        return
    try:
        jvm = spark.sparkContext._jvm
        sources = jvm.java.lang.Class.forName("org.apache.hadoop.conf.Configuration").getDeclaredField(
            "updatingResource")
        sources.setAccessible(True)
        conf = spark.sparkContext._jsc.hadoopConfiguration()
        conf.size()   # loads the default resources now, recording their sources as they load
        recorded = sources.get(conf)
        if recorded is not None:
            recorded.clear()
    except Exception:   # another Hadoop without the field, or a JVM that refuses the reflection
        log.debug("could not drop the Hadoop configuration's property sources", exc_info=True)


def require_rocksdb_state_store(spark: Any) -> None:
    """Use Spark's RocksDB state store provider, which the runtime's queries need; an error if another was chosen.
    (Changelog checkpointing is one of the session defaults, :data:`RUNTIME_DEFAULTS`, where the user set none.)"""
    from streams_on_spark.errors import StreamsException
    current = spark.conf.get(STATE_STORE_PROVIDER, None)
    if current == ROCKSDB_PROVIDER:
        return
    try:   # what the launcher set (--conf): not readable under Spark Connect, where only the session conf counts
        chosen = spark.sparkContext.getConf().get(STATE_STORE_PROVIDER, None)
    except Exception:
        chosen = None
    if current and "HDFSBackedStateStoreProvider" not in current:
        chosen = current   # set in the session: not Spark's default
    if chosen not in (None, "", ROCKSDB_PROVIDER):
        raise StreamsException(f"{STATE_STORE_PROVIDER} is set to {chosen}: streams-on-spark keeps task state with "
                               f"transformWithStateInPandas, which needs {ROCKSDB_PROVIDER}; unset it or set it to "
                               "that class")
    log.info("using Spark's RocksDB state store provider (%s)", STATE_STORE_PROVIDER)
    spark.conf.set(STATE_STORE_PROVIDER, ROCKSDB_PROVIDER)


@contextlib.contextmanager
def session_conf(spark: Any, key: str, value: str) -> Iterator[None]:
    """``spark``'s SQL conf ``key`` set to ``value`` while the block runs (a query started in it keeps the value:
    it runs on a copy of the session), then as the user had it."""
    before = spark.conf.get(key, None)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)
