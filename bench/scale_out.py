"""Scale-out on a Spark standalone cluster: word count throughput with ``spark.cores.max`` 1 vs 2.

The cluster is one master and one 2-core worker on loopback (deps/spark_cluster_ctl.py, what `make
spark-cluster-up` runs). By default this script **starts its own cluster** in ``.deps/bench-spark-cluster-run``
(fresh free ports, so it never touches the cluster of `make test` or `make spark-cluster-up` in
``.deps/spark-cluster-run``) and stops it at the end, also on failure or Ctrl-C. With ``--master spark://H:P`` it
**uses a running cluster** instead (e.g. the one `make spark-cluster-up` printed) and leaves it running; that worker
should offer 2 cores and 2 GB and be otherwise idle. A cluster this script left behind (kill -9) is stopped with
``.venv/bin/python deps/spark_cluster_ctl.py down --run-dir .deps/bench-spark-cluster-run`` (or reused by its next run).

Each measurement is one ``spark-submit`` of this file (``--app``) to the cluster, the library shipped as the cluster
tests ship it (tests/integration/cluster/conftest.py): the wheel of `make wheel` under a ``.zip`` name in
``--py-files`` and on the driver's PYTHONPATH, executors on the venv's python with the editable install of
streams_on_spark hidden (so they import only what was shipped). Settings per run:

  cores 1: spark.cores.max=1, spark.executor.cores=1                    -> one executor with 1 core
  cores 2: spark.cores.max=2, spark.executor.cores=2 (``--shape one``)  -> one executor with 2 cores (default)
           spark.cores.max=2, spark.executor.cores=1 (``--shape split``) -> two executors with 1 core each
  ``--shape both`` measures both 2-core shapes.

spark.executor.memory 1g in every run. The application (``--app``): the word count of bench/spark_engine.py (its
``word_count()``: flat_map_values -> select_key -> the ``by-word`` repartition topic -> count, two subtopology
queries; Kafka's default record cache) in ``KafkaStreams`` on the session spark-submit configured, over 4-partition
embedded topics in /dev/shm (one machine: every executor sees them). First an unmeasured warm-up application
(``--warmup-words``, JVM and Python workers); then, per measured application, a fresh application whose queries are
started and have processed a small first batch (planning, first-batch costs), then ``--words`` words (default
1,000,000, bench/spark_engine.py's generator: 10-word sentences over 5,000 words, the same input in every run) are
appended at once and timed until ``process_all_available()`` returns. The submissions alternate 1, 2, 2, 1, ...
(``--reps`` each) so a drift of the machine's load hits both sides alike.

Prints words/s per run, the median per core count and the ratio (issue 25's target: >= 1.8x; measured before 1.63x).
The driver, the master and worker daemons and the Python planner of the embedded source share the 2 cores with the
executors: on this box the ratio includes that contention. A benchmark: it prints, never asserts timings.

    make bench-scale-out [BENCH_ARGS="--words 200000 --reps 1"]
    .venv/bin/python bench/scale_out.py [--master spark://127.0.0.1:PORT] [--words N] [--reps N]
        [--shape one|split|both] [--wheel dist/streams_on_spark-<version>-py3-none-any.whl]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH_RUN_DIR = ROOT / ".deps" / "bench-spark-cluster-run"
RESULT = "SCALE-OUT-RESULT "
PARTITIONS = 4


def load(name: str, path: Path, register: bool = False) -> Any:
    """A module by path. Kept out of sys.modules unless ``register``: cloudpickle then ships its functions by value
    to the executors (which have only the library, not bench/ or tests/)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    if register:
        sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# ----------------------------------------------------------------------------------- the application (on the cluster)

def app_main(args: argparse.Namespace) -> int:
    import logging
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from streams_on_spark import KafkaStreams
    from streams_on_spark.connectors.embedded import EmbeddedTopics
    from streams_on_spark.records import ProducerRecord
    from streams_on_spark.runtime.spark import application_session
    bench = load("bench_spark_engine", ROOT / "bench" / "spark_engine.py")
    import streams_on_spark
    spark = application_session("bench-scale-out")
    conf = spark.sparkContext.getConf()
    print(f"app: master {spark.sparkContext.master}, spark.cores.max={conf.get('spark.cores.max', '-')}, "
          f"spark.executor.cores={conf.get('spark.executor.cores', '-')}, library from {streams_on_spark.__file__}",
          flush=True)

    def run(lines: list[str], first: list[str], label: str) -> float:
        with EmbeddedTopics() as topics, tempfile.TemporaryDirectory(prefix="scale-out-ck-", dir="/dev/shm") as ck:
            topics.create_topic("sentences", PARTITIONS)
            topics.create_topic("word-counts-out", PARTITIONS)
            config = {"application.id": f"scale-out-{label}", "embedded.topics.dir": topics.root,
                      "checkpoint.location": ck}
            with KafkaStreams(bench.word_count(), config, spark) as streams:
                started = time.perf_counter()
                streams.start()
                topics.append([ProducerRecord("sentences", i % PARTITIONS, i, None, line.encode(), ())
                               for i, line in enumerate(first)])
                streams.process_all_available()
                warm_s = time.perf_counter() - started
                topics.append([ProducerRecord("sentences", i % PARTITIONS, len(first) + i, None, line.encode(), ())
                               for i, line in enumerate(lines)])
                started = time.perf_counter()
                streams.process_all_available()
                seconds = time.perf_counter() - started
                executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1  # minus the driver
                out = sum(topics.end_offsets("word-counts-out"))
            print(f"app: {label}: start + first batch of {len(first)} sentences {warm_s:.1f} s; "
                  f"{len(lines)} sentences in {seconds:.2f} s; {out} count updates out; {executors} executor(s)",
                  flush=True)
            return seconds

    first = bench.sentences(1_000, seed=3)
    if args.warmup_words:
        run(bench.sentences(args.warmup_words, seed=1), first, "warmup")
    for rep in range(args.app_runs):
        lines = bench.sentences(args.words)
        seconds = run(lines, first, f"run{rep}")
        print(RESULT + json.dumps({"words": args.words, "seconds": seconds}), flush=True)
    spark.stop()
    return 0


