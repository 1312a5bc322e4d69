package streamsonspark.reference;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Function;

import org.apache.kafka.streams.Topology;

/**
 * One scenario: a topology (built from the scenario's config, so {@code topology.optimization} applies), the input
 * topics with their types, the steps (records piped, wall clock advanced), the output topics read after every step
 * and the stores dumped at the end. Types: "string", "long", "time-windowed:SIZE" (a String key in a time window of
 * SIZE ms), "session-windowed" (a String key in a session window).
 */
final class Scenario {
    final String name;
    final String variant;
    final String description;
    final Map<String, String> config = new LinkedHashMap<>();
    final Function<Properties, Topology> topology;
    final Map<String, String[]> inputs = new LinkedHashMap<>();
    final Map<String, String[]> outputs = new LinkedHashMap<>();
    final List<Map<String, Object>> steps = new ArrayList<>();
    final List<String[]> stores = new ArrayList<>();   // {name, kind, keys (comma-separated, session stores)}
    final List<String[]> reads = new ArrayList<>();   // {store, accessor, call}: driver store reads at the end
    final Map<String, Runnable> errors = new LinkedHashMap<>();   // checks that must throw: name -> what throws

    Scenario(final String name, final String variant, final String description,
             final Function<Properties, Topology> topology) {
        this.name = name;
        this.variant = variant;
        this.description = description;
        this.topology = topology;
        config.put("application.id", name + "-" + variant);
    }

    String fileName() {
        return name + "-" + variant + ".json";
    }

    Scenario config(final String key, final String value) {
        config.put(key, value);
        return this;
    }

    Scenario input(final String topic, final String keyType, final String valueType) {
        inputs.put(topic, new String[] {keyType, valueType});
        return this;
    }

    Scenario output(final String topic, final String keyType, final String valueType) {
        outputs.put(topic, new String[] {keyType, valueType});
        return this;
    }

    /** key-value: "kv" (getKeyValueStore), "timestamped-kv" (getTimestampedKeyValueStore), "window", "session". */
    Scenario store(final String storeName, final String kind, final String... keys) {
        stores.add(new String[] {storeName, kind, String.join(",", keys)});
        return this;
    }

    /** A read through the driver after the last step: {@code accessor} names the driver's method ("kv",
     *  "timestamped-kv", "window", "timestamped-window", "session", "versioned"), {@code call} is
     *  {@code "<method> <arg> ..."} as {@link StoreReadScenarios#call} runs it; "iq-..." and "iqv2" are interactive
     *  queries ({@link QueryScenarios}). */
    Scenario read(final String storeName, final String accessor, final String call) {
        reads.add(new String[] {storeName, accessor, call});
        return this;
    }

    /** Pipes one record; {@code headers} alternate name, value (UTF-8). */
    Scenario pipe(final String topic, final Object key, final Object value, final long timestamp,
                  final String... headers) {
        if (!inputs.containsKey(topic)) {
            throw new IllegalArgumentException("undeclared input " + topic + " in " + name);
        }
        final Map<String, Object> step = new LinkedHashMap<>();
        step.put("pipe", topic);
        step.put("key", key);
        step.put("value", value);
        step.put("timestamp", timestamp);
        final List<Object> hs = new ArrayList<>();
        for (int i = 0; i < headers.length; i += 2) {
            hs.add(Arrays.asList(headers[i], headers[i + 1]));   // a null header value allowed
        }
        step.put("headers", hs);
        steps.add(step);
        return this;
    }

    /** A call that must throw (a DSL argument check, a build): the golden records the exception's class and text. */
    Scenario error(final String checkName, final Runnable call) {
        errors.put(checkName, call);
        return this;
    }

    Scenario advanceWallClock(final long ms) {
        final Map<String, Object> step = new LinkedHashMap<>();
        step.put("advance_wall_clock_ms", ms);
        steps.add(step);
        return this;
    }
}
