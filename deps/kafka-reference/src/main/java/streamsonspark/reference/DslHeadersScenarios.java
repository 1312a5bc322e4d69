package streamsonspark.reference;

import static streamsonspark.reference.Scenarios.L;
import static streamsonspark.reference.Scenarios.S;
import static streamsonspark.reference.Scenarios.kv;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.GlobalKTable;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * {@code dsl.store.format=HEADERS} (Kafka 4.3): the DSL's key-value stores (count, reduce and aggregate of a grouped
 * stream, a table source, filter / mapValues / transformValues materialized, a table-table join, the count of a
 * grouped table, a global table) become headers-aware stores keeping empty headers, whatever the records' headers; in
 * memory without caching ({@code default.dsl.store=in_memory}) and in RocksDB with caching; read through the driver
 * with and without headers. And {@link #inHeadersFormat} runs other scenarios (a foreign-key join, tumbling, hopping,
 * sliding and session aggregations with and without the cache, suppression, emitting on window close) in that format:
 * their windowed and session stores become headers-aware too (empty headers), their outputs stay but for a cached
 * session aggregation's headers; the stream-stream joins' windows (stream-stream-join in that format) keep each
 * record's headers. Mirrored in tests/conformance/test_kafka_reference.py (dsl_headers_kv, and BUILDERS'
 * dsl-headers-* entries).
 */
final class DslHeadersScenarios {
    private DslHeadersScenarios() {}

    static final String[] KV_STORES = {"counts", "reduced", "lengths", "prices-store", "cheap", "upper", "marked",
        "joined", "initials"};

    static List<Scenario> all() {
        final List<Scenario> all = new ArrayList<>();
        all.add(kvStores("in-memory"));
        all.add(kvStores("cached"));
        all.add(inHeadersFormat("dsl-headers-fk-join", ForeignKeyScenarios.fkJoin("inner"))
                .store("order-customer", "timestamped-kv-headers")
                .read("order-customer", "timestamped-kv-headers", "all")
                .read("order-customer", "timestamped-kv", "all")
                .read("order-customer", "kv", "all"));
        for (final boolean caching : new boolean[] {true, false}) {
            // read through the accessors uncached only: on Spark a cached store is read beneath its cache
            // (test_kafka_reference's READ_THROUGH_CACHE), the uncached golden's contents
            final String variant = caching ? "cached" : "uncached";
            final Scenario tumbling = inHeadersFormat("dsl-headers-tumbling", Scenarios.tumbling(variant, caching));
            final Scenario hopping = inHeadersFormat("dsl-headers-hopping", Scenarios.hopping(variant, caching));
            final Scenario sliding = inHeadersFormat("dsl-headers-sliding", Scenarios.sliding(variant, caching));
            final Scenario session = inHeadersFormat("dsl-headers-session", Scenarios.session(variant, caching));
            all.add(caching ? tumbling : windowReads(tumbling, "tumbling-store"));
            all.add(caching ? hopping : windowReads(hopping, "hopping-store"));
            all.add(caching ? sliding : windowReads(sliding, "sliding-store"));
            all.add(caching ? session : sessionReads(session, "session-store"));
        }
        all.add(inHeadersFormat("dsl-headers-suppress-window-close", Scenarios.suppressWindowClose()));
        // emitting on window close: tumbling keeps the record cache (read beneath it on Spark), so read sliding's
        all.add(inHeadersFormat("dsl-headers-emit-on-window-close", Scenarios.emitOnWindowClose("tumbling")));
        all.add(windowReads(inHeadersFormat("dsl-headers-emit-on-window-close",
                Scenarios.emitOnWindowClose("sliding")), "final-store"));
        all.add(sessionReads(inHeadersFormat("dsl-headers-emit-on-window-close",
                Scenarios.emitOnWindowClose("session")), "final-store"));
        all.add(joinWindows());
        // stream-stream joins: each side's window store headers-aware, keeping each record's own headers
        for (final String kind : new String[] {"inner", "left", "outer"}) {
            for (final boolean grace : new boolean[] {true, false}) {
                final Scenario join = inHeadersFormat("dsl-headers-stream-stream-join",
                        Scenarios.streamStreamJoin(kind, grace));
                for (final String store : new String[] {
                    (kind.equals("outer") ? "KSTREAM-OUTERTHIS" : "KSTREAM-JOINTHIS") + "-0000000004-store",
                    (kind.equals("inner") ? "KSTREAM-JOINOTHER" : "KSTREAM-OUTEROTHER") + "-0000000005-store"}) {
                    for (final String accessor : new String[] {"timestamped-window-headers", "window"}) {
                        join.read(store, accessor, "all");
                    }
                    join.read(store, "timestamped-window-headers", "fetch k 90 140");
                }
                all.add(join);
            }
        }
        return all;
    }