# ----------------------------------------------------------------------------------------------- the launcher

def start_cluster(cores: int, memory: str) -> str:
    command = [sys.executable, str(ROOT / "deps" / "spark_cluster_ctl.py"), "up", "--run-dir", str(BENCH_RUN_DIR),
               "--cores", str(cores), "--memory", memory]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"starting the bench cluster failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout.strip().splitlines()[-1]


def stop_cluster() -> None:
    subprocess.run([sys.executable, str(ROOT / "deps" / "spark_cluster_ctl.py"), "down", "--run-dir",
                    str(BENCH_RUN_DIR)], capture_output=True, text=True)


def executor_python(work: Path, sitecustomize: str) -> Path:
    """The venv's python with the editable install hidden (tests/integration/cluster/conftest.py's wrapper)."""
    hide = work / "hide-editable-install"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(sitecustomize)
    wrapper = work / "python"
    wrapper.write_text("#!/bin/sh\n"
                       f'PYTHONPATH={shlex.quote(str(hide))}"${{PYTHONPATH:+:$PYTHONPATH}}" '
                       f'exec {shlex.quote(sys.executable)} "$@"\n')
    wrapper.chmod(0o755)
    probe = subprocess.run([str(wrapper), "-c", "import streams_on_spark"], cwd=work, capture_output=True, text=True)
    if "No module named 'streams_on_spark'" not in probe.stderr:
        raise SystemExit(f"{wrapper} should hide the editable install of streams_on_spark, but the import gave exit "
                         f"{probe.returncode}: {probe.stderr.strip()[-1000:]}")
    return wrapper


