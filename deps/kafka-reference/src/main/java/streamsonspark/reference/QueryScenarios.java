package streamsonspark.reference;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.query.KeyQuery;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.RangeQuery;
import org.apache.kafka.streams.query.TimestampedKeyQuery;
import org.apache.kafka.streams.query.TimestampedRangeQuery;
import org.apache.kafka.streams.query.VersionedKeyQuery;
import org.apache.kafka.streams.query.WindowKeyQuery;
import org.apache.kafka.streams.query.WindowRangeQuery;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.QueryableStoreType;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.SessionStoreWithHeaders;
import org.apache.kafka.streams.state.TimestampedKeyValueStore;
import org.apache.kafka.streams.state.TimestampedKeyValueStoreWithHeaders;
import org.apache.kafka.streams.state.TimestampedWindowStore;
import org.apache.kafka.streams.state.TimestampedWindowStoreWithHeaders;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.ValueAndTimestamp;
import org.apache.kafka.streams.state.internals.GenericReadOnlyKeyValueStoreFacade;
import org.apache.kafka.streams.state.internals.GenericReadOnlyWindowStoreFacade;
import org.apache.kafka.streams.state.internals.ReadOnlySessionStoreFacade;
import org.apache.kafka.streams.state.internals.StateStoreProvider;
import org.apache.kafka.streams.state.internals.ValueConverters;

/**
 * Interactive queries: Kafka's composite read-only stores ({@code QueryableStoreTypes.<type>().create(provider,
 * name)}, what {@code KafkaStreams.store()} returns) and IQv2 queries run by Kafka's own stores
 * ({@code StateStore.query}, what {@code KafkaStreams.query()} runs per partition). Kafka's driver has neither API,
 * so the stores come from {@code getAllStateStores()}: for IQv1 through a provider doing what Kafka's
 * {@code StreamThreadStateStoreProvider} does with a task's store (the type's {@code accepts}, the facades of
 * timestamped stores); for IQv2 the store's own {@code query} with an unbounded position.
 *
 * <p>A read's accessor is {@code "iq-<type>"} (kv, timestamped-kv, window, timestamped-window, session: the calls of
 * {@link StoreReadScenarios#call}) or {@code "iqv2"} with a call {@code "<Query> <arg> ..."} ({@link #query}); an IQv2
 * result is {@code {"result": ...}}, {@code {"failure": "<FailureReason>"}}, or {@code {"error": "unsupported:
 * <message>"}} for a query a store refuses by throwing (a versioned store's key and range queries). Mirrored in
 * tests/conformance/test_kafka_reference.py (interactive_queries).
 */
final class QueryScenarios {
    private QueryScenarios() {}

    static final Serde<String> S = Serdes.String();
    static final Serde<Long> L = Serdes.Long();

    static List<Scenario> all() {
        return List.of(dsl());
    }

    /** The store of an "iq-..." or "iqv2" read. */
    static Object accessor(final TopologyTestDriver driver, final String store, final String accessor) {
        switch (accessor) {
            case "iq-kv": return composite(driver, store, QueryableStoreTypes.keyValueStore());
            case "iq-timestamped-kv": return composite(driver, store, QueryableStoreTypes.timestampedKeyValueStore());
            case "iq-window": return composite(driver, store, QueryableStoreTypes.windowStore());
            case "iq-timestamped-window":
                return composite(driver, store, QueryableStoreTypes.timestampedWindowStore());
            case "iq-session": return composite(driver, store, QueryableStoreTypes.sessionStore());
            case "iq-timestamped-kv-headers":
                return composite(driver, store, QueryableStoreTypes.timestampedKeyValueStoreWithHeaders());
            case "iq-timestamped-window-headers":
                return composite(driver, store, QueryableStoreTypes.timestampedWindowStoreWithHeaders());
            case "iq-session-headers": return composite(driver, store, QueryableStoreTypes.sessionStoreWithHeaders());
            default: throw new IllegalArgumentException("unknown accessor " + accessor);
        }
    }

    /** {@code call} on the composite store of an "iq-..." read; {"error": "invalid state store: <message>"} when
     *  the store type does not accept the store (Kafka's composite stores then throw an
     *  {@code InvalidStateStoreException}). */
    static Object read(final TopologyTestDriver driver, final String store, final String accessor,
                       final String call) {
        try {
            return StoreReadScenarios.call(accessor(driver, store, accessor), call);
        } catch (final InvalidStateStoreException e) {
            final Map<String, Object> error = new LinkedHashMap<>();
            error.put("error", "invalid state store: " + e.getMessage());
            return error;
        }
    }

