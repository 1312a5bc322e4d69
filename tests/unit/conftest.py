"""Fixtures shared by unit tests of more than one directory."""
from __future__ import annotations

import importlib
import logging

import pytest

from streams_on_spark.connectors import kafka_config


@pytest.fixture
def fresh_filter(monkeypatch):
    """kafka-python's loggers and the library's outage filter as in a new process (no level set on ``kafka``, no
    filter of the library on any of them), restored afterwards."""
    fresh = kafka_config._OutageFilter()
    monkeypatch.setattr(kafka_config, "_OUTAGE_FILTER", fresh)
    monkeypatch.setattr(logging.getLogger("kafka"), "level", logging.NOTSET)
    importlib.import_module("kafka")   # creates kafka-python's loggers
    for name in ["kafka"] + [n for n in list(logging.Logger.manager.loggerDict) if n.startswith("kafka.")]:
        logger = logging.getLogger(name)   # without the filters other tests' connectors put there
        others = [f for f in logger.filters if not isinstance(f, kafka_config._OutageFilter)]
        monkeypatch.setattr(logger, "filters", others)
    yield fresh
