package streamsonspark.reference;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.internals.SessionWindow;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.ProcessorSupplier;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.AggregationWithHeaders;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.SessionBytesStoreSupplier;
import org.apache.kafka.streams.state.SessionStoreWithHeaders;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.TimestampedKeyValueStoreWithHeaders;
import org.apache.kafka.streams.state.TimestampedWindowStoreWithHeaders;
import org.apache.kafka.streams.state.ValueTimestampHeaders;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;

/**
 * KIP-1271's headers-aware key-value store from the Processor API
 * ({@code Stores.timestampedKeyValueStoreWithHeadersBuilder} over an in-memory supplier, or a RocksDB one with
 * caching): a processor keeps each record's value with its timestamp and headers (a null value deletes), and forwards
 * the value with what the store held before ({@link #describe}); the driver then reads the store through
 * {@code getTimestampedKeyValueStoreWithHeaders} (entries with headers), {@code getTimestampedKeyValueStore} and
 * {@code getKeyValueStore} (the same store without headers, without timestamps). The window and session variants
 * ({@code Stores.timestampedWindowStoreWithHeadersBuilder}, {@code Stores.sessionStoreWithHeadersBuilder}) keep each
 * record in the window (size 10) or the session ([start of its 10 ms, that + 5]) of its timestamp and are read
 * through {@code getTimestampedWindowStoreWithHeaders}/{@code getTimestampedWindowStore}/{@code getWindowStore} and
 * {@code getSessionStoreWithHeaders}/{@code getSessionStore}; and through IQv2 queries (Kafka 4.3.1's RocksDB
 * headers-aware stores answer none). Mirrored in tests/conformance/test_kafka_reference.py
 * (headers_store, headers_window_store, headers_session_store).
 */
final class HeadersStoreScenarios {
    private HeadersStoreScenarios() {}

    static List<Scenario> all() {
        final List<Scenario> all = new ArrayList<>();
        for (final String variant : new String[] {"in-memory", "persistent-cached"}) {
            all.add(headersStore(variant));
            all.add(headersWindowStore(variant));
            all.add(headersSessionStore(variant));
        }
        return all;
    }

    /** "value@timestamp[k=v,...]" ("~" for a null header value), "none" for nothing stored. */
    static String describe(final ValueTimestampHeaders<String> stored) {
        return stored == null ? "none" : stored.value() + "@" + stored.timestamp() + describe(stored.headers());
    }

    /** "aggregation[k=v,...]", "none" for nothing stored. */
    static String describe(final AggregationWithHeaders<String> stored) {
        return stored == null ? "none" : stored.aggregation() + describe(stored.headers());
    }

    /** "[k=v,...]" ("~" for a null header value). */
    static String describe(final Headers headers) {
        final StringBuilder out = new StringBuilder("[");
        String sep = "";
        for (final Header h : headers) {
            out.append(sep).append(h.key()).append('=')
                    .append(h.value() == null ? "~" : new String(h.value(), StandardCharsets.UTF_8));
            sep = ",";
        }
        return out.append(']').toString();
    }

    /** The window (size 10) or session start of a record: its timestamp rounded down to 10 ms. */
    static long start(final long timestamp) {
        return timestamp / 10 * 10;
    }

    /** Keeps each record in the window of its timestamp in "kept" (a null value deletes); forwards
     * "value|what that window held before". */
    static final class KeepWindowed extends Keeping<TimestampedWindowStoreWithHeaders<String, String>> {
        @Override
        public void process(final Record<String, String> record) {
            final long start = start(record.timestamp());
            final ValueTimestampHeaders<String> old = kept.fetch(record.key(), start);
            kept.put(record.key(), ValueTimestampHeaders.make(record.value(), record.timestamp(), record.headers()),
                    start);
            forward(record, describe(old));
        }
    }

