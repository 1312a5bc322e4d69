"""``python -m streams_on_spark``: the ``streams-on-spark`` command line."""
import sys

from streams_on_spark.cli import main

sys.exit(main())