    private static <T> T composite(final TopologyTestDriver driver, final String name,
                                   final QueryableStoreType<T> type) {
        return type.create(new DriverProvider(driver), name);
    }

    /** Kafka's ValueConverters.extractValue: a timestamped store's value without its timestamp. */
    private static final java.util.function.Function<ValueAndTimestamp<Object>, Object> VALUE =
            v -> v == null ? null : v.value();

    /** StreamThreadStateStoreProvider's handling of one task's store, over the driver's one task. */
    private static final class DriverProvider implements StateStoreProvider {
        private final TopologyTestDriver driver;

        DriverProvider(final TopologyTestDriver driver) {
            this.driver = driver;
        }

        @Override
        @SuppressWarnings({"unchecked", "rawtypes"})
        public <T> List<T> stores(final String storeName, final QueryableStoreType<T> type) {
            final StateStore store = driver.getAllStateStores().get(storeName);
            if (store == null) {
                throw new InvalidStateStoreException("The state store, " + storeName
                        + ", may have migrated to another instance.");
            }
            if (!type.accepts(store)) {
                throw new InvalidStateStoreException("Cannot get state store " + storeName + " because the queryable "
                        + "store type [" + type.getClass() + "] does not accept the actual store type ["
                        + store.getClass() + "].");
            }
            // Kafka 4.3.1's StreamThreadStateStoreProvider.validateAndCastStores
            if (store instanceof TimestampedKeyValueStoreWithHeaders) {
                if (type instanceof QueryableStoreTypes.KeyValueStoreType) {
                    return List.of((T) new GenericReadOnlyKeyValueStoreFacade((TimestampedKeyValueStoreWithHeaders) store,
                            ValueConverters.extractValueFromHeaders()));
                } else if (type instanceof QueryableStoreTypes.TimestampedKeyValueStoreType) {
                    return List.of((T) new GenericReadOnlyKeyValueStoreFacade((TimestampedKeyValueStoreWithHeaders) store,
                            ValueConverters.extractValueAndTimestampFromHeaders()));
                }
            } else if (store instanceof TimestampedKeyValueStore
                    && type instanceof QueryableStoreTypes.KeyValueStoreType) {
                return List.of((T) new GenericReadOnlyKeyValueStoreFacade((TimestampedKeyValueStore) store, VALUE));
            } else if (store instanceof TimestampedWindowStoreWithHeaders) {
                if (type instanceof QueryableStoreTypes.WindowStoreType) {
                    return List.of((T) new GenericReadOnlyWindowStoreFacade((TimestampedWindowStoreWithHeaders) store,
                            ValueConverters.extractValueFromHeaders()));
                } else if (type instanceof QueryableStoreTypes.TimestampedWindowStoreType) {
                    return List.of((T) new GenericReadOnlyWindowStoreFacade((TimestampedWindowStoreWithHeaders) store,
                            ValueConverters.extractValueAndTimestampFromHeaders()));
                }
            } else if (store instanceof TimestampedWindowStore && type instanceof QueryableStoreTypes.WindowStoreType) {
                return List.of((T) new GenericReadOnlyWindowStoreFacade((TimestampedWindowStore) store, VALUE));
            } else if (store instanceof SessionStoreWithHeaders
                    && type instanceof QueryableStoreTypes.SessionStoreType) {
                return List.of((T) new ReadOnlySessionStoreFacade((SessionStoreWithHeaders) store) { });
            }
            return List.of((T) store);
        }
    }

