package streamsonspark.reference;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.serialization.LongSerializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.internals.SessionWindow;
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
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.TimestampedKeyValueStore;
import org.apache.kafka.streams.state.TimestampedWindowStore;
import org.apache.kafka.streams.state.ValueAndTimestamp;
import org.apache.kafka.streams.state.ValueTimestampHeaders;
import org.apache.kafka.streams.state.VersionedKeyValueStore;
import org.apache.kafka.streams.state.VersionedRecord;
import org.apache.kafka.streams.state.WindowStore;

/**
 * The read-only store API of Kafka 4.3, every method and overload, read from a processor and from the driver's store
 * accessors. A call is written as text, {@code "<method> <arg> ..."} (the Python name of the method; an argument is
 * an integer, {@code ~} for null, or else a string), so the Python test runs the same calls by name
 * ({@link #call}). Results are JSON: an iterator a list of {@code [key, value]}, a windowed key {@code [key, start,
 * end]}, a {@code ValueAndTimestamp} {@code [value, timestamp]}, a {@code VersionedRecord} {@code [value, timestamp,
 * validTo]}; a bad argument {@code {"error": "invalid argument"}}, a call the store does not support
 * {@code {"error": "unsupported: <message>"}}, a prefix scan with no key above its prefix
 * {@code {"error": "index out of bounds"}}.
 *
 * <p>"processor": an interpreter processor runs the operations of each record of "ops" ({@code "<store> <call>"},
 * several separated by {@code " ; "}) against its stores (in-memory and RocksDB key-value, window and session stores,
 * timestamped ones, cached ones read before the commit, window stores retaining duplicates, Long keys ordered by their
 * bytes) and forwards {@code "<operation> -> <result>"}; every record has the key "g", so at any partition count one
 * task holds every store entry; the driver reads the same stores at the end. "dsl": the same reads through the driver
 * on the stores of DSL aggregations, of a global table (which a processor reads too) and of a versioned table.
 * Mirrored in tests/conformance/test_kafka_reference.py (store_reads).
 */
final class StoreReadScenarios {
    private StoreReadScenarios() {}

    static final Serde<String> S = Serdes.String();
    static final Serde<Long> L = Serdes.Long();

    static List<Scenario> all() {
        return List.of(processor(), dsl());
    }

    /** Parses a call's arguments: an integer is a Long, {@code ~} null, anything else a String. */
    static Object[] args(final String[] words, final int first) {
        final Object[] out = new Object[words.length - first];
        for (int i = first; i < words.length; i++) {
            final String w = words[i];
            out[i - first] = w.equals("~") ? null : w.matches("-?[0-9]+") ? (Object) Long.valueOf(w) : w;
        }
        return out;
    }

    /** Runs {@code call} (method name and arguments) on {@code store}; the result as JSON-ready objects. */
    static Object call(final Object store, final String call) {
        final String[] words = call.split(" ");
        try {
            return encode(invoke(store, words[0], args(words, 1)));
        } catch (final NullPointerException | IllegalArgumentException e) {
            final Map<String, Object> error = new LinkedHashMap<>();
            error.put("error", "invalid argument");
            return error;
        } catch (final IndexOutOfBoundsException e) {
            final Map<String, Object> error = new LinkedHashMap<>();
            error.put("error", "index out of bounds");
            return error;
        } catch (final UnsupportedOperationException e) {
            final Map<String, Object> error = new LinkedHashMap<>();
            error.put("error", "unsupported: " + e.getMessage());
            return error;
        }
    }

    private static long t(final Object o) {
        return (Long) o;
    }

