package streamsonspark.reference;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.SlidingWindows;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.WindowedSerdes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.WindowStore;

/**
 * {@code Materialized.withRetention}, {@code withCachingDisabled/Enabled} and {@code withLoggingDisabled/Enabled}:
 * window and session stores keeping windows for the retention asked (RocksDB segments of max(retention / 2, 60 s),
 * so the times span minutes), next to one with the default retention (size + grace); the checks and texts of a
 * retention shorter than what the windows need, and of a negative one. Mirrored in
 * tests/conformance/test_kafka_reference.py (materialized_retention, materialized_flags).
 */
final class MaterializedScenarios {
    private MaterializedScenarios() {}

    static final Serde<String> S = Serdes.String();
    static final Serde<Long> L = Serdes.Long();
    static final Duration RETENTION = Duration.ofMillis(300_000);

    static List<Scenario> all() {
        final List<Scenario> all = new ArrayList<>();
        all.add(retention());
        all.add(flags());
        return all;
    }

    static Materialized<String, Long, WindowStore<Bytes, byte[]>> window(final String name) {
        return Materialized.<String, Long, WindowStore<Bytes, byte[]>>as(name).withKeySerde(S).withValueSerde(L)
                .withCachingDisabled();
    }

    static KGroupedStream<String, String> events(final StreamsBuilder builder) {
        return builder.stream("events", Consumed.with(S, S)).groupByKey(Grouped.with(S, S));
    }

    static Scenario retention() {
        return new Scenario("materialized-retention", "windows",
                "windowed counts (caching disabled) with withRetention(300 s) and one with the default retention: "
                        + "windows stay in the store for the retention; late records are dropped by grace alone",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KGroupedStream<String, String> grouped = events(builder);
                    final TimeWindows tumbling = TimeWindows.ofSizeWithNoGrace(Duration.ofMillis(10_000));
                    grouped.windowedBy(tumbling).count(window("tumbling-kept").withRetention(RETENTION))
                            .toStream().to("tumbling-kept-out",
                                    Produced.with(WindowedSerdes.timeWindowedSerdeFrom(String.class, 10_000), L));
                    grouped.windowedBy(tumbling).count(window("tumbling-default"))
                            .toStream().to("tumbling-default-out",
                                    Produced.with(WindowedSerdes.timeWindowedSerdeFrom(String.class, 10_000), L));
                    grouped.windowedBy(SlidingWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(10_000)))
                            .count(window("sliding-kept").withRetention(RETENTION))
                            .toStream().to("sliding-kept-out",
                                    Produced.with(WindowedSerdes.timeWindowedSerdeFrom(String.class, 10_000), L));
                    grouped.windowedBy(SessionWindows.ofInactivityGapWithNoGrace(Duration.ofMillis(5_000)))
                            .count(Materialized.<String, Long, SessionStore<Bytes, byte[]>>as("session-kept")
                                    .withKeySerde(S).withValueSerde(L).withCachingDisabled().withRetention(RETENTION))
                            .toStream().to("session-kept-out",
                                    Produced.with(WindowedSerdes.sessionWindowedSerdeFrom(String.class), L));
                    return builder.build(props);
                })
                .input("events", "string", "string")
                .output("tumbling-kept-out", "time-windowed:10000", "long")
                .output("tumbling-default-out", "time-windowed:10000", "long")
                .output("sliding-kept-out", "time-windowed:10000", "long")
                .output("session-kept-out", "session-windowed", "long")
                .store("tumbling-kept", "window")
                .store("tumbling-default", "window")
                .store("sliding-kept", "window")
                .store("session-kept", "session", "a", "b")
                .pipe("events", "a", "1", 1_000L, "h", "a1")
                .pipe("events", "b", "2", 3_000L)
                .pipe("events", "a", "3", 65_000L)
                .pipe("events", "a", "4", 130_000L, "h", "a4")
                .pipe("events", "b", "5", 132_000L)
                .pipe("events", "a", "6", 200_000L)
                .pipe("events", "b", "7", 5_000L)
                .pipe("events", "a", "8", 201_000L)
                .error("retention-shorter-than-size-plus-grace", () -> events(new StreamsBuilder())
                        .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(2)))
                        .count(Materialized.<String, Long, WindowStore<Bytes, byte[]>>as("short")
                                .withRetention(Duration.ofMillis(11))))
                .error("retention-shorter-unnamed-store", () -> events(new StreamsBuilder())
                        .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(2)))
                        .count(Materialized.<String, Long, WindowStore<Bytes, byte[]>>with(S, L)
                                .withRetention(Duration.ofMillis(11))))
                .error("sliding-retention-too-short", () -> events(new StreamsBuilder())
                        .windowedBy(SlidingWindows.ofTimeDifferenceAndGrace(Duration.ofMillis(10),
                                Duration.ofMillis(5)))
                        .count(Materialized.<String, Long, WindowStore<Bytes, byte[]>>as("short")
                                .withRetention(Duration.ofMillis(24))))
                .error("session-retention-too-short", () -> events(new StreamsBuilder())
                        .windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofMillis(5),
                                Duration.ofMillis(5)))
                        .count(Materialized.<String, Long, SessionStore<Bytes, byte[]>>as("short")
                                .withRetention(Duration.ofMillis(9))))
                .error("retention-negative", () -> Materialized.<String, Long, WindowStore<Bytes, byte[]>>as("x")
                        .withRetention(Duration.ofMillis(-1)));
    }

    static Scenario flags() {
        return new Scenario("materialized-flags", "kv",
                "counts of the words of each value, per key: withCachingDisabled (every update), "
                        + "withCachingDisabled().withCachingEnabled() (the cache again), withLoggingDisabled, "
                        + "withLoggingEnabled(no topic configs), and withRetention on a key-value store "
                        + "(Kafka ignores it there)",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KGroupedStream<String, String> grouped = builder.stream("events", Consumed.with(S, S))
                            .flatMapValues(v -> Arrays.asList(v.split(" ")))
                            .groupByKey(Grouped.with(S, S));
                    grouped.count(Scenarios.kv("uncached", L, false))
                            .toStream().to("uncached-out", Produced.with(S, L));
                    grouped.count(Scenarios.kv("recached", L, false).withCachingEnabled())
                            .toStream().to("recached-out", Produced.with(S, L));
                    grouped.count(Scenarios.kv("unlogged", L, false).withLoggingDisabled())
                            .toStream().to("unlogged-out", Produced.with(S, L));
                    grouped.count(Scenarios.kv("logged", L, false).withLoggingEnabled(Map.of()))
                            .toStream().to("logged-out", Produced.with(S, L));
                    grouped.count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("kv-retention")
                                    .withKeySerde(S).withValueSerde(L).withRetention(Duration.ofMillis(1)))
                            .toStream().to("kv-retention-out", Produced.with(S, L));
                    return builder.build(props);
                })
                .input("events", "string", "string")
                .output("uncached-out", "string", "long")
                .output("recached-out", "string", "long")
                .output("unlogged-out", "string", "long")
                .output("logged-out", "string", "long")
                .output("kv-retention-out", "string", "long")
                .store("uncached", "timestamped-kv")
                .store("recached", "timestamped-kv")
                .store("kv-retention", "timestamped-kv")
                .pipe("events", "a", "x y z", 10L, "h", "a1")
                .pipe("events", "b", "x", 20L)
                .pipe("events", "a", "x y", 5L)
                .pipe("events", "b", "y z", 30L, "h", "b2");
    }
}
