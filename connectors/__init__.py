"""Connectors between streams-on-spark and the outside world (Kafka partitioning, sources, sinks)."""
