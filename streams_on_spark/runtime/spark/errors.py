"""Errors of Spark queries as the user should see them: the task's Python error, not a JVM stack trace."""
from __future__ import annotations

import re

from streams_on_spark.errors import StreamsException

_PY_ERROR = re.compile(r"(streams_on_spark\.errors\.\w+|[A-Za-z_][\w.]*(?:Error|Exception)): (.+)")


def query_error(query: str, error: BaseException) -> StreamsException:
    """A ``StreamsException`` carrying the Python error raised inside the task, not the JVM's stack trace."""
    text = str(error)
    matches = [m for m in _PY_ERROR.finditer(text) if "py4j" not in m.group(1) and "java" not in m.group(1)]
    detail = next((m.group(0) for m in matches if m.group(1).startswith("streams_on_spark")),
                  matches[-1].group(0) if matches else text.splitlines()[0] if text else repr(error))
    return StreamsException(f"query {query} failed: {detail}")