    /** A stream-stream join whose windows, named "pairs", still hold records with headers at the end: each side's
     * store keeps each record's value, timestamp and own headers (a null header value, non-ASCII text, none). */
    static Scenario joinWindows() {
        final Scenario s = new Scenario("dsl-headers-join-windows", "inner",
                "dsl.store.format=HEADERS: a stream-stream join's window stores keep each record's headers",
                props -> {
                    final StreamsBuilder b = new StreamsBuilder();
                    final KStream<String, String> left = b.stream("left", Consumed.with(S, S));
                    final KStream<String, String> right = b.stream("right", Consumed.with(S, S));
                    left.join(right, (l, r) -> l + "+" + r,
                                    JoinWindows.ofTimeDifferenceAndGrace(Duration.ofMillis(10), Duration.ofMillis(5)),
                                    StreamJoined.with(S, S, S).withStoreName("pairs"))
                            .to("joined", Produced.with(S, S));
                    return b.build(props);
                })
                .config("dsl.store.format", "headers")
                .input("left", "string", "string")
                .input("right", "string", "string")
                .output("joined", "string", "string")
                .pipe("left", "k", "a", 100, "h", "a1", "empty", null)
                .pipe("right", "k", "x", 105, "h", "x1")
                .pipe("right", "k", "y", 107)
                .pipe("left", "j", "b", 108, "ünï", "çödé")
                .pipe("left", "k", "c", 109, "h", "c1");
        for (final String store : new String[] {"pairs-this-join-store", "pairs-other-join-store"}) {
            for (final String accessor : new String[] {"timestamped-window-headers", "timestamped-window", "window"}) {
                s.read(store, accessor, "all");
            }
            s.read(store, "timestamped-window-headers", "fetch k 100 110");
        }
        return s;
    }

    /** {@code base} (its topology, steps, stores and reads) with dsl.store.format=HEADERS, as scenario {@code name}:
     * the DSL's stores headers-aware. */
    static Scenario inHeadersFormat(final String name, final Scenario base) {
        final Scenario s = new Scenario(name, base.variant, "dsl.store.format=HEADERS: " + base.description,
                base.topology);
        base.config.forEach((key, value) -> {
            if (!key.equals("application.id")) {
                s.config(key, value);
            }
        });
        s.config("dsl.store.format", "HEADERS");
        s.inputs.putAll(base.inputs);
        s.outputs.putAll(base.outputs);
        s.steps.addAll(base.steps);
        s.stores.addAll(base.stores);
        s.reads.addAll(base.reads);
        return s;
    }

    /** A windowed aggregation's store read with and without headers. */
    static Scenario windowReads(final Scenario s, final String store) {
        for (final String accessor : new String[] {"timestamped-window-headers", "timestamped-window"}) {
            s.read(store, accessor, "all");
            s.read(store, accessor, "fetch a 0 100");
        }
        return s;
    }

    /** A session aggregation's store read with and without headers. */
    static Scenario sessionReads(final Scenario s, final String store) {
        for (final String accessor : new String[] {"session-headers", "session"}) {
            s.read(store, accessor, "fetch a");
            s.read(store, accessor, "fetch b");
        }
        return s;
    }

    /** How {@link #kvTopology} materializes its store {@code name} of values {@code values}. */
    interface KvStores {
        <V> Materialized<String, V, KeyValueStore<Bytes, byte[]>> of(String name, Serde<V> values);
    }

