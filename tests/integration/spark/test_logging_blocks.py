"""docs/logging.md's first spark-submit block, run as written on the repository's word count: ``spark.log.level=INFO``
brings Spark's INFO back (the library keeps Spark at WARN only where the application set no level). (The page's next
block names the user's own log4j2 file: tests/unit/docs/test_command_blocks.py lists it as a placeholder block.)"""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.spark


def test_spark_log_level_info_brings_sparks_info_back(documented, tmp_path):
    (command,) = documented.commands(documented.block("docs/logging.md", "## Spark's logs"))
    assert "--conf spark.log.level=INFO examples/wordcount.py" in command, command
    result = documented.run(f"{command} --repeat 1 --partitions 1 --topics-dir {tmp_path / 'topics'}\n")
    assert result.returncode == 0, result.stdout[-2000:] + "\n--- stderr ---\n" + result.stderr[-4000:]
    assert "top 10 words: the=23" in result.stdout, result.stdout[-2000:]
    # the state stores' INFO, logged while the queries run, after the library set its levels: at WARN it would not show
    assert " INFO StateStore: " in result.stderr, result.stderr[-4000:]