    /** Runs the IQv2 query {@code call} on the driver's store {@code name}: {"result": ...} or {"failure": ...};
     *  with {@code withPosition} ("iqv2-position"), the result's position instead: {"position": [[topic, partition,
     *  offset], ...]} (sorted). A call may end with {@code " @topic:partition:offset,..."}: the query's position bound
     *  (else unbounded). */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static Object query(final TopologyTestDriver driver, final String name, final String fullCall,
                        final boolean withPosition) {
        final String[] bounded = fullCall.split(" @", 2);
        final String call = bounded[0];
        PositionBound bound = PositionBound.unbounded();
        if (bounded.length == 2) {
            final Position position = Position.emptyPosition();
            for (final String component : bounded[1].split(",")) {
                final String[] c = component.split(":");
                position.withComponent(c[0], Integer.parseInt(c[1]), Long.parseLong(c[2]));
            }
            bound = PositionBound.at(position);
        }
        final String[] words = call.split(" ");
        final Object[] a = StoreReadScenarios.args(words, 1);
        final Query q;
        switch (words[0] + "/" + a.length) {
            case "KeyQuery/1": q = KeyQuery.withKey(a[0]); break;
            case "TimestampedKeyQuery/1": q = TimestampedKeyQuery.withKey(a[0]); break;
            case "RangeQuery/2": q = RangeQuery.withRange(a[0], a[1]); break;
            case "RangeQuery/3": q = RangeQuery.withRange(a[0], a[1]).withDescendingKeys(); break;
            case "TimestampedRangeQuery/2": q = TimestampedRangeQuery.withRange(a[0], a[1]); break;
            case "TimestampedRangeQuery/3": q = TimestampedRangeQuery.withRange(a[0], a[1]).withDescendingKeys(); break;
            case "WindowKeyQuery/3":
                q = WindowKeyQuery.withKeyAndWindowStartRange(a[0], java.time.Instant.ofEpochMilli((Long) a[1]),
                        java.time.Instant.ofEpochMilli((Long) a[2]));
                break;
            case "WindowRangeQuery/1": q = WindowRangeQuery.withKey(a[0]); break;
            case "WindowRangeQuery/2":
                q = WindowRangeQuery.withWindowStartRange(java.time.Instant.ofEpochMilli((Long) a[0]),
                        java.time.Instant.ofEpochMilli((Long) a[1]));
                break;
            case "VersionedKeyQuery/1": q = VersionedKeyQuery.withKey(a[0]); break;
            case "VersionedKeyQuery/2":
                q = VersionedKeyQuery.withKey(a[0]).asOf(java.time.Instant.ofEpochMilli((Long) a[1]));
                break;
            default: throw new IllegalArgumentException("unknown query " + call);
        }
        final StateStore store = driver.getAllStateStores().get(name);
        final Map<String, Object> out = new LinkedHashMap<>();
        final QueryResult<Object> r;
        try {
            r = store.query(q, bound, new QueryConfig(false));
        } catch (final UnsupportedOperationException e) {   // thrown through KafkaStreams.query() to the caller
            out.put("error", "unsupported: " + e.getMessage());
            return out;
        }
        if (withPosition) {
            final List<Object> components = new java.util.ArrayList<>();
            for (final String topic : new java.util.TreeSet<>(r.getPosition().getTopics())) {
                for (final Map.Entry<Integer, Long> e
                        : new java.util.TreeMap<>(r.getPosition().getPartitionPositions(topic)).entrySet()) {
                    components.add(List.of(topic, e.getKey(), e.getValue()));
                }
            }
            out.put("position", components);
        } else if (r.isSuccess()) {
            out.put("result", StoreReadScenarios.encode(r.getResult()));
        } else {
            out.put("failure", r.getFailureReason().name());
        }
        return out;
    }

    /** Writes each event to a plain key-value and a plain window store (the DSL's stores are timestamped). */
    static final class PlainStores implements Processor<String, String, Void, Void> {
        private KeyValueStore<String, Long> kv;
        private WindowStore<String, Long> window;

        @Override
        public void init(final ProcessorContext<Void, Void> context) {
            kv = context.getStateStore("plain-kv");
            window = context.getStateStore("plain-window");
        }

        @Override
        public void process(final Record<String, String> record) {
            final Long n = kv.get(record.key());
            kv.put(record.key(), n == null ? 1L : n + 1);
            window.put(record.key(), record.timestamp(), record.timestamp() / 10 * 10);
        }
    }

