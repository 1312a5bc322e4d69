package streamsonspark.reference;

import static streamsonspark.reference.Scenarios.L;
import static streamsonspark.reference.Scenarios.S;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.SlidingWindows;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.WindowedSerdes;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.AggregationWithHeaders;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.ReadOnlySessionStore;
import org.apache.kafka.streams.state.ReadOnlyWindowStore;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.SessionStoreWithHeaders;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.TimestampedKeyValueStore;
import org.apache.kafka.streams.state.TimestampedKeyValueStoreWithHeaders;
import org.apache.kafka.streams.state.TimestampedWindowStore;
import org.apache.kafka.streams.state.TimestampedWindowStoreWithHeaders;
import org.apache.kafka.streams.state.ValueAndTimestamp;
import org.apache.kafka.streams.state.ValueTimestampHeaders;
import org.apache.kafka.streams.state.WindowStore;

/**
 * KIP-1271's headers-aware suppliers given to the DSL ({@code Materialized.as(supplier)}), the DSL's headers-aware
 * stores read through the driver and interactive queries, and a Processor API processor connected to them.
 *
 * <p>{@link #kvSupplied} and {@link #windowedSupplied}, variant "headers-supplier": in the default
 * {@code dsl.store.format}, every key-value store of {@link DslHeadersScenarios#kvTopology} and a tumbling, a sliding
 * and a session aggregation materialized over Kafka's headers-aware RocksDB suppliers: Kafka 4.3.1's materializers
 * ({@code KeyValueStoreMaterializer}, {@code WindowStoreMaterializer}, {@code SlidingWindowStoreMaterializer},
 * {@code SessionStoreMaterializer}) build headers-aware stores over them. Variant "plain-supplier": under
 * {@code dsl.store.format=HEADERS}, the same over in-memory suppliers (without headers): the stores
 * stay timestamped (and session) stores without headers. Both read through every driver accessor, matching or not (a
 * mismatched one answers null; {@code getStateStore} refuses a built-in store), through IQv1 (the store types with
 * and without headers; one that does not accept the store) and IQv2.
 *
 * <p>{@link #processorReads}: a processor connected by name to the DSL's count, windowed count and session count
 * stores reads them after each record (variant "headers": under {@code dsl.store.format=HEADERS}; "default": in the
 * default format) and forwards what it sees: the store's interface and the values as read. Mirrored in
 * tests/conformance/test_kafka_reference.py (dsl_headers_supplier_kv, dsl_headers_supplier_windowed,
 * dsl_headers_processor).
 */
final class DslHeadersSupplierScenarios {
    private DslHeadersSupplierScenarios() {}

    static final Duration RETENTION = Duration.ofMillis(1000);

    static List<Scenario> all() {
        final List<Scenario> all = new ArrayList<>();
        for (final boolean headers : new boolean[] {true, false}) {
            all.add(kvSupplied(headers));
            all.add(windowedSupplied(headers));
        }
        all.add(processorReads(true));
        all.add(processorReads(false));
        return all;
    }

    /** A key-value store's supplier: headers-aware, or an in-memory one. (Not a RocksDB one without timestamps:
     * Kafka's timestamped store over it keeps no timestamps, -1 where the record cache does not answer, a difference
     * of its own.) */
    static org.apache.kafka.streams.state.KeyValueBytesStoreSupplier kvSupplier(final String name,
                                                                              final boolean headers) {
        if (headers) {
            return Stores.persistentTimestampedKeyValueStoreWithHeaders(name);
        }
        return Stores.inMemoryKeyValueStore(name);
    }

    static Scenario kvSupplied(final boolean headers) {
        final String variant = headers ? "headers-supplier" : "plain-supplier";
        final Scenario s = DslHeadersScenarios.kvSteps(new Scenario("dsl-headers-supplier-kv", variant,
                headers ? "the DSL's key-value stores materialized over headers-aware suppliers in the default format: "
                        + "headers-aware stores"
                        : "dsl.store.format=HEADERS, the DSL's key-value stores over suppliers without headers: "
                        + "timestamped stores without headers",
                props -> DslHeadersScenarios.kvTopology(props, new DslHeadersScenarios.KvStores() {
                    @Override
                    public <V> Materialized<String, V, KeyValueStore<Bytes, byte[]>> of(final String name,
                                                                                        final Serde<V> values) {
                        return Materialized.<String, V>as(kvSupplier(name, headers)).withKeySerde(S)
                                .withValueSerde(values);
                    }
                })));
        if (!headers) {
            s.config("dsl.store.format", "HEADERS");
        }
        final String kind = headers ? "timestamped-kv-headers" : "timestamped-kv";
        for (final String store : DslHeadersScenarios.KV_STORES) {
            s.store(store, kind);
        }
        s.store("global-store", kind);
        for (final String store : new String[] {"counts", "prices-store", "global-store"}) {
            for (final String accessor : new String[] {"timestamped-kv-headers", "timestamped-kv", "kv", "window",
                "session", "versioned"}) {
                s.read(store, accessor, "all");
            }
            s.read(store, "state", "-");
        }
        s.read("counts", "timestamped-kv-headers", "get a");
        s.read("counts", "kv", "get a");
        for (final String accessor : new String[] {"iq-kv", "iq-timestamped-kv", "iq-timestamped-kv-headers"}) {
            s.read("counts", accessor, "all");
            s.read("prices-store", accessor, "get p");
        }
        s.read("counts", "iq-window", "all");   // a type that does not accept the store
        for (final String query : new String[] {"KeyQuery a", "TimestampedKeyQuery a", "RangeQuery ~ ~",
            "TimestampedRangeQuery ~ ~"}) {
            s.read("counts", "iqv2", query);
        }
        return s;
    }

