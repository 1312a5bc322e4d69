package streamsonspark.reference;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * {@code Stores}' factories beyond the in-memory and timestamped RocksDB ones: {@code lruMap} (Kafka's
 * {@code MemoryNavigableLRUCache}: at most maxCacheSize entries, the least recently used one evicted; ranges in key
 * order), and a timestamped store (a DSL one, or {@code timestampedKeyValueStoreBuilder} /
 * {@code timestampedWindowStoreBuilder}) built over a RocksDB supplier without timestamps
 * ({@code persistentKeyValueStore}, {@code persistentWindowStore}): Kafka's adapters keep no timestamps, reads give -1
 * where the record cache does not answer. Over {@code lruMap} (not persistent) a timestamped store keeps them.
 *
 * <p>"processor": {@link StoreReadScenarios.Interpreter} runs writes and reads against such stores (every record has
 * the key "g": one task holds them at any partition count), then IQv2 queries on the adapted and lruMap-backed
 * stores (the key-value adapter answers with the timestamp -1, the window adapter with plain values). "dsl": counts
 * materialized over
 * {@code persistentKeyValueStore} (cached and not) and {@code lruMap} (room for every key), a table-table join whose
 * right table is over {@code persistentKeyValueStore} (the join's timestamp is the larger of the two sides', the
 * right one read back as -1), read through the driver, IQv1 and IQv2; Kafka's argument checks and texts.
 * "store-factories-lru": counts over an {@code lruMap} of two entries (a key evicted counts from 1 again; not per-key
 * comparable at 4 partitions: which keys share a task decides the evictions). Mirrored in
 * tests/conformance/test_kafka_reference.py (store_factories, store_factories_lru).
 */
final class StoreFactoryScenarios {
    private StoreFactoryScenarios() {}

    static final Serde<String> S = Serdes.String();
    static final Serde<Long> L = Serdes.Long();

    static List<Scenario> all() {
        final List<Scenario> all = new ArrayList<>();
        all.add(processor());
        all.add(dsl());
        all.add(lruCounts());
        return all;
    }

