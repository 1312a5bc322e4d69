package streamsonspark.reference;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.processor.RecordContext;
import org.apache.kafka.streams.processor.StreamPartitioner;
import org.apache.kafka.streams.processor.TopicNameExtractor;

/**
 * Dynamic routing ({@code KStream#to(TopicNameExtractor, Produced)}: the sink's topic chosen per record from its key,
 * value and {@link RecordContext}) and stream partitioners (KIP-837's {@code partitions}: empty for the default
 * partitioning, an empty set to drop the record, counted in {@code dropped-records-total}) on {@code Produced} and
 * {@code Repartitioned}. Mirrored in tests/conformance/test_kafka_reference.py (dynamic_routing, stream_partitioner).
 */
final class RoutingScenarios {
    private RoutingScenarios() {}

    static final Serde<String> S = Serdes.String();
    static final Serde<Long> L = Serdes.Long();

    static List<Scenario> all() {
        final List<Scenario> all = new ArrayList<>();
        all.add(dynamicRouting());
        all.add(streamPartitioner());
        return all;
    }

    /** The "route" header's value if the record has one; "late" from timestamp 100 on; else the source topic and
     *  "-alpha" or "-other" by the value's first letter. Printed by describe() as "Router". */
    static final class Router implements TopicNameExtractor<String, String> {
        @Override
        public String extract(final String key, final String value, final RecordContext context) {
            final Header route = context.headers().lastHeader("route");
            if (route != null) {
                return new String(route.value(), StandardCharsets.UTF_8);
            }
            if (context.timestamp() >= 100) {
                return "late";
            }
            return context.topic() + (value.startsWith("a") ? "-alpha" : "-other");
        }

        @Override
        public String toString() {
            return "Router";
        }
    }

    /** Keys starting "drop": no partition (the record is dropped); "default": the default partitioning; else the
     *  key's length modulo the partition count. */
    static final class ByKeyLength<V> implements StreamPartitioner<String, V> {
        @Override
        public Optional<Set<Integer>> partitions(final String topic, final String key, final V value,
                                                 final int numPartitions) {
            if (key.startsWith("drop")) {
                return Optional.of(Collections.emptySet());
            }
            if (key.startsWith("default")) {
                return Optional.empty();
            }
            return Optional.of(Collections.singleton(key.length() % numPartitions));
        }
    }

    static Scenario dynamicRouting() {
        return new Scenario("dynamic-routing", "extractor",
                "to(TopicNameExtractor): a named sink choosing each record's topic from a header, the record's "
                        + "timestamp and its source topic; a second one with a stream partitioner that drops some",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.stream("events", Consumed.with(S, S))
                            .mapValues(v -> v.toLowerCase(), Named.as("lower"))
                            .to(new Router(), Produced.with(S, S).withName("router"));
                    builder.stream("clicks", Consumed.with(S, S))
                            .to(new Router(), Produced.with(S, S).withStreamPartitioner(new ByKeyLength<>()));
                    return builder.build(props);
                })
                .input("events", "string", "string")
                .input("clicks", "string", "string")
                .output("events-alpha", "string", "string")
                .output("events-other", "string", "string")
                .output("clicks-alpha", "string", "string")
                .output("clicks-other", "string", "string")
                .output("late", "string", "string")
                .output("audit", "string", "string")
                .pipe("events", "k1", "Apple", 10L)
                .pipe("events", "k2", "Banana", 11L, "h", "x")
                .pipe("events", "k1", "Avocado", 12L, "route", "audit")
                .pipe("events", "k3", "apricot", 150L)
                .pipe("events", null, "blueberry", 13L)
                .pipe("clicks", "c1", "a-click", 20L)
                .pipe("clicks", "drop-me", "a-click", 21L)
                .pipe("clicks", "default-1", "b-click", 22L, "route", "audit")
                .pipe("clicks", "c22", "c-click", 200L)
                .pipe("clicks", "drop-too", "b-click", 23L);
    }

    static Scenario streamPartitioner() {
        return new Scenario("stream-partitioner", "produced-repartitioned",
                "Produced.withStreamPartitioner and Repartitioned.withStreamPartitioner (KIP-837 partitions): a "
                        + "partitioner's empty set drops the record (dropped-records-total), an empty Optional "
                        + "falls back to the default partitioning",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KStream<String, String> orders = builder.stream("orders", Consumed.with(S, S));
                    orders.to("routed", Produced.with(S, S).withStreamPartitioner(new ByKeyLength<>()));
                    orders.repartition(Repartitioned.<String, String>as("spread").withKeySerde(S).withValueSerde(S)
                                    .withStreamPartitioner(new ByKeyLength<>()))
                            .groupByKey(Grouped.with(S, S))
                            .count(Scenarios.kv("order-counts", L, false))
                            .toStream()
                            .to("order-counts-out", Produced.with(S, L).withStreamPartitioner(new ByKeyLength<>()));
                    return builder.build(props);
                })
                .input("orders", "string", "string")
                .output("routed", "string", "string")
                .output("order-counts-out", "string", "long")
                .store("order-counts", "timestamped-kv")
                .pipe("orders", "a", "o1", 10L)
                .pipe("orders", "bb", "o2", 11L, "h", "v")
                .pipe("orders", "drop-1", "o3", 12L)
                .pipe("orders", "default-x", "o4", 13L)
                .pipe("orders", "a", "o5", 14L)
                .pipe("orders", "default-x", "o6", 15L)
                .pipe("orders", "drop-1", "o7", 16L)
                .pipe("orders", "ccc", "o8", 17L);
    }
}
