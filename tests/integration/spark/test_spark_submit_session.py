"""Under spark-submit the application runs in the session spark-submit configured: its --master and its
configuration (here spark-defaults.conf) win. The command is docs/running-on-spark.md's embedded-topics block, run as
written in a shell as a new user has it (no activated venv, no PYSPARK_PYTHON of the test run), the example given a
small input; and the page's ``--py-files`` block, run as written the same way."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.spark
PAGE = "docs/running-on-spark.md"


def test_spark_submit_master_and_conf_are_what_the_application_runs_with(documented, tmp_path):
    block = documented.block(PAGE, "## spark-submit")
    assert "--master 'local[2]' examples/wordcount.py" in block, block
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text("spark.app.name wordcount-as-submitted\nspark.ui.enabled false\n"
                                              "spark.driver.host 127.0.0.1\n")
    # the block's commands, the example's arguments after the last
    script = "\n".join(documented.commands(block)) + f" --repeat 1 --partitions 2 --topics-dir {tmp_path / 'topics'}\n"
    result = documented.run(script, SPARK_CONF_DIR=str(conf))
    assert result.returncode == 0, result.stdout[-2000:] + "\n--- stderr ---\n" + result.stderr[-4000:]
    assert "spark: master local[2], app wordcount-as-submitted" in result.stdout
    assert "top 10 words: the=23" in result.stdout


def test_the_py_files_block_runs_as_written(documented):
    """The page's ``--py-files`` block, after its ``export PYSPARK_PYTHON`` (the block says "exported as above").
    The example runs on its in-process engine (``--engine local`` added): spark-submit parses the options and puts the
    shipped module on the driver's path without the cost of a Spark session's start; that the executors import what
    --py-files ships is proved on the cluster (tests/integration/cluster/test_cluster_smoke.py)."""
    export = documented.commands(documented.block(PAGE, "## spark-submit"))[0]
    assert export.startswith("export PYSPARK_PYTHON="), export
    (shipping,) = documented.commands(documented.block(PAGE, "## Shipping your modules: `--py-files`"))
    assert "--py-files examples/_common.py examples/click_counts.py" in shipping, shipping
    result = documented.run(f"{export}\n{shipping} --engine local\n")
    assert result.returncode == 0, result.stdout[-2000:] + "\n--- stderr ---\n" + result.stderr[-4000:]
    assert "local: final click counts per user and minute" in result.stdout, result.stdout[-2000:]
