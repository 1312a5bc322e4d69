package streamsonspark.reference;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.ValueTransformerWithKey;
import org.apache.kafka.streams.processor.ProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * {@code KTable#transformValues} (a {@code ValueTransformerWithKey}, Kafka 4.3 still has it): unmaterialized, where a
 * downstream groupBy asks for old values and they go through the transformer too (new value first, then old, a null
 * one included); materialized, where the old value comes from the store; and as the value getter of a stream-table
 * join, where a key missing from the table reaches the transformer as null. Mirrored in
 * tests/conformance/test_kafka_reference.py (table_transform_values).
 */
final class TransformValuesScenarios {
    private TransformValuesScenarios() {}

    static final Serde<String> S = Serdes.String();
    static final Serde<Long> L = Serdes.Long();

    static List<Scenario> all() {
        final List<Scenario> all = new ArrayList<>();
        for (final String variant : new String[] {"unmaterialized", "materialized", "materialized-uncached"}) {
            all.add(transformValues(variant));
        }
        all.add(transformValuesJoin());
        all.add(transformValuesVersioned());
        return all;
    }

    /** Upper-cases values and counts its calls per key in the store "calls" (every call, with a null value too). */
    static final class CountingUpper implements ValueTransformerWithKey<String, String, String> {
        private KeyValueStore<String, Long> calls;

        @Override
        public void init(final ProcessorContext context) {
            calls = context.getStateStore("calls");
        }

        @Override
        public String transform(final String key, final String value) {
            final Long n = calls.get(key);
            calls.put(key, n == null ? 1L : n + 1);
            return value == null ? null : value.toUpperCase();
        }

        @Override
        public void close() {}
    }

    /** "key=value", and "none" for a missing value (a delete, or a key the table does not have). */
    static final class Describe implements ValueTransformerWithKey<String, String, String> {
        @Override
        public void init(final ProcessorContext context) {}

        @Override
        public String transform(final String key, final String value) {
            return value == null ? "none" : key + "=" + value;
        }

        @Override
        public void close() {}
    }

    /** value + "!" (null stays null). */
    static final class Bang implements ValueTransformerWithKey<String, String, String> {
        @Override
        public void init(final ProcessorContext context) {}

        @Override
        public String transform(final String key, final String value) {
            return value == null ? null : value + "!";
        }

        @Override
        public void close() {}
    }

    static Scenario transformValuesVersioned() {
        return new Scenario("table-transform-values-versioned", "default",
                "transformValues of a versioned table: unmaterialized (versioned upstream: groupBy skips out-of-order "
                        + "updates) and materialized in a versioned store of its own, which a stream joins as of its "
                        + "records",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KTable<String, String> prices = VersionedScenarios.prices(builder);
                    final KTable<String, String> marked = prices.transformValues(Bang::new);
                    marked.toStream().to("marked", Produced.with(S, S));
                    marked.groupBy((k, v) -> KeyValue.pair(v.substring(0, 1), v), Grouped.with(S, S))
                            .count()
                            .toStream()
                            .to("counts", Produced.with(S, L));
                    final KTable<String, String> kept = prices.transformValues(Bang::new,
                            Materialized.<String, String>as(Stores.persistentVersionedKeyValueStore("kept-store",
                                    Duration.ofMillis(5))).withKeySerde(S).withValueSerde(S));
                    kept.toStream().to("kept", Produced.with(S, S));
                    builder.stream("orders", Consumed.with(S, S))
                            .join(kept, (o, p) -> o + "@" + p)
                            .to("orders-kept", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("prices", "string", "string")
                .input("orders", "string", "string")
                .output("marked", "string", "string")
                .output("counts", "string", "long")
                .output("kept", "string", "string")
                .output("orders-kept", "string", "string")
                .pipe("prices", "a", "p10", 10L)
                .pipe("prices", "a", "q20", 20L)
                .pipe("prices", "a", "p15", 15L)
                .pipe("orders", "a", "o1", 16L)
                .pipe("prices", "b", "p30", 30L)
                .pipe("prices", "a", "q25", 25L)
                .pipe("orders", "a", "o2", 22L)
                .pipe("prices", "a", "p1", 1L)
                .pipe("prices", "b", "q28", 28L)
                .pipe("orders", "b", "o3", 29L)
                .pipe("prices", "b", null, 31L)
                .pipe("orders", "b", "o4", 32L);
    }

    static Scenario transformValues(final String variant) {
        final boolean materialized = !variant.equals("unmaterialized");
        final Scenario s = new Scenario("table-transform-values", variant,
                "table() + transformValues (counting its calls per key in a connected store)"
                        + (materialized ? ", named and materialized" : "") + "; toStream, and groupBy + count "
                        + "downstream, which needs old values",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("calls"), S, L));
                    final KTable<String, String> items = builder.table("items", Consumed.with(S, S));
                    final KTable<String, String> upper;
                    if (materialized) {
                        Materialized<String, String, KeyValueStore<Bytes, byte[]>> m =
                                Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("upper-store")
                                        .withKeySerde(S).withValueSerde(S);
                        if (variant.equals("materialized-uncached")) {
                            m = m.withCachingDisabled();
                        }
                        upper = items.transformValues(CountingUpper::new, m, Named.as("upper"), "calls");
                    } else {
                        upper = items.transformValues(CountingUpper::new, "calls");
                    }
                    upper.toStream().to("upper-out", Produced.with(S, S));
                    upper.groupBy((k, v) -> KeyValue.pair(v.substring(0, 1), v), Grouped.with("by-initial", S, S))
                            .count(Scenarios.kv("initial-counts", L, false))
                            .toStream()
                            .to("initial-counts-out", Produced.with(S, L));
                    return builder.build(props);
                })
                .input("items", "string", "string")
                .output("upper-out", "string", "string")
                .output("initial-counts-out", "string", "long")
                .store("calls", "kv")
                .store("initial-counts", "timestamped-kv");
        if (materialized) {
            s.store("upper-store", "timestamped-kv");
        }
        return s.pipe("items", "a", "apple", 1L, "h", "a1")
                .pipe("items", "b", "banana", 2L)
                .pipe("items", "a", "avocado", 3L)
                .pipe("items", "b", "cherry", 4L, "h", "b4")
                .pipe("items", "a", null, 5L)
                .pipe("items", "c", null, 6L)
                .pipe("items", "c", "blueberry", 7L)
                .pipe("items", "b", "citron", 2L);
    }

    static Scenario transformValuesJoin() {
        return new Scenario("table-transform-values-join", "view",
                "stream-table join against an unmaterialized transformValues: its value getter transforms what the "
                        + "source table's store holds, null (a missing key) included",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KTable<String, String> items = builder.table("items", Consumed.with(S, S));
                    final KTable<String, String> described = items.transformValues(Describe::new);
                    described.toStream().to("described-out", Produced.with(S, S));
                    builder.stream("orders", Consumed.with(S, S))
                            .join(described, (o, d) -> o + "@" + d)
                            .to("orders-out", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("items", "string", "string")
                .input("orders", "string", "string")
                .output("described-out", "string", "string")
                .output("orders-out", "string", "string")
                .pipe("orders", "a", "o1", 1L)
                .pipe("items", "a", "apple", 2L, "h", "a2")
                .pipe("orders", "a", "o2", 3L, "h", "o2")
                .pipe("items", "a", null, 4L)
                .pipe("orders", "a", "o3", 5L)
                .pipe("items", "b", "banana", 6L)
                .pipe("orders", "b", "o4", 7L);
    }
}
