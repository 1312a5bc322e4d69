"""Record headers: Kafka's ``Headers`` as an immutable tuple of ``(key, value)`` pairs, and their normalization."""
from __future__ import annotations

from typing import Any, Iterable, Optional

from streams_on_spark.errors import bad_argument

Header = tuple[str, Optional[bytes]]
Headers = tuple[Header, ...]


def to_headers(headers: Any) -> Headers:
    """Normalize user headers (None, a dict or an iterable of (key, value) pairs) to an immutable tuple."""
    if headers is None:
        return ()
    if isinstance(headers, dict):
        items: Iterable = headers.items()
    elif isinstance(headers, Iterable) and not isinstance(headers, (str, bytes, bytearray)):
        items = headers
    else:
        raise bad_argument("headers", "a dict or an iterable of (key, value) pairs", headers)
    out = []
    for header in items:
        if not isinstance(header, (tuple, list)) or len(header) != 2:
            raise bad_argument("each header", "a (key, value) pair", header)
        key, value = header
        if not isinstance(key, str):
            raise ValueError(f"header keys must be str, got {type(key).__name__}")
        if isinstance(value, str):
            value = value.encode("utf-8")
        if value is not None and not isinstance(value, (bytes, bytearray)):
            raise ValueError(f"header {key!r} must be bytes, str or None, got {type(value).__name__}")
        out.append((key, None if value is None else bytes(value)))
    return tuple(out)