    static Scenario processor() {
        final Scenario s = new Scenario("store-factories", "processor",
                "Processor API: lruMap stores (sizes 3 and 0, and a timestamped one of size 2) and timestamped stores "
                        + "over RocksDB suppliers without timestamps (key-value, cached key-value, window) written and "
                        + "read by an interpreter processor; the driver reads them at the end",
                props -> {
                    final Topology topology = new Topology();
                    topology.addSource("ops-source", S.deserializer(), S.deserializer(), "ops");
                    topology.addProcessor("interpreter", StoreReadScenarios.Interpreter::new, "ops-source");
                    topology.addStateStore(Stores.keyValueStoreBuilder(Stores.lruMap("lru", 3), S, L), "interpreter");
                    topology.addStateStore(Stores.keyValueStoreBuilder(Stores.lruMap("lru-zero", 0), S, L),
                            "interpreter");
                    topology.addStateStore(Stores.timestampedKeyValueStoreBuilder(Stores.lruMap("lru-ts", 2), S, L),
                            "interpreter");
                    topology.addStateStore(Stores.timestampedKeyValueStoreBuilder(
                            Stores.persistentKeyValueStore("plain-ts-kv"), S, L), "interpreter");
                    topology.addStateStore(Stores.timestampedKeyValueStoreBuilder(
                            Stores.persistentKeyValueStore("plain-ts-kv-cached"), S, L).withCachingEnabled(),
                            "interpreter");
                    topology.addStateStore(Stores.timestampedWindowStoreBuilder(Stores.persistentWindowStore(
                            "plain-ts-win", Duration.ofMillis(50), Duration.ofMillis(10), false), S, L),
                            "interpreter");
                    topology.addSink("results-sink", "results", S.serializer(), S.serializer(), "interpreter");
                    return topology;
                })
                .input("ops", "string", "string")
                .output("results", "string", "string")
                .store("lru", "kv")
                .store("lru-zero", "kv")
                .store("lru-ts", "timestamped-kv")
                .store("plain-ts-kv", "timestamped-kv")
                .store("plain-ts-win", "window");
        long ts = 100;
        for (final String op : new String[] {"put a 1", "put b 2", "put c 3", "get a", "put d 4", "all",
            "put c 30", "put e 5", "get b", "get d", "range a z", "reverse_all", "prefix_scan c",
            "approximate_num_entries", "delete d", "put f 6", "put e ~", "put g 7", "all", "reverse_range ~ f"}) {
            s.pipe("ops", "g", "lru " + op, ts++);
        }
        s.pipe("ops", "g", "lru-zero put a 1 ; lru-zero get a ; lru-zero all ; lru-zero approximate_num_entries", ts++);
        for (final String op : new String[] {"put a 1", "put b 2", "get a", "put c 3", "all", "get b"}) {
            s.pipe("ops", "g", "lru-ts " + op, ts++);
        }
        for (final String op : new String[] {"put a 1", "put b 2", "put c 3", "get a", "all", "range b c",
            "reverse_all", "prefix_scan b", "delete a", "get a", "approximate_num_entries"}) {
            s.pipe("ops", "g", "plain-ts-kv " + op, ts++);
        }
        // the cache answers with the timestamps it holds (read in the record that wrote them)
        s.pipe("ops", "g", "plain-ts-kv-cached put a 1 ; plain-ts-kv-cached get a ; plain-ts-kv-cached all", ts++);
        for (final String op : new String[] {"put a 1 0", "put b 2 10", "put a 3 10", "fetch a 0", "fetch a 0 20",
            "fetch a b 0 20", "all", "backward_fetch_all 0 20"}) {
            s.pipe("ops", "g", "plain-ts-win " + op, ts++);
        }
        for (final String read : new String[] {"all", "get c", "get a"}) {
            s.read("lru", "kv", read);
        }
        s.read("lru-ts", "timestamped-kv", "all");
        s.read("plain-ts-kv", "timestamped-kv", "all");
        s.read("plain-ts-kv", "kv", "get b");
        s.read("plain-ts-win", "timestamped-window", "fetch a 0 20");
        s.read("plain-ts-win", "timestamped-window", "all");
        // IQv2 through the adapters: KeyValueToTimestampedKeyValueByteStoreAdapter.query gives values the timestamp
        // -1; WindowToTimestampedWindowByteStoreAdapter.query passes the plain bytes through, which the metered store
        // reads as plain values (StoreQueryUtils.deserializeValue: not timestamped, not the key-value adapter)
        for (final String query : ADAPTED_KV_QUERIES) {
            s.read("plain-ts-kv", "iqv2", query);
            s.read("lru-ts", "iqv2", query);
        }
        s.read("plain-ts-win", "iqv2", "WindowKeyQuery a 0 20");
        s.read("plain-ts-win", "iqv2", "WindowRangeQuery 0 20");
        return s;
    }

    /** IQv2 queries on a timestamped key-value store built over a supplier without timestamps. */
    static final String[] ADAPTED_KV_QUERIES = {"KeyQuery b", "KeyQuery zz", "TimestampedKeyQuery b",
        "RangeQuery ~ ~", "TimestampedRangeQuery ~ ~", "TimestampedRangeQuery ~ ~ desc"};

    static <V> Materialized<String, V, KeyValueStore<Bytes, byte[]>> over(final KeyValueBytesStoreSupplier supplier,
                                                                          final Serde<V> values) {
        return Materialized.<String, V>as(supplier).withKeySerde(S).withValueSerde(values);
    }