def submit(master: str, cores: int, executor_cores: int, zip_path: Path, python: Path, env: dict[str, str],
           work: Path, args: argparse.Namespace, label: str) -> tuple[list[float], float]:
    """spark-submit this file in --app mode; returns the measured seconds of its runs and the submission's wall time."""
    local = work / f"driver-local-{label}"
    local.mkdir()
    conf = {
        "spark.pyspark.python": str(python),
        "spark.pyspark.driver.python": sys.executable,
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.local.dir": str(local),
        "spark.task.maxFailures": "1",
        "spark.cores.max": str(cores),
        "spark.executor.cores": str(executor_cores),
        "spark.executor.memory": "1g",
    }
    command = [str(Path(sys.executable).parent / "spark-submit"), "--master", master, "--py-files", str(zip_path)]
    for key, value in conf.items():
        command += ["--conf", f"{key}={value}"]
    command += [str(Path(__file__).resolve()), "--app", "--words", str(args.words),
                "--warmup-words", str(args.warmup_words), "--app-runs", str(args.app_runs)]
    out_path, err_path = work / f"{label}.stdout", work / f"{label}.stderr"
    started = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=work, env=env,
                                start_new_session=True)
        try:
            proc.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise SystemExit(f"{label}: spark-submit did not finish within {args.timeout:.0f} s; see {err_path}")
        except BaseException:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
    wall = time.monotonic() - started
    stdout = out_path.read_text(errors="replace")
    for line in stdout.splitlines():
        if line.startswith("app: "):
            print(f"  [{label}] {line[5:]}", flush=True)
    results = [json.loads(line[len(RESULT):]) for line in stdout.splitlines() if line.startswith(RESULT)]
    if proc.returncode != 0 or len(results) != args.app_runs:
        said = [ln for ln in (stdout + "\n" + err_path.read_text(errors="replace")).splitlines()
                if ("Error" in ln or "Exception" in ln) and not ln.strip().startswith("at ")]
        raise SystemExit(f"{label}: spark-submit exit {proc.returncode}, {len(results)} results\n"
                         + "\n".join(said[:30]) + f"\nstdout: {out_path}\nstderr: {err_path}")
    return [r["seconds"] for r in results], wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", action="store_true", help=argparse.SUPPRESS)   # run as the submitted application
    parser.add_argument("--app-runs", type=int, default=1, help="measured applications per submission (default 1)")
    parser.add_argument("--words", type=int, default=1_000_000)
    parser.add_argument("--warmup-words", type=int, default=100_000,
                        help="words of the unmeasured warm-up application of each submission (0: none)")
    parser.add_argument("--reps", type=int, default=2, help="submissions per configuration (default 2)")
    parser.add_argument("--shape", choices=["one", "split", "both"], default="one",
                        help="the 2-core run as one 2-core executor (one), two 1-core executors (split), or both")
    parser.add_argument("--master", help="a running standalone cluster to use (left running); default: start one in "
                                         f"{BENCH_RUN_DIR.relative_to(ROOT)} and stop it afterwards")
    parser.add_argument("--worker-cores", type=int, default=2, help="cores of the worker this script starts")
    parser.add_argument("--worker-memory", default="2g", help="memory of the worker this script starts")
    parser.add_argument("--wheel", type=Path, help="the library's wheel (default: dist/ of `make wheel`)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds allowed per submission")
    parser.add_argument("--keep-work", action="store_true", help="keep the submissions' outputs (their dir is printed)")
    args = parser.parse_args(argv)
    if args.app:
        return app_main(args)

    # the cluster tests' own wrapper code and spark-submit environment (launcher side only: nothing of it is pickled)
    conftest = load("bench_cluster_conftest", ROOT / "tests" / "integration" / "cluster" / "conftest.py", True)
    version = re.search(r'^version *= *"(.*)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    wheel = (args.wheel or ROOT / "dist" / f"streams_on_spark-{version}-py3-none-any.whl").resolve()
    if not wheel.is_file():
        parser.error(f"no wheel at {wheel}: run `make wheel` (or pass --wheel)")
    work = Path(tempfile.mkdtemp(prefix="bench-scale-out-"))
    zip_path = work / (wheel.name.removesuffix(".whl") + ".zip")   # --py-files puts only .zip/.egg/.jar on sys.path
    shutil.copyfile(wheel, zip_path)
    python = executor_python(work, conftest.SITECUSTOMIZE)
    env = {**conftest.submit_env(), "PYTHONPATH": str(zip_path)}   # the driver imports the shipped library too

    own = args.master is None
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # run the finally below: stop our cluster, clean up
    configs: list[tuple[str, int, int]] = [("1 core", 1, 1)]
    if args.shape in ("one", "both"):
        configs.append(("2 cores, 1 executor", 2, 2))
    if args.shape in ("split", "both"):
        configs.append(("2 cores, 2 executors", 2, 1))
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    results: dict[str, list[float]] = {name: [] for name, _, _ in configs}
    try:
        if own:
            started = time.monotonic()
            master = start_cluster(args.worker_cores, args.worker_memory)
            print(f"started a standalone cluster at {master} (worker: {args.worker_cores} cores, {args.worker_memory}; "
                  f"run dir {BENCH_RUN_DIR.relative_to(ROOT)}) in {time.monotonic() - started:.1f} s", flush=True)
        else:
            master = args.master
            print(f"using the running cluster at {master}", flush=True)
        print(f"scale-out bench: {args.words:,} words per run, {args.reps} submission(s) per configuration, "
              f"library shipped from {wheel.relative_to(ROOT) if ROOT in wheel.parents else wheel}; "
              f"load average before {' '.join(load_before)}", flush=True)
        for rep in range(args.reps):
            order = configs if rep % 2 == 0 else list(reversed(configs))
            for name, cores, executor_cores in order:
                label = f"{name.split(',')[0].replace(' ', '')}{'' if executor_cores == cores else '-split'}-rep{rep}"
                seconds, wall = submit(master, cores, executor_cores, zip_path, python, env, work, args, label)
                for s in seconds:
                    results[name].append(args.words / s)
                    print(f"{name:22s} rep {rep}: {args.words:,} words in {s:6.2f} s = {args.words / s:9,.0f} words/s "
                          f"(submission {wall:.0f} s)", flush=True)
    finally:
        if own:
            stop_cluster()
        if args.keep_work:
            print(f"submission outputs kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    load_after = Path("/proc/loadavg").read_text().split()[:3]
    print(f"\nword count on the standalone cluster ({args.words:,} words, median of {args.reps} submission(s)):")
    base = statistics.median(results["1 core"])
    print(f"  {'1 core':22s} {base:9,.0f} words/s   (runs: {', '.join(f'{r:,.0f}' for r in results['1 core'])})")
    for name, cores, _ in configs[1:]:
        median = statistics.median(results[name])
        print(f"  {name:22s} {median:9,.0f} words/s   (runs: {', '.join(f'{r:,.0f}' for r in results[name])})   "
              f"ratio to 1 core: {median / base:.2f}x")
    print(f"target (issue 25): >= 1.8x; load average before {' '.join(load_before)}, after {' '.join(load_after)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
