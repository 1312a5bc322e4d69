package streamsonspark.reference;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;

import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.WindowedSerdes;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ValueAndTimestamp;
import org.apache.kafka.streams.state.ValueTimestampHeaders;
import org.apache.kafka.streams.test.TestRecord;

/**
 * Runs every scenario of {@link Scenarios} with Kafka Streams' own {@link TopologyTestDriver} (one partition per
 * topic, as Kafka's driver has) and writes one JSON golden per scenario, {@code <dir>/<name>-<variant>.json}.
 *
 * <p>Usage: {@code ReferenceMain <output dir> [scenario-file-prefix ...]}; {@code make kafka-reference} runs it into
 * {@code tests/data/kafka-reference/}. {@code tests/conformance/test_kafka_reference.py} builds the same topologies
 * with the Python API, replays the steps and compares.
 *
 * <h2>JSON format</h2>
 * <pre>
 * {
 *   "kafka_version": "4.3.1",                       AppInfoParser.getVersion() of the kafka-streams jar
 *   "scenario": "wordcount", "variant": "cached",    the Python test's builder is chosen by scenario + variant
 *   "description": "...",
 *   "config": {"application.id": "...", ...},       StreamsConfig given to build(props) and to the driver
 *   "initial_wall_clock_ms": 10000,                  the driver's mock wall clock at start
 *   "topology": "Topologies:\n ...",                 topology.describe().toString()
 *   "inputs": {"topic": {"key": TYPE, "value": TYPE}},
 *   "steps": [                                       in order; outputs are read after every step
 *     {"pipe": "topic", "key": k, "value": v, "timestamp": ms, "headers": [["name", "utf-8 value"], ...]},
 *     {"advance_wall_clock_ms": ms}
 *   ],
 *   "outputs": {"topic": {"key": TYPE, "value": TYPE, "records": [
 *     {"step": i, "key": k, "window": [start, end], "value": v, "timestamp": ms, "headers": [[name, value]]}
 *   ]}},                                             "window" only for windowed keys; "step" = index of the step
 *                                                    after which the record was read
 *   "stores": {"name": {"kind": KIND, "entries": [
 *     {"key": k, "value": v}                          kind "kv":             getKeyValueStore(name).all()
 *     {"key": k, "value": v, "timestamp": ms}         kind "timestamped-kv": getTimestampedKeyValueStore(name).all()
 *     {"key": k, "value": v, "timestamp": ms, "headers": [[name, value]]}
 *                                                     kind "timestamped-kv-headers":
 *                                                     getTimestampedKeyValueStoreWithHeaders(name).all()
 *     {"key": k, "window": [start, end], "value": v}  kind "window": getWindowStore(name).all();
 *                                                     kind "session": getSessionStore(name).fetch(key) per listed key
 *   ]}},
 *   "reads": [{"store": s, "accessor": A, "call": "range a c", "result": R}],
 *                                                    only when the scenario reads through the driver: after the
 *                                                    last step, driver.get&lt;A&gt;Store(s) runs the call (see
 *                                                    StoreReadScenarios: its format and R's); accessors
 *                                                    "iq-...", "iqv2" and "iqv2-position" are interactive queries
 *                                                    (QueryScenarios)
 *   "metrics": {"dropped-records-total": n},          summed over every task
 *   "errors": {"check": {"exception": "java.lang.IllegalArgumentException", "message": "..."}}
 *                                                    only when the scenario has checks that must throw
 * }
 * </pre>
 * TYPE is "string", "long", "time-windowed:SIZE" (String key, time window of SIZE ms: end = start + SIZE) or
 * "session-windowed" (String key). Values are JSON strings/numbers or null; header values are UTF-8 text.
 */
public final class ReferenceMain {
    static final long INITIAL_WALL_CLOCK_MS = 10_000L;

    private ReferenceMain() {}