    static Scenario dsl() {
        final Scenario s = new Scenario("store-factories", "dsl",
                "counts over persistentKeyValueStore (cached and not) and lruMap, a table-table join whose right "
                        + "table is over persistentKeyValueStore: timestamps read back as -1 where the cache does not "
                        + "answer; Kafka's argument checks of lruMap and the timestamped factories",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KGroupedStream<String, String> grouped =
                            builder.stream("events", Consumed.with(S, S)).groupByKey(Grouped.with(S, S));
                    grouped.count(over(Stores.persistentKeyValueStore("counts-plain"), L))
                            .toStream().to("counts-plain-out", Produced.with(S, L));
                    grouped.count(over(Stores.persistentKeyValueStore("counts-plain-uncached"), L)
                                    .withCachingDisabled())
                            .toStream().to("counts-plain-uncached-out", Produced.with(S, L));
                    grouped.count(over(Stores.lruMap("counts-lru", 10), L).withCachingDisabled())
                            .toStream().to("counts-lru-out", Produced.with(S, L));
                    final KTable<String, String> left = builder.table("left", Consumed.with(S, S),
                            Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("left-store")
                                    .withKeySerde(S).withValueSerde(S).withCachingDisabled());
                    final KTable<String, String> right = builder.table("right", Consumed.with(S, S),
                            over(Stores.persistentKeyValueStore("right-plain"), S).withCachingDisabled());
                    left.join(right, (l, r) -> l + "+" + r).toStream().to("joined", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("events", "string", "string")
                .input("left", "string", "string")
                .input("right", "string", "string")
                .output("counts-plain-out", "string", "long")
                .output("counts-plain-uncached-out", "string", "long")
                .output("counts-lru-out", "string", "long")
                .output("joined", "string", "string")
                .store("counts-plain-uncached", "timestamped-kv")
                .store("counts-lru", "timestamped-kv")
                .store("right-plain", "timestamped-kv")
                .pipe("events", "a", "x", 10L)
                .pipe("events", "b", "x", 20L)
                .pipe("events", "a", "x", 30L)
                .pipe("right", "k", "r1", 50L)
                .pipe("left", "k", "l1", 40L)
                .pipe("right", "k", "r2", 60L)
                .pipe("left", "k", "l2", 45L)
                .pipe("right", "m", "r3", 70L)
                .pipe("left", "m", "l3", 65L)
                .error("lru-map-negative-size", () -> Stores.lruMap("lru", -1))
                .error("lru-map-null-name", () -> Stores.lruMap(null, 1))
                .error("persistent-timestamped-kv-null-name", () -> Stores.persistentTimestampedKeyValueStore(null))
                .error("persistent-kv-null-name", () -> Stores.persistentKeyValueStore(null))
                .error("in-memory-kv-null-name", () -> Stores.inMemoryKeyValueStore(null))
                .error("persistent-timestamped-window-retention-below-size",
                        () -> Stores.persistentTimestampedWindowStore("tw", Duration.ofMillis(5),
                                Duration.ofMillis(10), false))
                .error("persistent-timestamped-window-negative-retention",
                        () -> Stores.persistentTimestampedWindowStore("tw", Duration.ofMillis(-1),
                                Duration.ofMillis(10), false))
                .error("key-value-store-builder-null-supplier", () -> Stores.keyValueStoreBuilder(null, S, L));
        // (not "counts-plain": its record cache still answers the driver's reads, with the timestamps it holds; on
        // Spark a store is read back beneath the cache, from the committed state: docs/state-and-checkpoints.md)
        for (final String read : new String[] {"all", "get a"}) {
            s.read("counts-plain-uncached", "timestamped-kv", read);
            s.read("counts-plain-uncached", "kv", read);
            s.read("counts-lru", "timestamped-kv", read);
        }
        s.read("counts-plain-uncached", "iq-timestamped-kv", "all");
        s.read("counts-plain-uncached", "iq-kv", "get b");
        s.read("right-plain", "iq-timestamped-kv", "all");
        for (final String query : ADAPTED_KV_QUERIES) {
            s.read("counts-plain-uncached", "iqv2", query.replace(" b", " a"));
        }
        s.read("right-plain", "iqv2", "TimestampedKeyQuery k");
        return s;
    }

    static Scenario lruCounts() {
        return new Scenario("store-factories-lru", "dsl",
                "counts over an lruMap of two entries, caching disabled: the least recently used key is evicted and "
                        + "counts from 1 again",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.stream("events", Consumed.with(S, S)).groupByKey(Grouped.with(S, S))
                            .count(over(Stores.lruMap("counts-lru", 2), L).withCachingDisabled())
                            .toStream().to("counts-out", Produced.with(S, L));
                    return builder.build(props);
                })
                .input("events", "string", "string")
                .output("counts-out", "string", "long")
                .store("counts-lru", "timestamped-kv")
                .pipe("events", "a", "x", 1L)
                .pipe("events", "b", "x", 2L)
                .pipe("events", "a", "x", 3L)
                .pipe("events", "c", "x", 4L)
                .pipe("events", "b", "x", 5L)
                .pipe("events", "a", "x", 6L)
                .pipe("events", "c", "x", 7L);
    }
}
