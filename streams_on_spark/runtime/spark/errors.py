"""Errors of Spark queries as the user should see them: the task's Python error, not a JVM stack trace."""
from __future__ import annotations

import re

from streams_on_spark.errors import StreamsException

_PY_ERROR = re.compile(r"(streams_on_spark\.errors\.\w+|[A-Za-z_][\w.]*(?:Error|Exception)): (.+)")
_STACKTRACE = ", stacktrace="
_RAISED = re.compile(r"([A-Za-z_][\w.]*): ?(.*)")   # a traceback's last line: the exception's type and message


def query_error(query: str, error: BaseException) -> StreamsException:
    """A ``StreamsException`` carrying the Python error raised inside the task, not the JVM's stack trace: for a
    processor's error, the task, processor, topic, partition and offset with the user's exception type and message."""
    text = str(error)
    caught = _processing_error(text)
    if caught is not None:
        return StreamsException(f"query {query} failed: {caught}")
    matches = [m for m in _PY_ERROR.finditer(text) if "py4j" not in m.group(1) and "java" not in m.group(1)]
    # the task's own error: the last of the library's in the traceback (a chain prints the causes first)
    detail = next((m.group(0) for m in reversed(matches) if m.group(1).startswith("streams_on_spark")),
                  matches[-1].group(0) if matches else text.splitlines()[0] if text else repr(error))
    return StreamsException(f"query {query} failed: {detail}")


def _processing_error(text: str) -> str | None:
    """``Exception caught in process. taskId=…, processor=…, topic=…, partition=…, offset=…: <Type>: <message>`` from
    the task's error (whose message carries the user's traceback), or None when the failure is not one."""
    lines = text.splitlines()
    header = next((i for i in range(len(lines) - 1, -1, -1)
                   if "Exception caught in " in lines[i] and _STACKTRACE in lines[i]), None)
    if header is None:
        return None
    line = lines[header]
    where = line[line.index("Exception caught in "):line.index(_STACKTRACE)]
    raised = None
    for following in lines[header + 1:]:
        if following.startswith((" SQLSTATE", "=== Streaming Query")):
            break
        match = None if following[:1].isspace() else _RAISED.fullmatch(following)
        if match is not None:
            raised = following   # the last one is the exception the processor raised (causes come first)
    return f"{where}: {raised}" if raised is not None else where