    private static Instant i(final Object o) {
        return Instant.ofEpochMilli((Long) o);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Object invoke(final Object store, final String method, final Object[] a) {
        if (store instanceof VersionedKeyValueStore) {
            final VersionedKeyValueStore<Object, Object> s = (VersionedKeyValueStore<Object, Object>) store;
            if (method.equals("get")) {
                return a.length == 1 ? s.get(a[0]) : s.get(a[0], t(a[1]));
            }
        } else if (store instanceof ReadOnlyKeyValueStore) {
            final ReadOnlyKeyValueStore<Object, Object> s = (ReadOnlyKeyValueStore<Object, Object>) store;
            switch (method) {
                case "get": return s.get(a[0]);
                case "range": return s.range(a[0], a[1]);
                case "reverse_range": return s.reverseRange(a[0], a[1]);
                case "all": return s.all();
                case "reverse_all": return s.reverseAll();
                case "prefix_scan":
                    final Serializer serializer = a[0] instanceof Long ? new LongSerializer() : new StringSerializer();
                    return s.prefixScan(a[0], serializer);
                case "approximate_num_entries": return s.approximateNumEntries();
                default: break;
            }
        } else if (store instanceof ReadOnlyWindowStore) {   // a store, or a composite one (QueryScenarios)
            final ReadOnlyWindowStore<Object, Object> s = (ReadOnlyWindowStore<Object, Object>) store;
            switch (method + "/" + a.length) {   // WindowStore's long overloads are its Instant ones
                case "fetch/2": return s.fetch(a[0], t(a[1]));
                case "fetch/3": return s.fetch(a[0], i(a[1]), i(a[2]));
                case "fetch/4": return s.fetch(a[0], a[1], i(a[2]), i(a[3]));
                case "backward_fetch/3": return s.backwardFetch(a[0], i(a[1]), i(a[2]));
                case "backward_fetch/4": return s.backwardFetch(a[0], a[1], i(a[2]), i(a[3]));
                case "fetch_all/2": return s.fetchAll(i(a[0]), i(a[1]));
                case "backward_fetch_all/2": return s.backwardFetchAll(i(a[0]), i(a[1]));
                case "all/0": return s.all();
                case "backward_all/0": return s.backwardAll();
                default: break;
            }
        } else if (store instanceof ReadOnlySessionStore) {   // a store, or a composite one (QueryScenarios)
            final ReadOnlySessionStore<Object, Object> s = (ReadOnlySessionStore<Object, Object>) store;
            switch (method + "/" + a.length) {
                case "find_sessions/2": return ((SessionStore<Object, Object>) store).findSessions(t(a[0]), t(a[1]));
                case "find_sessions/3": return s.findSessions(a[0], t(a[1]), t(a[2]));
                case "find_sessions/4": return s.findSessions(a[0], a[1], t(a[2]), t(a[3]));
                case "backward_find_sessions/3": return s.backwardFindSessions(a[0], t(a[1]), t(a[2]));
                case "backward_find_sessions/4": return s.backwardFindSessions(a[0], a[1], t(a[2]), t(a[3]));
                case "fetch_session/3": return s.fetchSession(a[0], t(a[1]), t(a[2]));
                case "fetch/1": return s.fetch(a[0]);
                case "fetch/2": return s.fetch(a[0], a[1]);
                case "backward_fetch/1": return s.backwardFetch(a[0]);
                case "backward_fetch/2": return s.backwardFetch(a[0], a[1]);
                default: break;
            }
        }
        throw new IllegalStateException("no call " + method + "/" + a.length + " on " + store);
    }

    @SuppressWarnings("unchecked")
    static Object encode(final Object o) {
        if (o == null || o instanceof String || o instanceof Long || o instanceof Integer) {
            return o;
        }
        if (o instanceof ValueAndTimestamp) {
            final ValueAndTimestamp<Object> v = (ValueAndTimestamp<Object>) o;
            return listOf(encode(v.value()), v.timestamp());
        }
        if (o instanceof ValueTimestampHeaders) {
            final ValueTimestampHeaders<Object> v = (ValueTimestampHeaders<Object>) o;
            return listOf(encode(v.value()), v.timestamp(), ReferenceMain.headers(v.headers()));
        }
        if (o instanceof AggregationWithHeaders) {
            final AggregationWithHeaders<Object> v = (AggregationWithHeaders<Object>) o;
            return listOf(encode(v.aggregation()), ReferenceMain.headers(v.headers()));
        }
        if (o instanceof VersionedRecord) {
            final VersionedRecord<Object> v = (VersionedRecord<Object>) o;
            return listOf(encode(v.value()), v.timestamp(), v.validTo().orElse(null));
        }
        if (o instanceof Windowed) {
            final Windowed<Object> w = (Windowed<Object>) o;
            return listOf(encode(w.key()), w.window().start(), w.window().end());
        }
        if (o instanceof KeyValueIterator) {
            final List<Object> out = new ArrayList<>();
            try (KeyValueIterator<Object, Object> it = (KeyValueIterator<Object, Object>) o) {
                it.forEachRemaining(kv -> out.add(listOf(encode(kv.key), encode(kv.value))));
            }
            return out;
        }
        throw new IllegalArgumentException("cannot encode " + o.getClass());
    }

    private static List<Object> listOf(final Object... items) {
        final List<Object> out = new ArrayList<>();
        for (final Object item : items) {
            out.add(item);
        }
        return out;
    }

    /** Runs each operation of a record's value, {@code "<store> <method> <arg> ..."}, several separated by
     *  {@code " ; "} (in one record, before the driver's commit flushes a store's cache): writes ("put", "delete",
     *  "remove") change the store (a timestamped store's value gets the record's timestamp), anything else is a read;
     *  forwards {@code "<operation> -> <result as compact JSON>"} for each. */
    static final class Interpreter implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> context;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
        }

