"""How long an application takes to start: the crash tests' application (tests/integration/spark/apps/crash_app.py,
``exactly_once_v2`` over embedded topics) launched as ``python crash_app.py``, as the crash tests launch it.

Per round and checkout: one run from launch to its "started" line (``KafkaStreams.start()`` returned), then killed
with its process group; then a ``--drain`` run on the same checkpoint, launch to "started" and to its exit (its first
batches done). CPU time is the user + sys of the application's whole process group (Spark's JVM, the fork server,
the Python workers), sampled from ``/proc`` every 0.2 s, so a process that lives less than that is not counted.

Checkouts alternate (A B A B ...): each is a worktree whose code the applications import (``SOS_WORKTREE`` and
``PYTHONPATH`` name it; set ``STREAMS_ON_SPARK_CLASS_ARCHIVE`` as ``make test`` does). A benchmark: it prints,
never asserts timings.

    .venv/bin/python bench/app_start.py [--rounds 3] CHECKOUT [CHECKOUT ...]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def group_cpu(group: int, seen: dict[str, float], stop: threading.Event) -> None:
    """CPU-seconds of every process of session ``group``, the last value seen of each, into ``seen``."""
    while not stop.is_set():
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == group:
                seen[pid] = max(seen.get(pid, 0.0), (int(fields[11]) + int(fields[12])) / TICK)
        stop.wait(0.2)


def launch(checkout: Path, work: Path, drain: bool) -> tuple[float, float | None, float]:
    """(launch -> "started", launch -> exit (``drain``), CPU-seconds of the application's processes)."""
    app = checkout / "tests" / "integration" / "spark" / "apps" / "crash_app.py"
    command = [sys.executable, str(app), str(work / "topics"), str(work / "cp"), str(work / "state"),
               "--guarantee", "exactly_once_v2"] + (["--drain"] if drain else [])
    env = {**os.environ, "SOS_WORKTREE": str(checkout),
           "PYTHONPATH": os.pathsep.join([str(checkout)] + os.environ.get("PYTHONPATH", "").split(os.pathsep)[1:])}
    began = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=open(work / "log", "a"), text=True, env=env,
                            start_new_session=True)
    seen: dict[str, float] = {}
    stop = threading.Event()
    sampler = threading.Thread(target=group_cpu, args=(proc.pid, seen, stop))
    sampler.start()
    started = float("nan")
    for line in proc.stdout:
        if line.strip() == "started":
            started = time.monotonic() - began
            if not drain:
                break
    done = None
    if drain:
        proc.wait()
        done = time.monotonic() - began
    stop.set()
    sampler.join()
    if not drain:
        os.killpg(proc.pid, 9)
        proc.wait()
    return started, done, sum(seen.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for _ in range(args.rounds):
        for checkout in args.checkouts:
            spec = importlib.util.spec_from_file_location(
                "crash_app", checkout / "tests" / "integration" / "spark" / "apps" / "crash_app.py")
            crash_app = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(crash_app)
            from streams_on_spark.connectors.embedded import EmbeddedTopics
            work = Path(tempfile.mkdtemp(prefix="app-start-"))
            topics = EmbeddedTopics(str(work / "topics"))
            topics.create_topic("sentences", 1)
            for name in crash_app.OUTPUTS:
                topics.create_topic(name, 4)
            topics.append(crash_app.records("", crash_app.chunk(random.Random(1), 0, 200)))
            started, _, cpu = launch(checkout, work, drain=False)
            drain_started, done, drain_cpu = launch(checkout, work, drain=True)
            print(f"{checkout}: launch -> started {started:5.1f} s (CPU {cpu:5.1f} s); drain run: started "
                  f"{drain_started:5.1f} s, done {done:5.1f} s (CPU {drain_cpu:5.1f} s); load "
                  f"{os.getloadavg()[0]:.1f}", flush=True)
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
