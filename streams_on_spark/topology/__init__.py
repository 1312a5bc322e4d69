"""Logical graph, physical topology, subtopologies, partition resolution and ``describe()``."""