        @Override
        public void process(final Record<String, String> record) {
            for (final String op : record.value().split(" ; ")) {
                final String[] words = op.split(" ", 2);
                final StateStore store = context.getStateStore(words[0]);
                final Object result = write(store, words[1], record.timestamp());
                context.forward(record.withValue(op + " -> " + Json.compact(result)));
            }
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        private static Object write(final StateStore store, final String call, final long timestamp) {
            final String[] words = call.split(" ");
            final Object[] a = args(words, 1);
            if (store instanceof VersionedKeyValueStore && !words[0].equals("get")) {   // put and delete at a time
                final VersionedKeyValueStore<Object, Object> s = (VersionedKeyValueStore<Object, Object>) store;
                return words[0].equals("put") ? (Object) s.put(a[0], a[1], t(a[2])) : encode(s.delete(a[0], t(a[1])));
            }
            final boolean timestamped = store instanceof TimestampedKeyValueStore
                    || store instanceof TimestampedWindowStore;
            switch (words[0]) {
                case "put":
                    if (store instanceof KeyValueStore) {
                        ((KeyValueStore) store).put(a[0], timestamped ? ValueAndTimestamp.make(a[1], timestamp) : a[1]);
                    } else if (store instanceof WindowStore) {
                        ((WindowStore) store).put(a[0], timestamped ? ValueAndTimestamp.make(a[1], timestamp) : a[1],
                                t(a[2]));
                    } else {
                        ((SessionStore) store).put(new Windowed<>(a[0], new SessionWindow(t(a[1]), t(a[2]))), a[3]);
                    }
                    return "ok";
                case "delete":
                    return encode(((KeyValueStore) store).delete(a[0]));
                case "remove":
                    ((SessionStore) store).remove(new Windowed<>(a[0], new SessionWindow(t(a[1]), t(a[2]))));
                    return "ok";
                default:
                    return StoreReadScenarios.call(store, call);
            }
        }
    }

    /** The reads of a key-value store with String keys holding a..e (keys ordered by their bytes). */
    static final String[] KV_READS = {
        "get b", "get zz", "range b d", "range ~ b", "range c ~", "range ~ ~", "range d b", "range b b",
        "reverse_range b d", "reverse_range ~ c", "reverse_range c ~", "reverse_range d b", "all", "reverse_all",
        "prefix_scan a", "prefix_scan ab", "prefix_scan z", "get ~"};

    /** The reads of a window store (size 10) holding a, b, c in windows starting at 0..30. */
    static final String[] WINDOW_READS = {
        "fetch a 10", "fetch a 15", "fetch zz 10", "fetch a 0 20", "fetch a 5 25", "fetch a 20 0", "fetch a b 0 20",
        "fetch ~ b 0 30", "fetch b ~ 0 30", "fetch ~ ~ 10 30", "fetch c a 0 30", "backward_fetch a 0 20",
        "backward_fetch a b 0 20", "backward_fetch ~ ~ 0 30", "backward_fetch c a 0 30", "fetch_all 10 20",
        "fetch_all 30 0", "backward_fetch_all 0 30", "all", "backward_all", "fetch ~ 0 10"};

