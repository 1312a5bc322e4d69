"""The DSL's operators: the processors the DSL's calls become, grouped by concept as Kafka's ``kstream.internals``
groups them — ``stateless``, ``tables``, ``aggregations``, ``windowed`` (windowed aggregations, suppression),
``joins``, ``foreign_key_joins``, and what several share (``shared``). The Processor API users write against is
``streams_on_spark.processor``."""