    /** Keeps each record as the session [start, start + 5] of its timestamp in "kept" (a null value removes it);
     * forwards "value|what that session held before". */
    static final class KeepSession extends Keeping<SessionStoreWithHeaders<String, String>> {
        @Override
        public void process(final Record<String, String> record) {
            final long start = start(record.timestamp());
            final Windowed<String> session = new Windowed<>(record.key(), new SessionWindow(start, start + 5));
            final AggregationWithHeaders<String> old = kept.fetchSession(record.key(), start, start + 5);
            if (record.value() == null) {
                kept.remove(session);
            } else {
                kept.put(session, AggregationWithHeaders.make(record.value(), record.headers()));
            }
            forward(record, describe(old));
        }
    }

    /** The steps of the window and session variants: keys a..c, windows of 10 ms (see {@link #start}). */
    static Scenario windowSteps(final Scenario s) {
        return s.input("events", "string", "string")
                .output("kept-out", "string", "string")
                .pipe("events", "a", "1", 3, "trace", "t1", "schema", "v1")
                .pipe("events", "b", "10", 12)
                .pipe("events", "a", "2", 7, "trace", "t2", "empty", null)
                .pipe("events", "c", "x", 25, "dup", "one", "dup", "two")
                .pipe("events", "a", "3", 14, "gone", "soon")
                .pipe("events", "a", null, 16, "gone", "yes")
                .pipe("events", "d", "ü", 31, "ünï", "çödé")
                .pipe("events", "b", "20", 5);
    }

    static Topology keeping(final StoreBuilder<?> store, final boolean cached,
                            final ProcessorSupplier<String, String, String, String> keep) {
        if (cached) {
            store.withCachingEnabled();
        }
        final Topology t = new Topology();
        t.addSource("events-source", Serdes.String().deserializer(), Serdes.String().deserializer(), "events");
        t.addProcessor("keep", keep, "events-source");
        t.addStateStore(store, "keep");
        t.addSink("kept-sink", "kept-out", Serdes.String().serializer(), Serdes.String().serializer(), "keep");
        return t;
    }

    static Scenario headersWindowStore(final String variant) {
        final Scenario s = windowSteps(new Scenario("headers-window-store", variant,
                "Processor API: a headers-aware window store (KIP-1271) keeps value, timestamp and headers per window "
                        + "(" + variant + "); read back through the driver with and without headers",
                props -> {
                    final WindowBytesStoreSupplier supplier = variant.startsWith("persistent")
                            ? Stores.persistentTimestampedWindowStoreWithHeaders("kept", Duration.ofMillis(1000),
                                    Duration.ofMillis(10), false)
                            : Stores.inMemoryWindowStore("kept", Duration.ofMillis(1000), Duration.ofMillis(10),
                                    false);
                    return keeping(Stores.timestampedWindowStoreWithHeadersBuilder(supplier, Serdes.String(),
                            Serdes.String()), variant.endsWith("cached"), KeepWindowed::new);
                }))
                .store("kept", "window");
        for (final String accessor : new String[] {"timestamped-window-headers", "timestamped-window", "window"}) {
            for (final String call : new String[] {"fetch a 0", "fetch a 10", "fetch zz 0", "fetch a 0 100",
                "backward_fetch a 0 100", "fetch a c 0 20", "backward_fetch ~ ~ 0 100", "fetch_all 10 30",
                "all", "backward_all"}) {
                s.read("kept", accessor, call);
            }
        }
        s.read("kept", "iqv2", "WindowKeyQuery a 0 100");
        s.read("kept", "iqv2", "WindowRangeQuery 0 100");
        return s;
    }