    /** The reads of a session store holding sessions of a, b, c. */
    static final String[] SESSION_READS = {
        "fetch_session a 0 5", "fetch_session a 0 6", "fetch a", "backward_fetch a", "fetch zz", "fetch a c",
        "fetch ~ b", "fetch b ~", "fetch ~ ~", "fetch c a", "backward_fetch a c", "backward_fetch ~ ~",
        "find_sessions a 5 10", "find_sessions a 0 100", "backward_find_sessions a 0 100", "find_sessions a c 5 30",
        "find_sessions ~ ~ 0 100", "find_sessions ~ b 6 100", "find_sessions c a 0 100",
        "backward_find_sessions a c 0 100", "backward_find_sessions ~ b 0 100", "find_sessions 5 20",
        "find_sessions 0 100", "fetch ~", "find_sessions ~ 0 10"};

    static Scenario processor() {
        final Scenario s = new Scenario("store-reads", "processor",
                "Processor API: an interpreter runs puts and every read of the store API against in-memory and "
                        + "RocksDB key-value, window and session stores (timestamped ones, Long keys in byte order) and "
                        + "forwards what it read; the driver reads the same stores at the end",
                props -> {
                    final Topology topology = new Topology();
                    topology.addSource("ops-source", S.deserializer(), S.deserializer(), "ops");
                    topology.addProcessor("interpreter", Interpreter::new, "ops-source");
                    final Duration retention = Duration.ofMillis(50);
                    final Duration size = Duration.ofMillis(10);
                    topology.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("kv"), S, L),
                            "interpreter");
                    topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore("kv-rocks"), S,
                            L), "interpreter");
                    topology.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("kv-long"), L, S),
                            "interpreter");
                    topology.addStateStore(Stores.timestampedKeyValueStoreBuilder(
                            Stores.persistentTimestampedKeyValueStore("ts-kv"), S, L), "interpreter");
                    topology.addStateStore(Stores.windowStoreBuilder(
                            Stores.inMemoryWindowStore("win", retention, size, false), S, L), "interpreter");
                    topology.addStateStore(Stores.windowStoreBuilder(
                            Stores.persistentWindowStore("win-rocks", retention, size, false), S, L), "interpreter");
                    topology.addStateStore(Stores.timestampedWindowStoreBuilder(
                            Stores.persistentTimestampedWindowStore("ts-win", retention, size, false), S, L),
                            "interpreter");
                    topology.addStateStore(Stores.sessionStoreBuilder(Stores.inMemorySessionStore("ses", retention), S,
                            L), "interpreter");
                    topology.addStateStore(Stores.sessionStoreBuilder(
                            Stores.persistentSessionStore("ses-rocks", retention), S, L), "interpreter");
                    topology.addStateStore(Stores.windowStoreBuilder(
                            Stores.inMemoryWindowStore("win-dups", retention, size, true), S, L), "interpreter");
                    topology.addStateStore(Stores.windowStoreBuilder(
                            Stores.persistentWindowStore("win-dups-rocks", retention, size, true), S, L),
                            "interpreter");
                    topology.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("kv-cached"), S,
                            L).withCachingEnabled(), "interpreter");
                    topology.addStateStore(Stores.windowStoreBuilder(
                            Stores.persistentWindowStore("win-cached", retention, size, false), S, L)
                            .withCachingEnabled(), "interpreter");
                    topology.addStateStore(Stores.sessionStoreBuilder(
                            Stores.persistentSessionStore("ses-cached", retention), S, L).withCachingEnabled(),
                            "interpreter");
                    topology.addStateStore(Stores.sessionStoreBuilder(Stores.inMemorySessionStore("ses-mem-cached",
                            retention), S, L).withCachingEnabled(), "interpreter");
                    topology.addSink("results-sink", "results", S.serializer(), S.serializer(), "interpreter");
                    return topology;
                })
                .input("ops", "string", "string")
                .output("results", "string", "string");
        long ts = 0;
        for (final String kv : new String[] {"kv", "kv-rocks", "ts-kv"}) {
            for (final String key : new String[] {"c", "a", "e", "ab", "b", "d", "zz"}) {
                s.pipe("ops", "g", kv + " put " + key + " " + (long) key.charAt(0), ts++);
            }
            s.pipe("ops", "g", kv + " delete zz", ts++);
            s.pipe("ops", "g", kv + " put d ~", ts++);
            for (final String read : KV_READS) {
                s.pipe("ops", "g", kv + " " + read, ts++);
                s.read(kv, kv.equals("ts-kv") ? "timestamped-kv" : "kv", read);
            }
        }
        s.pipe("ops", "g", "kv approximate_num_entries", ts++);
        s.read("kv", "kv", "approximate_num_entries");
        // Long keys: serialized big-endian two's complement, so negative keys sort after positive ones
        for (final long key : new long[] {256, -1, 0, 1, -256, 65536}) {
            s.pipe("ops", "g", "kv-long put " + key + " v" + key, ts++);
        }
        for (final String read : new String[] {"all", "reverse_all", "range 0 256", "range -256 -1", "range 1 -1",
            "range -1 1", "range ~ 1", "range 1 ~", "reverse_range 0 65536", "prefix_scan 256", "prefix_scan -1",
            "get -1"}) {
            s.pipe("ops", "g", "kv-long " + read, ts++);
            s.read("kv-long", "kv", read);
        }
        final long windowTime = ts;
        for (final String w : new String[] {"win", "win-rocks", "ts-win"}) {
            final String[][] puts = {{"a", "1", "0"}, {"b", "2", "0"}, {"a", "3", "10"}, {"c", "4", "10"},
                {"a", "5", "20"}, {"b", "6", "30"}, {"ab", "7", "20"}};
            for (final String[] put : puts) {
                s.pipe("ops", "g", w + " put " + String.join(" ", put), windowTime);
            }
            for (final String read : WINDOW_READS) {
                s.pipe("ops", "g", w + " " + read, windowTime);
                s.read(w, w.equals("ts-win") ? "timestamped-window" : "window", read);
            }
        }
        for (final String ses : new String[] {"ses", "ses-rocks"}) {
            final String[][] puts = {{"a", "0", "5", "1"}, {"a", "10", "15", "2"}, {"b", "0", "20", "3"},
                {"c", "5", "5", "4"}, {"b", "30", "40", "5"}, {"ab", "6", "8", "6"}, {"c", "12", "30", "7"}};
            for (final String[] put : puts) {
                s.pipe("ops", "g", ses + " put " + String.join(" ", put), windowTime);
            }
            s.pipe("ops", "g", ses + " remove c 5 5", windowTime);
            for (final String read : SESSION_READS) {
                s.pipe("ops", "g", ses + " " + read, windowTime);
                s.read(ses, "session", read);
            }
        }
        // window stores retaining duplicates (what stream-stream joins use): every put kept, a null put ignored
        for (final String w : new String[] {"win-dups", "win-dups-rocks"}) {
            s.pipe("ops", "g", w + " put a 1 0 ; " + w + " put a 2 0 ; " + w + " put b 3 0 ; " + w + " put a 4 10 ; "
                    + w + " put a ~ 0 ; " + w + " put ab 5 10", windowTime);
            for (final String read : new String[] {"fetch a 0", "fetch a 0 20", "backward_fetch a 0 20",
                "fetch a b 0 20", "backward_fetch a b 0 20", "fetch_all 0 10", "all", "backward_all"}) {
                s.pipe("ops", "g", w + " " + read, windowTime);
            }
        }
        // cached stores read within one record, before the commit flushes the cache: reads merge the cache and the
        // store beneath
        s.pipe("ops", "g", "kv-cached put c 3 ; kv-cached put a 1 ; kv-cached put b 2", ts++);
        s.pipe("ops", "g", "kv-cached put ab 4 ; kv-cached delete b ; kv-cached put d 5 ; kv-cached get a ; "
                + "kv-cached get b ; kv-cached range a c ; kv-cached reverse_range ~ c ; kv-cached all ; "
                + "kv-cached reverse_all ; kv-cached prefix_scan a ; kv-cached range c a", ts++);
        s.pipe("ops", "g", "win-cached put a 1 0 ; win-cached put b 2 10 ; win-cached put c 3 20", windowTime);
        s.pipe("ops", "g", "win-cached put a 4 10 ; win-cached put b ~ 10 ; win-cached put ab 5 0 ; "
                + "win-cached fetch a 10 ; win-cached fetch a 0 20 ; win-cached backward_fetch a 0 20 ; "
                + "win-cached fetch a b 0 20 ; win-cached backward_fetch ~ ~ 0 20 ; win-cached fetch_all 0 10 ; "
                + "win-cached all ; win-cached backward_all", windowTime);
        s.pipe("ops", "g", "ses-cached put a 0 5 1 ; ses-cached put b 10 20 2 ; ses-cached put c 5 6 3", windowTime);
        s.pipe("ops", "g", "ses-cached put a 8 9 4 ; ses-cached remove b 10 20 ; ses-cached put ab 1 2 5 ; "
                + "ses-cached fetch_session a 8 9 ; ses-cached fetch a ; ses-cached backward_fetch a c ; "
                + "ses-cached find_sessions a 0 100 ; ses-cached find_sessions ~ ~ 3 100 ; "
                + "ses-cached backward_find_sessions a b 0 100 ; ses-cached fetch c a ; ses-cached find_sessions 0 100",
                windowTime);
        // the count of a cached store is its store's: writes still in the cache are not counted until the commit
        s.pipe("ops", "g", "kv-cached approximate_num_entries ; kv-cached put x 9 ; kv-cached put y 9 ; "
                + "kv-cached delete a ; kv-cached approximate_num_entries", ts++);
        s.pipe("ops", "g", "kv-cached approximate_num_entries", ts++);
        s.pipe("ops", "g", "ses-mem-cached put a 0 5 1 ; ses-mem-cached put b 3 4 2", windowTime);
        s.pipe("ops", "g", "ses-mem-cached put c 1 2 3 ; ses-mem-cached find_sessions 0 100 ; "
                + "ses-mem-cached fetch c a ; ses-mem-cached find_sessions ~ ~ 0 100", windowTime);
        for (final String read : new String[] {"all", "fetch a 0 100"}) {
            s.read("win-cached", "window", read);
        }
        s.read("kv-cached", "kv", "all");
        s.read("ses-cached", "session", "fetch ~ ~");
        // window and session stores expire what is older than stream time - retention (50): windows starting at 0
        // and sessions ending at 5 (in-memory), or whole segments (RocksDB, 60 s segments: nothing here)
        for (final String w : new String[] {"win", "win-rocks", "ts-win"}) {
            s.pipe("ops", "g", w + " put e 8 55", windowTime);
            s.pipe("ops", "g", w + " all", windowTime);
            s.pipe("ops", "g", w + " fetch a 0 100", windowTime);
            s.pipe("ops", "g", w + " fetch a 0", windowTime);
        }
        for (final String ses : new String[] {"ses", "ses-rocks"}) {
            s.pipe("ops", "g", ses + " put e 55 56 9", windowTime);
            s.pipe("ops", "g", ses + " find_sessions ~ ~ 0 100", windowTime);
            s.pipe("ops", "g", ses + " fetch_session a 0 5", windowTime);
        }
        return s;
    }

    /** "events" grouped by key and counted into "counts" (written to "counts-out"); the grouped stream. */
    static KGroupedStream<String, String> countedEvents(final StreamsBuilder builder) {
        final KGroupedStream<String, String> grouped =
                builder.stream("events", Consumed.with(S, S)).groupByKey(Grouped.with(S, S));
        grouped.count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("counts")
                        .withKeySerde(S).withValueSerde(L))
                .toStream().to("counts-out", Produced.with(S, L));
        return grouped;
    }

    /** Window ("window-counts", 10 ms) and session ("session-counts", gap 5 ms) counts, grace 100 ms. */
    static void windowedCounts(final KGroupedStream<String, String> grouped) {
        grouped.windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(100)))
                .count(Materialized.<String, Long, WindowStore<Bytes, byte[]>>as("window-counts")
                        .withKeySerde(S).withValueSerde(L));
        grouped.windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofMillis(5), Duration.ofMillis(100)))
                .count(Materialized.<String, Long, SessionStore<Bytes, byte[]>>as("session-counts")
                        .withKeySerde(S).withValueSerde(L));
    }

    /** The global table "global-store" of "globals", then {@code between}, then the versioned table "prices". */
    static void globalStoreAndPrices(final StreamsBuilder builder, final Runnable between) {
        builder.globalTable("globals", Consumed.with(S, S),
                Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("global-store"));
        between.run();
        builder.table("prices", Consumed.with(S, S),
                Materialized.<String, String>as(Stores.persistentVersionedKeyValueStore("prices",
                        Duration.ofMillis(100))).withKeySerde(S).withValueSerde(S));
    }

    static Scenario dsl() {
        final Scenario s = new Scenario("store-reads", "dsl",
                "the driver's store accessors on DSL stores (counts in a key-value, an in-memory key-value, a window and "
                        + "a session store; a versioned table) through every read of the store API",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KGroupedStream<String, String> grouped = countedEvents(builder);
                    grouped.count(Materialized.<String, Long>as(Stores.inMemoryKeyValueStore("counts-mem"))
                            .withKeySerde(S).withValueSerde(L));
                    windowedCounts(grouped);
                    globalStoreAndPrices(builder, () -> builder.stream("lookups", Consumed.with(S, S))
                            .process(Interpreter::new).to("lookups-out", Produced.with(S, S)));
                    return builder.build(props);
                })
                .input("events", "string", "string")
                .input("prices", "string", "string")
                .input("globals", "string", "string")
                .input("lookups", "string", "string")
                .output("counts-out", "string", "long")
                .output("lookups-out", "string", "string");
        final Object[][] events = {{"a", 0L}, {"b", 2L}, {"a", 4L}, {"c", 11L}, {"a", 12L}, {"ab", 15L}, {"b", 21L},
            {"a", 30L}, {"d", 31L}};
        for (final Object[] e : events) {
            s.pipe("events", e[0], "x", (Long) e[1]);
        }
        for (final String key : new String[] {"c", "a", "b", "ab"}) {
            s.pipe("globals", key, "g-" + key, 5L);
        }
        // a processor reads the global store (not connected to it: global stores are every processor's)
        for (final String read : new String[] {"get a", "range a b", "reverse_all", "prefix_scan a", "range b a"}) {
            s.pipe("lookups", "l", "global-store " + read, 6L);
        }
        s.pipe("prices", "a", "p10", 10L).pipe("prices", "a", "p20", 20L).pipe("prices", "b", "q15", 15L)
                .pipe("prices", "a", null, 30L).pipe("prices", "a", "p40", 40L).pipe("prices", "a", "p25", 25L);
        for (final String read : KV_READS) {
            s.read("counts", "kv", read);
            s.read("counts", "timestamped-kv", read);
        }
        for (final String read : new String[] {"get a", "range a b", "reverse_range ~ b", "all", "reverse_all",
            "prefix_scan a", "approximate_num_entries"}) {
            s.read("global-store", "kv", read);
            s.read("global-store", "timestamped-kv", read);
        }
        s.read("counts-mem", "kv", "approximate_num_entries");
        s.read("counts-mem", "kv", "all");
        for (final String read : WINDOW_READS) {
            s.read("window-counts", "window", read);
            s.read("window-counts", "timestamped-window", read);
        }
        for (final String read : SESSION_READS) {
            s.read("session-counts", "session", read);
        }
        for (final String read : new String[] {"get a", "get a 45", "get a 35", "get a 29", "get a 24", "get a 20",
            "get a 19", "get a 10", "get a 9", "get b", "get b 14", "get zz", "get zz 10", "get ~"}) {
            s.read("prices", "versioned", read);
        }
        return s;
    }
}