    public static void main(final String[] args) throws IOException {
        if (args.length < 1) {
            System.err.println("usage: ReferenceMain <output dir> [scenario-file-prefix ...]");
            System.exit(2);
        }
        final Path dir = Paths.get(args[0]);
        Files.createDirectories(dir);
        int written = 0;
        for (final Scenario scenario : Scenarios.all()) {
            if (args.length > 1) {
                boolean selected = false;
                for (int i = 1; i < args.length; i++) {
                    selected |= scenario.fileName().startsWith(args[i]);
                }
                if (!selected) {
                    continue;
                }
            }
            final String json;
            try {
                json = Json.write(run(scenario));
            } catch (final RuntimeException e) {
                throw new RuntimeException("scenario " + scenario.fileName() + " failed", e);
            }
            Files.write(dir.resolve(scenario.fileName()), json.getBytes(StandardCharsets.UTF_8));
            written++;
        }
        System.out.println("kafka-reference: wrote " + written + " golden(s) to " + dir);
    }

    static Serde<?> serde(final String type) {
        if (type.equals("string")) {
            return Serdes.String();
        }
        if (type.equals("long")) {
            return Serdes.Long();
        }
        if (type.startsWith("time-windowed:")) {
            return WindowedSerdes.timeWindowedSerdeFrom(String.class, Long.parseLong(type.substring(14)));
        }
        if (type.equals("session-windowed")) {
            return WindowedSerdes.sessionWindowedSerdeFrom(String.class);
        }
        throw new IllegalArgumentException("unknown type " + type);
    }

    private static Object json(final Object value) {
        if (value == null || value instanceof String || value instanceof Long || value instanceof Integer) {
            return value;
        }
        throw new IllegalArgumentException("unsupported value " + value.getClass() + ": " + value);
    }