    static Scenario dsl() {
        final Scenario s = new Scenario("interactive-queries", "dsl",
                "interactive queries: Kafka's composite read-only stores (KafkaStreams.store()) and IQv2 queries "
                        + "(KafkaStreams.query()) on DSL stores (key-value, window, session counts, a versioned "
                        + "table, a global table) and on plain key-value and window stores of a processor",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    StoreReadScenarios.windowedCounts(StoreReadScenarios.countedEvents(builder));
                    StoreReadScenarios.globalStoreAndPrices(builder, () -> { });
                    builder.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("plain-kv"), S,
                            L));
                    builder.addStateStore(Stores.windowStoreBuilder(Stores.inMemoryWindowStore("plain-window",
                            Duration.ofMillis(100), Duration.ofMillis(10), false), S, L));
                    builder.stream("plain", Consumed.with(S, S)).process(PlainStores::new, "plain-kv",
                            "plain-window");
                    pricedOrders(builder);
                    positionStores(builder);
                    return builder.build(props);
                })
                .input("events", "string", "string")
                .input("prices", "string", "string")
                .input("globals", "string", "string")
                .input("plain", "string", "string")
                .input("rates", "string", "string")
                .input("orders", "string", "string")
                .input("pos-writes", "string", "string")
                .input("pos-deletes", "string", "string")
                .output("counts-out", "string", "long")
                .output("priced", "string", "string");
        final Object[][] events = {{"a", 0L}, {"b", 2L}, {"a", 4L}, {"c", 11L}, {"a", 12L}, {"ab", 15L}, {"b", 21L},
            {"a", 30L}, {"d", 31L}, {"e", 32L}};
        for (final Object[] e : events) {
            s.pipe("events", e[0], "x", (Long) e[1]);
            s.pipe("plain", e[0], "x", (Long) e[1]);
        }
        for (final String key : new String[] {"c", "a", "b", "ab"}) {
            s.pipe("globals", key, "g-" + key, 5L);
        }
        // one task reads "rates" and "orders": its table store is written from "rates" only, its count from "orders"
        s.pipe("rates", "a", "r1", 1L).pipe("rates", "b", "r2", 2L).pipe("orders", "a", "o1", 3L)
                .pipe("orders", "b", "o2", 4L).pipe("orders", "c", "o3", 5L).pipe("rates", "a", "r3", 6L)
                .pipe("orders", "a", "o4", 7L);
        // every store of positionStores written from "pos-writes", then deleted or written late from "pos-deletes"
        for (final String key : new String[] {"a", "b"}) {
            s.pipe("pos-writes", key, "w", POSITION_TIME);
        }
        for (final String key : new String[] {"a", "b"}) {
            s.pipe("pos-deletes", key, "d", POSITION_TIME + 1);
        }
        s.pipe("prices", "a", "p10", 10L).pipe("prices", "a", "p20", 20L).pipe("prices", "b", "q15", 15L)
                .pipe("prices", "a", null, 30L).pipe("prices", "a", "p40", 40L);
        // IQv1: the composite stores over every read of the store API
        for (final String read : StoreReadScenarios.KV_READS) {
            s.read("counts", "iq-kv", read);
            s.read("counts", "iq-timestamped-kv", read);
            s.read("plain-kv", "iq-kv", read);
        }
        s.read("plain-kv", "iq-kv", "approximate_num_entries");   // a RocksDB store's count is an estimate
        for (final String read : new String[] {"get a", "range a b", "reverse_all", "prefix_scan a", "get zz"}) {
            s.read("global-store", "iq-kv", read);
            s.read("global-store", "iq-timestamped-kv", read);
        }
        for (final String read : StoreReadScenarios.WINDOW_READS) {
            s.read("window-counts", "iq-window", read);
            s.read("window-counts", "iq-timestamped-window", read);
            s.read("plain-window", "iq-window", read);
        }
        for (final String read : new String[] {"fetch_session a 0 4", "fetch_session a 0 5", "fetch a",
            "backward_fetch a", "fetch zz", "fetch a c", "fetch ~ b", "fetch ~ ~", "backward_fetch a c",
            "find_sessions a 0 100", "find_sessions a 5 10", "backward_find_sessions a 0 100",
            "find_sessions a c 5 30", "find_sessions ~ ~ 0 100", "fetch ~"}) {
            s.read("session-counts", "iq-session", read);
        }
        // IQv2: each store type with every query (an unknown query type fails with UNKNOWN_QUERY_TYPE)
        final String[] queries = {"KeyQuery a", "KeyQuery zz", "TimestampedKeyQuery a", "RangeQuery b d",
            "RangeQuery ~ ~", "RangeQuery ~ b desc", "RangeQuery d b", "TimestampedRangeQuery ~ c",
            "TimestampedRangeQuery ~ ~ desc", "WindowKeyQuery a 0 20", "WindowKeyQuery zz 0 20",
            "WindowKeyQuery a 20 0", "WindowRangeQuery 10 30", "WindowRangeQuery a", "VersionedKeyQuery a",
            "VersionedKeyQuery a 25", "VersionedKeyQuery a 35", "VersionedKeyQuery zz"};
        for (final String store : new String[] {"counts", "window-counts", "session-counts", "prices", "plain-kv",
            "plain-window"}) {
            for (final String query : queries) {
                s.read(store, "iqv2", query);
            }
        }
        // IQv2 position bounds (StoreQueryUtils.isPermitted): a store's partition is held only to the bound's offsets
        // for its own partition, of any topic; not met beyond the last offset it saw, nor for a topic it never saw.
        // Each bound treats partitions 0-3 alike (or none of them), so the answers read the same over 1 or 4.
        final String[] bounds = {"events:7:0", "events:0:99,events:1:99,events:2:99,events:3:99",
            "nope:0:0,nope:1:0,nope:2:0,nope:3:0"};
        for (final String bound : bounds) {
            s.read("counts", "iqv2", "RangeQuery ~ ~ @" + bound);
            s.read("window-counts", "iqv2", "WindowRangeQuery 0 100 @" + bound);
            s.read("plain-kv", "iqv2", "KeyQuery a @" + bound.replace("events", "plain"));
        }
        // Positions per store (Kafka's stores' StoreQueryUtils.updatePosition): a store's position holds the topics of
        // the records that wrote it, not every topic its task reads; a bound on the other topic is never met
        // (at every partition: the bound reads the same over 1 or 4)
        for (final String[] storeAndOther : new String[][] {{"rates-table", "orders"}, {"order-counts", "rates"}}) {
            final String other = storeAndOther[1];
            s.read(storeAndOther[0], "iqv2-position", "KeyQuery a");
            s.read(storeAndOther[0], "iqv2", "RangeQuery ~ ~ @" + other + ":0:0," + other + ":1:0," + other + ":2:0,"
                    + other + ":3:0");
        }
        // Which writes move a store's position, by store kind (each store's updatePosition calls): "pos-deletes" is
        // in the position of the stores whose delete, remove, put of null or expired put (see PositionDeletes) does
        for (final String store : POSITION_STORES) {
            s.read(store, "iqv2-position", "KeyQuery a");
        }
        return s;
    }

    static final long POSITION_TIME = 200_000L;
    static final String[] POSITION_STORES = {"pos-kv-mem", "pos-kv-rocks", "pos-kv-cached", "pos-kv-null",
        "pos-kv-lru", "pos-ses-mem", "pos-ses-rocks", "pos-ses-cached", "pos-ses-mem-late", "pos-ses-rocks-late", "pos-win-mem-dups",
        "pos-win-rocks-dups", "pos-win-mem-late", "pos-win-rocks-late"};

    /** The stores of PositionWrites and PositionDeletes: one subtopology reading "pos-writes" and "pos-deletes". */
    static void positionStores(final StreamsBuilder builder) {
        final Duration retention = Duration.ofMillis(100);
        final Duration size = Duration.ofMillis(10);
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("pos-kv-mem"), S, L));
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore("pos-kv-rocks"), S, L));
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("pos-kv-cached"), S, L)
                .withCachingEnabled());
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("pos-kv-null"), S, L));
        // MemoryLRUCache.delete moves the position, InMemoryKeyValueStore.delete does not
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.lruMap("pos-kv-lru", 10), S, L));
        builder.addStateStore(Stores.sessionStoreBuilder(Stores.inMemorySessionStore("pos-ses-mem", retention), S, L));
        builder.addStateStore(Stores.sessionStoreBuilder(Stores.persistentSessionStore("pos-ses-rocks", retention), S,
                L));
        builder.addStateStore(Stores.sessionStoreBuilder(Stores.inMemorySessionStore("pos-ses-cached", retention), S,
                L).withCachingEnabled());
        builder.addStateStore(Stores.sessionStoreBuilder(Stores.inMemorySessionStore("pos-ses-mem-late", retention),
                S, L));
        builder.addStateStore(Stores.sessionStoreBuilder(Stores.persistentSessionStore("pos-ses-rocks-late",
                retention), S, L));
        builder.addStateStore(Stores.windowStoreBuilder(Stores.inMemoryWindowStore("pos-win-mem-dups", retention,
                size, true), S, L));
        builder.addStateStore(Stores.windowStoreBuilder(Stores.persistentWindowStore("pos-win-rocks-dups", retention,
                size, true), S, L));
        builder.addStateStore(Stores.windowStoreBuilder(Stores.inMemoryWindowStore("pos-win-mem-late", retention,
                size, false), S, L));
        builder.addStateStore(Stores.windowStoreBuilder(Stores.persistentWindowStore("pos-win-rocks-late", retention,
                size, false), S, L));
        builder.stream("pos-writes", Consumed.with(S, S)).process(PositionWrites::new, POSITION_STORES);
        builder.stream("pos-deletes", Consumed.with(S, S)).process(PositionDeletes::new, POSITION_STORES);
    }

    /** The stores of {@link #POSITION_STORES}, by name. */
    abstract static class PositionStores implements Processor<String, String, Void, Void> {
        final Map<String, StateStore> stores = new LinkedHashMap<>();

        @Override
        public void init(final ProcessorContext<Void, Void> context) {
            for (final String name : POSITION_STORES) {
                stores.put(name, context.getStateStore(name));
            }
        }

        @SuppressWarnings("unchecked")
        KeyValueStore<String, Long> kv(final String name) {
            return (KeyValueStore<String, Long>) stores.get(name);
        }

        @SuppressWarnings("unchecked")
        org.apache.kafka.streams.state.SessionStore<String, Long> session(final String name) {
            return (org.apache.kafka.streams.state.SessionStore<String, Long>) stores.get(name);
        }

        @SuppressWarnings("unchecked")
        WindowStore<String, Long> window(final String name) {
            return (WindowStore<String, Long>) stores.get(name);
        }

        static org.apache.kafka.streams.kstream.Windowed<String> session(final String key, final long time) {
            return new org.apache.kafka.streams.kstream.Windowed<>(key,
                    new org.apache.kafka.streams.kstream.internals.SessionWindow(time, time));
        }
    }

    /** Writes the key to every position store, at {@link #POSITION_TIME}. */
    static final class PositionWrites extends PositionStores {
        @Override
        public void process(final Record<String, String> record) {
            final String key = record.key();
            for (final String name : POSITION_STORES) {
                if (name.startsWith("pos-kv-")) {
                    kv(name).put(key, 1L);
                } else if (name.startsWith("pos-ses-")) {
                    session(name).put(session(key, POSITION_TIME), 1L);
                } else {
                    window(name).put(key, 1L, POSITION_TIME);
                }
            }
        }
    }

    /** Deletes the key (delete, put of null, remove) or writes it too late to be stored, per store. */
    static final class PositionDeletes extends PositionStores {
        @Override
        public void process(final Record<String, String> record) {
            final String key = record.key();
            kv("pos-kv-mem").delete(key);
            kv("pos-kv-rocks").delete(key);
            kv("pos-kv-cached").delete(key);
            kv("pos-kv-lru").delete(key);
            kv("pos-kv-null").put(key, null);
            session("pos-ses-mem").remove(session(key, POSITION_TIME));
            session("pos-ses-rocks").remove(session(key, POSITION_TIME));
            session("pos-ses-cached").remove(session(key, POSITION_TIME));
            session("pos-ses-mem-late").put(session(key, 0L), 2L);
            session("pos-ses-rocks-late").put(session(key, 0L), 2L);
            window("pos-win-mem-dups").put(key, null, POSITION_TIME);
            window("pos-win-rocks-dups").put(key, null, POSITION_TIME);
            window("pos-win-mem-late").put(key, 2L, 0L);
            window("pos-win-rocks-late").put(key, 2L, 0L);
        }
    }

    /** A stream-table join and a count of the stream in one subtopology (its task reads both topics). */
    static void pricedOrders(final StreamsBuilder builder) {
        final org.apache.kafka.streams.kstream.KTable<String, String> rates = builder.table("rates",
                Consumed.with(S, S), org.apache.kafka.streams.kstream.Materialized
                        .<String, String, KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]>>as("rates-table")
                        .withKeySerde(S).withValueSerde(S));
        final org.apache.kafka.streams.kstream.KStream<String, String> orders = builder.stream("orders",
                Consumed.with(S, S));
        orders.join(rates, (o, r) -> o + "@" + r).to("priced", org.apache.kafka.streams.kstream.Produced.with(S, S));
        orders.groupByKey().count(org.apache.kafka.streams.kstream.Materialized
                .<String, Long, KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]>>as("order-counts")
                .withKeySerde(S).withValueSerde(L));
    }
}