    static Scenario headersSessionStore(final String variant) {
        final Scenario s = windowSteps(new Scenario("headers-session-store", variant,
                "Processor API: a headers-aware session store (KIP-1271) keeps each session's aggregation and headers "
                        + "(" + variant + "); read back through the driver with and without headers",
                props -> {
                    final SessionBytesStoreSupplier supplier = variant.startsWith("persistent")
                            ? Stores.persistentSessionStoreWithHeaders("kept", Duration.ofMillis(1000))
                            : Stores.inMemorySessionStore("kept", Duration.ofMillis(1000));
                    return keeping(Stores.sessionStoreWithHeadersBuilder(supplier, Serdes.String(), Serdes.String()),
                            variant.endsWith("cached"), KeepSession::new);
                }))
                .store("kept", "session", "a", "b", "c", "d");
        for (final String accessor : new String[] {"session-headers", "session"}) {
            for (final String call : new String[] {"fetch_session a 0 5", "fetch_session a 10 15",
                "fetch_session a 0 6", "fetch a", "backward_fetch a", "fetch a c", "fetch ~ ~",
                "find_sessions a 0 100", "backward_find_sessions ~ ~ 0 100", "find_sessions a c 5 20"}) {
                s.read("kept", accessor, call);
            }
        }
        s.read("kept", "iqv2", "WindowRangeQuery a");
        return s;
    }

    /** A processor keeping records in the store "kept" (of type S) and forwarding "value|what it held before". */
    abstract static class Keeping<S> implements Processor<String, String, String, String> {
        ProcessorContext<String, String> context;
        S kept;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
            kept = context.getStateStore("kept");
        }

        void forward(final Record<String, String> record, final String old) {
            context.forward(record.withValue(record.value() + "|" + old));
        }
    }

    /** Keeps each record (value, timestamp, headers) in "kept"; forwards "value|what was kept before". */
    static final class Keep extends Keeping<TimestampedKeyValueStoreWithHeaders<String, String>> {
        @Override
        public void process(final Record<String, String> record) {
            final ValueTimestampHeaders<String> old = kept.get(record.key());
            if (record.value() == null) {
                kept.delete(record.key());
            } else {
                final Headers headers = record.headers();
                kept.put(record.key(), ValueTimestampHeaders.make(record.value(), record.timestamp(), headers));
            }
            forward(record, describe(old));
        }
    }

    static Scenario headersStore(final String variant) {
        final Scenario s = new Scenario("headers-store", variant,
                "Processor API: a headers-aware key-value store (KIP-1271) keeps value, timestamp and headers "
                        + "(" + variant + "); read back through the driver with and without headers",
                props -> {
                    final KeyValueBytesStoreSupplier supplier = variant.startsWith("persistent")
                            ? Stores.persistentTimestampedKeyValueStoreWithHeaders("kept")
                            : Stores.inMemoryKeyValueStore("kept");
                    return keeping(Stores.timestampedKeyValueStoreWithHeadersBuilder(supplier, Serdes.String(),
                            Serdes.String()), variant.endsWith("cached"), Keep::new);
                })
                .input("events", "string", "string")
                .output("kept-out", "string", "string")
                .pipe("events", "a", "1", 100, "trace", "t1", "schema", "v1")
                .pipe("events", "b", "10", 50)
                .pipe("events", "a", "2", 90, "trace", "t2", "empty", null)
                .pipe("events", "c", "x", 70, "dup", "one", "dup", "two")
                .pipe("events", "b", null, 120, "gone", "yes")
                .pipe("events", "d", "ü", 80, "ünï", "çödé")
                .pipe("events", "b", "20", 60)
                .store("kept", "timestamped-kv-headers");
        for (final String accessor : new String[] {"timestamped-kv-headers", "timestamped-kv", "kv"}) {
            for (final String call : new String[] {"get a", "get b", "get zz", "range b c", "all", "reverse_all"}) {
                s.read("kept", accessor, call);
            }
            if (!variant.startsWith("persistent")) {   // RocksDB's is an estimate (its entries minus twice its deletes)
                s.read("kept", accessor, "approximate_num_entries");
            }
        }
        for (final String query : new String[] {"KeyQuery a", "TimestampedKeyQuery a", "RangeQuery ~ ~",
            "TimestampedRangeQuery ~ ~"}) {
            s.read("kept", "iqv2", query);
        }
        return s;
    }
}
