"""The DSL: ``StreamsBuilder``, ``KStream``, ``KTable``, grouped streams and parameter objects."""