    /** A window store's supplier: headers-aware, or an in-memory one (see {@link #kvSupplier}). */
    static org.apache.kafka.streams.state.WindowBytesStoreSupplier windowSupplier(final String name,
                                                                                final boolean headers) {
        if (headers) {
            return Stores.persistentTimestampedWindowStoreWithHeaders(name, RETENTION, Duration.ofMillis(10), false);
        }
        return Stores.inMemoryWindowStore(name, RETENTION, Duration.ofMillis(10), false);
    }

    static Scenario windowedSupplied(final boolean headers) {
        final String variant = headers ? "headers-supplier" : "plain-supplier";
        final Scenario s = new Scenario("dsl-headers-supplier-windowed", variant,
                headers ? "tumbling, sliding and session counts materialized over headers-aware suppliers in the "
                        + "default format: headers-aware window and session stores"
                        : "dsl.store.format=HEADERS, tumbling, sliding and session counts over suppliers without "
                        + "headers: timestamped window and session stores without headers",
                props -> {
                    final StreamsBuilder b = new StreamsBuilder();
                    final KGroupedStream<String, String> byKey = b.stream("events", Consumed.with(S, S))
                            .groupByKey(Grouped.with(S, S));
                    final Serde<Windowed<String>> timeWindowed = WindowedSerdes.timeWindowedSerdeFrom(String.class, 10);
                    byKey.windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(5)))
                            .count(Materialized.<String, Long>as(windowSupplier("tumbling-store", headers))
                                    .withKeySerde(S).withValueSerde(L))
                            .toStream().to("tumbling-out", Produced.with(timeWindowed, L));
                    byKey.windowedBy(SlidingWindows.ofTimeDifferenceAndGrace(Duration.ofMillis(10),
                                    Duration.ofMillis(5)))
                            .count(Materialized.<String, Long>as(windowSupplier("sliding-store", headers))
                                    .withKeySerde(S).withValueSerde(L))
                            .toStream().to("sliding-out", Produced.with(timeWindowed, L));
                    byKey.windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofMillis(5), Duration.ofMillis(5)))
                            .count(Materialized.<String, Long>as(headers
                                    ? Stores.persistentSessionStoreWithHeaders("session-store", RETENTION)
                                    : Stores.inMemorySessionStore("session-store", RETENTION))
                                    .withKeySerde(S).withValueSerde(L))
                            .toStream().to("session-out",
                                    Produced.with(WindowedSerdes.sessionWindowedSerdeFrom(String.class), L));
                    return b.build(props);
                })
                .input("events", "string", "string")
                .output("tumbling-out", "time-windowed:10", "long")
                .output("sliding-out", "time-windowed:10", "long")
                .output("session-out", "session-windowed", "long")
                .store("tumbling-store", "window")
                .store("sliding-store", "window")
                .store("session-store", "session", "a", "b");
        Scenarios.windowedSteps(s);
        if (!headers) {
            s.config("dsl.store.format", "headers");
        }
        for (final String store : new String[] {"tumbling-store", "sliding-store"}) {
            for (final String accessor : new String[] {"timestamped-window-headers", "timestamped-window", "window"}) {
                s.read(store, accessor, "all");
                s.read(store, accessor, "fetch a 0 100");
            }
            for (final String accessor : new String[] {"kv", "timestamped-kv-headers", "session-headers"}) {
                s.read(store, accessor, "all");
            }
            s.read(store, "state", "-");
        }
        for (final String accessor : new String[] {"session-headers", "session"}) {
            s.read("session-store", accessor, "fetch a");
            s.read("session-store", accessor, "fetch b");
        }
        for (final String accessor : new String[] {"kv", "timestamped-window-headers"}) {
            s.read("session-store", accessor, "all");
        }
        s.read("session-store", "state", "-");
        for (final String accessor : new String[] {"iq-window", "iq-timestamped-window",
            "iq-timestamped-window-headers"}) {
            s.read("tumbling-store", accessor, "fetch a 0 100");
        }
        for (final String accessor : new String[] {"iq-session", "iq-session-headers"}) {
            s.read("session-store", accessor, "fetch a");
        }
        s.read("tumbling-store", "iq-kv", "all");   // types that do not accept the store
        s.read("session-store", "iq-window", "all");
        s.read("tumbling-store", "iqv2", "WindowKeyQuery a 0 100");
        s.read("tumbling-store", "iqv2", "WindowRangeQuery 0 100");
        s.read("session-store", "iqv2", "WindowRangeQuery a");
        return s;
    }

    /** "value@timestamp[headers]" of what a store answers, as the processor sees it: a {@code ValueTimestampHeaders},
     * a {@code ValueAndTimestamp} ("value@timestamp"), an {@code AggregationWithHeaders} ("aggregation[headers]"),
     * a plain value, "none" for null. */
    static String describe(final Object stored) {
        if (stored == null) {
            return "none";
        }
        if (stored instanceof ValueTimestampHeaders) {
            final ValueTimestampHeaders<?> v = (ValueTimestampHeaders<?>) stored;
            return v.value() + "@" + v.timestamp() + HeadersStoreScenarios.describe(v.headers());
        }
        if (stored instanceof AggregationWithHeaders) {
            final AggregationWithHeaders<?> a = (AggregationWithHeaders<?>) stored;
            return a.aggregation() + HeadersStoreScenarios.describe(a.headers());
        }
        if (stored instanceof ValueAndTimestamp) {
            final ValueAndTimestamp<?> v = (ValueAndTimestamp<?>) stored;
            return v.value() + "@" + v.timestamp();
        }
        return String.valueOf(stored);
    }

    /** The interfaces of a store a processor gets, as the Python test names them. */
    static String kind(final StateStore store) {
        if (store instanceof TimestampedKeyValueStoreWithHeaders) {
            return "kv-headers";
        }
        if (store instanceof TimestampedKeyValueStore) {
            return "timestamped-kv";
        }
        if (store instanceof TimestampedWindowStoreWithHeaders) {
            return "window-headers";
        }
        if (store instanceof TimestampedWindowStore) {
            return "timestamped-window";
        }
        if (store instanceof SessionStoreWithHeaders) {
            return "session-headers";
        }
        if (store instanceof SessionStore) {
            return "session";
        }
        return "other";
    }

    /** Reads the DSL's stores "counts", "windows" (size 10) and "sessions" for each record's key; forwards
     * "kinds | count | the window of the record's timestamp | the key's sessions". */
    static final class Reader implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> context;
        private StateStore counts;
        private StateStore windows;
        private StateStore sessions;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
            counts = context.getStateStore("counts");
            windows = context.getStateStore("windows");
            sessions = context.getStateStore("sessions");
        }

        @Override
        @SuppressWarnings("unchecked")
        public void process(final Record<String, String> record) {
            final Object count = ((ReadOnlyKeyValueStore<String, Object>) counts).get(record.key());
            final Object window = ((ReadOnlyWindowStore<String, Object>) windows).fetch(record.key(),
                    record.timestamp() / 10 * 10);
            final StringBuilder found = new StringBuilder();
            try (KeyValueIterator<Windowed<String>, Object> it =
                         ((ReadOnlySessionStore<String, Object>) sessions).fetch(record.key())) {
                it.forEachRemaining(kv -> found.append('[').append(kv.key.window().start()).append(',')
                        .append(kv.key.window().end()).append("]=").append(describe(kv.value)).append(' '));
            }
            context.forward(record.withValue(kind(counts) + "," + kind(windows) + "," + kind(sessions) + " | "
                    + describe(count) + " | " + describe(window) + " | " + found.toString().trim()));
        }
    }

    static Scenario processorReads(final boolean headers) {
        final Scenario s = new Scenario("dsl-headers-processor", headers ? "headers" : "default",
                "a processor connected by name to the DSL's count, windowed count and session count stores ("
                        + (headers ? "dsl.store.format=HEADERS" : "default format") + ") reads them after each record",
                props -> {
                    final StreamsBuilder b = new StreamsBuilder();
                    final KStream<String, String> events = b.stream("events", Consumed.with(S, S));
                    final KGroupedStream<String, String> byKey = events.groupByKey(Grouped.with(S, S));
                    byKey.count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("counts")
                            .withKeySerde(S).withValueSerde(L));
                    byKey.windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(5)))
                            .count(Materialized.<String, Long, WindowStore<Bytes, byte[]>>as("windows")
                                    .withKeySerde(S).withValueSerde(L));
                    byKey.windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofMillis(5), Duration.ofMillis(5)))
                            .count(Materialized.<String, Long, SessionStore<Bytes, byte[]>>as("sessions")
                                    .withKeySerde(S).withValueSerde(L));
                    events.process(Reader::new, "counts", "windows", "sessions").to("read-out",
                            Produced.with(S, S));
                    return b.build(props);
                })
                .input("events", "string", "string")
                .output("read-out", "string", "string")
                .pipe("events", "a", "x", 1L, "h", "a1")
                .pipe("events", "a", "x", 4L)
                .pipe("events", "b", "x", 6L, "h", "b6")
                .pipe("events", "a", "x", 12L, "h", "a12")
                .pipe("events", "b", "x", 30L);
        if (headers) {
            s.config("dsl.store.format", "HEADERS");
        }
        return s;
    }
}