    static Scenario kvStores(final String variant) {
        final boolean cached = variant.equals("cached");
        final Scenario s = kvSteps(new Scenario("dsl-headers-kv", variant,
                "dsl.store.format=HEADERS: the DSL's key-value stores are headers-aware stores with empty headers ("
                        + variant + "); outputs as in the default format",
                props -> kvTopology(props, new KvStores() {
                    @Override
                    public <V> Materialized<String, V, KeyValueStore<Bytes, byte[]>> of(final String name,
                                                                                        final Serde<V> values) {
                        return kv(name, values, cached);
                    }
                })))
                .config("dsl.store.format", cached ? "HEADERS" : "headers");
        if (!cached) {
            s.config("default.dsl.store", "in_memory");
        }
        for (final String store : KV_STORES) {
            s.store(store, "timestamped-kv-headers");
        }
        s.store("global-store", "timestamped-kv-headers");
        for (final String accessor : new String[] {"timestamped-kv-headers", "timestamped-kv", "kv"}) {
            for (final String store : new String[] {"counts", "prices-store", "joined"}) {
                s.read(store, accessor, "all");
            }
            s.read("counts", accessor, "get a");
            s.read("prices-store", accessor, "get q");
        }
        return s;
    }

    /** Every kind of the DSL's key-value store, each materialized by {@code stores}: a grouped stream's count, reduce
     * and aggregate, a table source, its materialized filter, mapValues and transformValues, a table-table join, a
     * grouped table's count, a global table (joined by the stream). */
    static Topology kvTopology(final Properties props, final KvStores stores) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> events = b.stream("events", Consumed.with(S, S));
        final KGroupedStream<String, String> byKey = events.groupByKey(Grouped.with(S, S));
        byKey.count(stores.of("counts", L)).toStream().to("counts-out", Produced.with(S, L));
        byKey.reduce((a, c) -> a + c, stores.of("reduced", S)).toStream().to("reduced-out", Produced.with(S, S));
        byKey.aggregate(() -> 0L, (k, v, agg) -> agg + v.length(), stores.of("lengths", L)).toStream()
                .to("lengths-out", Produced.with(S, L));
        final KTable<String, String> prices = b.table("prices", Consumed.with(S, S), stores.of("prices-store", S));
        final KTable<String, String> cheap = prices.filter((k, v) -> v.length() < 3, stores.of("cheap", S));
        final KTable<String, String> upper = prices.mapValues(v -> v + "u", stores.of("upper", S));
        final KTable<String, String> marked = prices.transformValues(TransformValuesScenarios.Bang::new,
                stores.of("marked", S));
        marked.toStream().to("marked-out", Produced.with(S, S));
        cheap.join(upper, (a, c) -> a + "+" + c, stores.of("joined", S)).toStream()
                .to("joined-out", Produced.with(S, S));
        prices.groupBy((k, v) -> KeyValue.pair(v.substring(0, 1), v), Grouped.with("by-initial", S, S))
                .count(stores.of("initials", L)).toStream().to("initials-out", Produced.with(S, L));
        final GlobalKTable<String, String> globals = b.globalTable("globals", Consumed.with(S, S),
                stores.of("global-store", S));
        events.join(globals, (k, v) -> k, (v, g) -> v + "/" + g).to("enriched-out", Produced.with(S, S));
        return b.build(props);
    }

    /** The topics and records of {@link #kvTopology}. */
    static Scenario kvSteps(final Scenario s) {
        return s.input("events", "string", "string")
                .input("prices", "string", "string")
                .input("globals", "string", "string")
                .output("counts-out", "string", "long")
                .output("reduced-out", "string", "string")
                .output("lengths-out", "string", "long")
                .output("marked-out", "string", "string")
                .output("joined-out", "string", "string")
                .output("initials-out", "string", "long")
                .output("enriched-out", "string", "string")
                .pipe("globals", "a", "alpha", 1, "g", "1")
                .pipe("events", "a", "x", 10, "trace", "t1")
                .pipe("events", "b", "yy", 20)
                .pipe("events", "a", "zzz", 30, "trace", "t2", "empty", null)
                .pipe("prices", "p", "12", 40, "src", "feed")
                .pipe("prices", "q", "7", 50)
                .pipe("prices", "p", "345", 60, "src", "feed2")
                .pipe("prices", "q", null, 70)
                .pipe("prices", "r", "9", 80, "ünï", "çödé");
    }
}
