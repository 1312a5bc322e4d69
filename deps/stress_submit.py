"""Run the spark-submit word count test again and again while busy loops load the machine (`make stress-submit`).

The test (tests/integration/kafka/test_spark_submit.py) once reported a count it had not read when the machine was
loaded; this repeats it ``--runs`` times in a row with ``--busy`` processes spinning on the CPUs meanwhile, and prints
one line per run and a summary. Needs the broker `make stress-submit` starts (``STREAMS_ON_SPARK_KAFKA``). Exits
non-zero if any run failed; the failed runs' pytest output is kept in the log directory.

Usage: python deps/stress_submit.py [--runs 20] [--busy 2] [--log-dir .deps/stress-submit]
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST = "tests/integration/kafka/test_spark_submit.py::test_the_word_count_under_spark_submit_with_the_checkout_jars"


def spin(stop_at: float) -> None:
    """A busy loop, bounded in time: it stops by itself even if the parent dies."""
    while time.monotonic() < stop_at:
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--busy", type=int, default=2, help="busy-loop processes loading the machine")
    parser.add_argument("--log-dir", default=str(ROOT / ".deps" / "stress-submit"))
    parser.add_argument("--max-hours", type=float, default=3.0, help="the busy loops stop after this long anyway")
    args = parser.parse_args(argv)
    if not os.environ.get("STREAMS_ON_SPARK_KAFKA"):
        print("STREAMS_ON_SPARK_KAFKA is not set: run `make stress-submit` (it starts the broker)", file=sys.stderr)
        return 2
    logs = Path(args.log_dir)
    logs.mkdir(parents=True, exist_ok=True)
    stop_at = time.monotonic() + args.max_hours * 3600
    busy = [multiprocessing.Process(target=spin, args=(stop_at,), daemon=True) for _ in range(args.busy)]
    for p in busy:
        p.start()
    failed: list[int] = []
    started = time.monotonic()
    try:
        for run in range(1, args.runs + 1):
            began = time.monotonic()
            result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", TEST],
                                    cwd=ROOT, capture_output=True, text=True)
            seconds = time.monotonic() - began
            outcome = "passed" if result.returncode == 0 else "FAILED"
            if result.returncode != 0:
                failed.append(run)
                (logs / f"run-{run}.log").write_text(result.stdout + "\n--- stderr ---\n" + result.stderr)
            print(f"run {run:2d}/{args.runs}: {outcome} in {seconds:.0f}s", flush=True)
    finally:
        for p in busy:
            p.terminate()
            p.join(5)
    print(f"{args.runs - len(failed)} of {args.runs} passed in {(time.monotonic() - started) / 60:.1f} min with "
          f"{args.busy} busy loops" + (f"; failed runs {failed}, logs in {logs}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
