package streamsonspark.reference;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.TimestampedKeyValueStoreWithHeaders;
import org.apache.kafka.streams.state.ValueTimestampHeaders;

/**
 * KIP-1271's headers-aware key-value store from the Processor API
 * ({@code Stores.timestampedKeyValueStoreWithHeadersBuilder} over an in-memory supplier, or a RocksDB one with
 * caching): a processor keeps each record's value with its timestamp and headers (a null value deletes), and forwards
 * the value with what the store held before ({@link #describe}); the driver then reads the store through
 * {@code getTimestampedKeyValueStoreWithHeaders} (entries with headers), {@code getTimestampedKeyValueStore} and
 * {@code getKeyValueStore} (the same store without headers, without timestamps). Mirrored in
 * tests/conformance/test_kafka_reference.py (headers_store).
 */
final class HeadersStoreScenarios {
    private HeadersStoreScenarios() {}

    static List<Scenario> all() {
        final List<Scenario> all = new ArrayList<>();
        for (final String variant : new String[] {"in-memory", "persistent-cached"}) {
            all.add(headersStore(variant));
        }
        return all;
    }

    /** "value@timestamp[k=v,...]" ("~" for a null header value), "none" for nothing stored. */
    static String describe(final ValueTimestampHeaders<String> stored) {
        if (stored == null) {
            return "none";
        }
        final StringBuilder out = new StringBuilder(stored.value() + "@" + stored.timestamp() + "[");
        String sep = "";
        for (final Header h : stored.headers()) {
            out.append(sep).append(h.key()).append('=')
                    .append(h.value() == null ? "~" : new String(h.value(), StandardCharsets.UTF_8));
            sep = ",";
        }
        return out.append(']').toString();
    }

    /** Keeps each record (value, timestamp, headers) in "kept"; forwards "value|what was kept before". */
    static final class Keep implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> context;
        private TimestampedKeyValueStoreWithHeaders<String, String> kept;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
            kept = context.getStateStore("kept");
        }

        @Override
        public void process(final Record<String, String> record) {
            final ValueTimestampHeaders<String> old = kept.get(record.key());
            if (record.value() == null) {
                kept.delete(record.key());
            } else {
                final Headers headers = record.headers();
                kept.put(record.key(), ValueTimestampHeaders.make(record.value(), record.timestamp(), headers));
            }
            context.forward(record.withValue(record.value() + "|" + describe(old)));
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
                    final StoreBuilder<TimestampedKeyValueStoreWithHeaders<String, String>> store =
                            Stores.timestampedKeyValueStoreWithHeadersBuilder(supplier, Serdes.String(),
                                    Serdes.String());
                    if (variant.endsWith("cached")) {
                        store.withCachingEnabled();
                    }
                    final Topology t = new Topology();
                    t.addSource("events-source", Serdes.String().deserializer(), Serdes.String().deserializer(),
                            "events");
                    t.addProcessor("keep", Keep::new, "events-source");
                    t.addStateStore(store, "keep");
                    t.addSink("kept-sink", "kept-out", Serdes.String().serializer(), Serdes.String().serializer(),
                            "keep");
                    return t;
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
        return s;
    }
}