    static List<Object> headers(final Iterable<Header> headers) {
        final List<Object> out = new ArrayList<>();
        for (final Header h : headers) {
            final List<Object> pair = new ArrayList<>();
            pair.add(h.key());
            pair.add(h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8));
            out.add(pair);
        }
        return out;
    }

    private static void putKey(final Map<String, Object> out, final Object key) {
        if (key instanceof Windowed) {
            final Windowed<?> w = (Windowed<?>) key;
            out.put("key", json(w.key()));
            out.put("window", List.of(w.window().start(), w.window().end()));
        } else {
            out.put("key", json(key));
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static Map<String, Object> run(final Scenario scenario) {
        final Properties props = new Properties();
        props.put("bootstrap.servers", "dummy:9092");
        props.putAll(scenario.config);
        final Topology topology = scenario.topology.apply(props);
        final Map<String, Object> out = new LinkedHashMap<>();
        out.put("kafka_version", AppInfoParser.getVersion());
        out.put("scenario", scenario.name);
        out.put("variant", scenario.variant);
        out.put("description", scenario.description);
        out.put("config", new LinkedHashMap<>(scenario.config));
        out.put("initial_wall_clock_ms", INITIAL_WALL_CLOCK_MS);
        out.put("topology", topology.describe().toString());
        final Map<String, Object> inputs = new LinkedHashMap<>();
        scenario.inputs.forEach((topic, types) -> inputs.put(topic, typesJson(types)));
        out.put("inputs", inputs);
        out.put("steps", scenario.steps);

        final Map<String, Object> outputs = new LinkedHashMap<>();
        final Map<String, List<Object>> records = new LinkedHashMap<>();
        try (TopologyTestDriver driver = new TopologyTestDriver(topology, props,
                Instant.ofEpochMilli(INITIAL_WALL_CLOCK_MS))) {
            final Map<String, TestInputTopic> in = new LinkedHashMap<>();
            scenario.inputs.forEach((topic, types) -> in.put(topic, driver.createInputTopic(topic,
                    serde(types[0]).serializer(), (org.apache.kafka.common.serialization.Serializer) serde(types[1]).serializer())));
            final Map<String, TestOutputTopic> outTopics = new LinkedHashMap<>();
            scenario.outputs.forEach((topic, types) -> {
                outTopics.put(topic, driver.createOutputTopic(topic, serde(types[0]).deserializer(),
                        serde(types[1]).deserializer()));
                records.put(topic, new ArrayList<>());
            });
            for (int i = 0; i < scenario.steps.size(); i++) {
                final Map<String, Object> step = scenario.steps.get(i);
                if (step.containsKey("pipe")) {
                    final RecordHeaders hs = new RecordHeaders();
                    for (final Object h : (List<Object>) step.get("headers")) {
                        final List<String> pair = (List<String>) h;
                        hs.add(pair.get(0), pair.get(1) == null ? null : pair.get(1).getBytes(StandardCharsets.UTF_8));
                    }
                    in.get((String) step.get("pipe")).pipeInput(new TestRecord(step.get("key"), step.get("value"), hs,
                            (Long) step.get("timestamp")));
                } else {
                    driver.advanceWallClockTime(java.time.Duration.ofMillis((Long) step.get("advance_wall_clock_ms")));
                }
                for (final Map.Entry<String, TestOutputTopic> e : outTopics.entrySet()) {
                    for (final Object o : e.getValue().readRecordsToList()) {
                        final TestRecord r = (TestRecord) o;
                        final Map<String, Object> rec = new LinkedHashMap<>();
                        rec.put("step", i);
                        putKey(rec, r.key());
                        rec.put("value", json(r.value()));
                        rec.put("timestamp", r.timestamp());
                        rec.put("headers", headers(r.headers()));
                        records.get(e.getKey()).add(rec);
                    }
                }
            }
            scenario.outputs.forEach((topic, types) -> {
                final Map<String, Object> o = typesJson(types);
                o.put("records", records.get(topic));
                outputs.put(topic, o);
            });
            out.put("outputs", outputs);

            final Map<String, Object> stores = new LinkedHashMap<>();
            for (final String[] spec : scenario.stores) {
                final List<Object> entries = new ArrayList<>();
                final String kind = spec[1];
                if (kind.equals("kv")) {
                    try (KeyValueIterator<Object, Object> it = driver.getKeyValueStore(spec[0]).all()) {
                        it.forEachRemaining(kv -> entries.add(entry(kv.key, kv.value, null)));
                    }
                } else if (kind.equals("timestamped-kv")) {
                    try (KeyValueIterator<Object, ValueAndTimestamp<Object>> it =
                                 driver.getTimestampedKeyValueStore(spec[0]).all()) {
                        it.forEachRemaining(kv -> entries.add(entry(kv.key, kv.value.value(), kv.value.timestamp())));
                    }
                } else if (kind.equals("timestamped-kv-headers")) {
                    try (KeyValueIterator<Object, ValueTimestampHeaders<Object>> it =
                                 driver.getTimestampedKeyValueStoreWithHeaders(spec[0]).all()) {
                        it.forEachRemaining(kv -> {
                            final Map<String, Object> e = entry(kv.key, kv.value.value(), kv.value.timestamp());
                            e.put("headers", headers(kv.value.headers()));
                            entries.add(e);
                        });
                    }
                } else if (kind.equals("window")) {
                    try (KeyValueIterator<Windowed<Object>, Object> it = driver.getWindowStore(spec[0]).all()) {
                        it.forEachRemaining(kv -> entries.add(entry(kv.key, kv.value, null)));
                    }
                } else if (kind.equals("session")) {
                    for (final String key : spec[2].split(",")) {
                        try (KeyValueIterator<Windowed<Object>, Object> it = driver.getSessionStore(spec[0]).fetch(key)) {
                            it.forEachRemaining(kv -> entries.add(entry(kv.key, kv.value, null)));
                        }
                    }
                } else {
                    throw new IllegalArgumentException("unknown store kind " + kind);
                }
                final Map<String, Object> s = new LinkedHashMap<>();
                s.put("kind", kind);
                if (kind.equals("session")) {
                    s.put("keys", List.of((Object[]) spec[2].split(",")));
                }
                s.put("entries", entries);
                stores.put(spec[0], s);
            }
            out.put("stores", stores);
            if (!scenario.reads.isEmpty()) {
                final List<Object> reads = new ArrayList<>();
                for (final String[] read : scenario.reads) {
                    final Map<String, Object> r = new LinkedHashMap<>();
                    r.put("store", read[0]);
                    r.put("accessor", read[1]);
                    r.put("call", read[2]);
                    r.put("result", read[1].startsWith("iqv2")
                            ? QueryScenarios.query(driver, read[0], read[2], read[1].equals("iqv2-position"))
                            : read[1].equals("state") ? stateStore(driver, read[0])
                            : read[1].startsWith("iq-") ? QueryScenarios.read(driver, read[0], read[1], read[2])
                            : accessorCall(accessor(driver, read[0], read[1]), read[2]));
                    reads.add(r);
                }
                out.put("reads", reads);
            }

            double dropped = 0;
            final TreeSet<String> seen = new TreeSet<>();
            for (final Map.Entry<MetricName, ? extends Metric> m : driver.metrics().entrySet()) {
                if (m.getKey().name().equals("dropped-records-total")) {
                    dropped += ((Number) m.getValue().metricValue()).doubleValue();
                    seen.add(m.getKey().group());
                }
            }
            final Map<String, Object> metrics = new LinkedHashMap<>();
            metrics.put("dropped-records-total", (long) dropped);
            out.put("metrics", metrics);
        }
        if (!scenario.errors.isEmpty()) {
            final Map<String, Object> errors = new LinkedHashMap<>();
            scenario.errors.forEach((check, call) -> {
                try {
                    call.run();
                } catch (final RuntimeException e) {
                    final Map<String, Object> error = new LinkedHashMap<>();
                    error.put("exception", e.getClass().getName());
                    error.put("message", e.getMessage());
                    errors.put(check, error);
                    return;
                }
                throw new IllegalStateException("check " + check + " of " + scenario.fileName() + " did not throw");
            });
            out.put("errors", errors);
        }
        return out;
    }

    /** {@code call} on the store an accessor answered; {"error": "no store"} when it answered null (a store of
     *  another type). */
    private static Object accessorCall(final Object store, final String call) {
        if (store == null) {
            final Map<String, Object> none = new LinkedHashMap<>();
            none.put("error", "no store");
            return none;
        }
        return StoreReadScenarios.call(store, call);
    }

    /** {@code getStateStore(name)}: "custom store" for a store it gives, {"error": "illegal argument: <message>"}
     *  for a built-in store it refuses (its message names the accessor to use). */
    private static Object stateStore(final TopologyTestDriver driver, final String name) {
        try {
            return driver.getStateStore(name) == null ? null : "custom store";
        } catch (final IllegalArgumentException e) {
            final Map<String, Object> error = new LinkedHashMap<>();
            error.put("error", "illegal argument: " + e.getMessage());
            return error;
        }
    }

    /** The driver's store accessor named {@code accessor} (see {@link Scenario#read}). */
    private static Object accessor(final TopologyTestDriver driver, final String store, final String accessor) {
        switch (accessor) {
            case "kv": return driver.getKeyValueStore(store);
            case "timestamped-kv": return driver.getTimestampedKeyValueStore(store);
            case "timestamped-kv-headers": return driver.getTimestampedKeyValueStoreWithHeaders(store);
            case "window": return driver.getWindowStore(store);
            case "timestamped-window": return driver.getTimestampedWindowStore(store);
            case "timestamped-window-headers": return driver.getTimestampedWindowStoreWithHeaders(store);
            case "session": return driver.getSessionStore(store);
            case "session-headers": return driver.getSessionStoreWithHeaders(store);
            case "versioned": return driver.getVersionedKeyValueStore(store);
            default: throw new IllegalArgumentException("unknown accessor " + accessor);
        }
    }

    private static Map<String, Object> entry(final Object key, final Object value, final Long timestamp) {
        final Map<String, Object> e = new LinkedHashMap<>();
        putKey(e, key);
        e.put("value", json(value));
        if (timestamp != null) {
            e.put("timestamp", timestamp);
        }
        return e;
    }

    private static Map<String, Object> typesJson(final String[] types) {
        final Map<String, Object> t = new LinkedHashMap<>();
        t.put("key", types[0]);
        t.put("value", types[1]);
        return t;
    }
}
