import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.zip.CRC32;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * The README word count in Kafka Streams' own TopologyTestDriver (kafka-streams-test-utils), the Java baseline of
 * bench/driver_throughput.py.
 *
 * <pre>
 * stream("sentences") -> flatMapValues(split on whitespace) -> selectKey(word)
 *   -> groupByKey(Grouped.as("by-word")) -> count(Materialized.as("word-counts"))
 *   -> toStream().to("word-counts-out", Long serde)
 * </pre>
 *
 * The sentences come from a file, one per line (UTF-8), written by bench/driver_throughput.py; sentence i is piped
 * with key "line-i" and timestamp 0, one {@code pipeInput} per sentence, as the Python script pipes them into our
 * driver. Kafka's driver has one partition per topic (one task per subtopology) and commits after every record it
 * processes, which flushes the record cache and the store; the cache is Kafka's default (statestore.cache.max.bytes
 * 10 MiB) unless {@code cache.max.bytes} is given. The count store is the DSL's default, a RocksDB store in the
 * driver's state directory (flushed at every commit), or with {@code store=in-memory} Kafka's in-memory store
 * ({@code Stores.inMemoryKeyValueStore}), what our in-process driver keeps even for "persistent" stores.
 *
 * <p>JVM warm-up: first an unmeasured pass over the first {@code warmup.lines} sentences in a driver of its own
 * (the JIT compiles the hot path), then the measured pass over every sentence in a fresh driver. Only the
 * {@code pipeInput} loop is timed (driver construction and the read-back are not), as the Python script times ours.
 *
 * <p>Arguments, key=value: input (required), warmup.lines [0], cache.max.bytes [Kafka's default],
 * store [rocksdb; or in-memory], state.dir [Kafka's default, a kafka-streams directory under java.io.tmpdir].
 *
 * <p>Last line on stdout: {@code RESULT sentences=.. words=.. elapsed_s=.. warmup_s=.. output_records=..
 * distinct=.. total=.. checksum=..}, where the counts are the store's final counts (checked equal to the last value
 * per key of the output topic), total is their sum and checksum = sum over words of CRC32(UTF-8 "word\tcount"),
 * unsigned, which bench/driver_throughput.py computes the same way. Exit code 1 if the store and the output topic
 * disagree or the output does not hold one count update per word.
 */
public final class DriverWordCount {

    private DriverWordCount() {
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> args = new HashMap<>();
        for (String arg : argv) {
            int eq = arg.indexOf('=');
            if (eq <= 0) {
                System.err.println("DriverWordCount: arguments are key=value, got " + arg);
                System.exit(64);
            }
            args.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        if (!args.containsKey("input")) {
            System.err.println("DriverWordCount: input=FILE (one sentence per line) is required");
            System.exit(64);
        }
        List<String> lines = Files.readAllLines(Paths.get(args.get("input")), StandardCharsets.UTF_8);
        int warmupLines = Math.min(lines.size(), Integer.parseInt(args.getOrDefault("warmup.lines", "0")));
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "bench-wc");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "dummy:9092");
        if (args.containsKey("state.dir")) {
            props.put(StreamsConfig.STATE_DIR_CONFIG, args.get("state.dir"));
        }
        if (args.containsKey("cache.max.bytes")) {
            props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, Long.parseLong(args.get("cache.max.bytes")));
        }
        String storeKind = args.getOrDefault("store", "rocksdb");
        if (!storeKind.equals("rocksdb") && !storeKind.equals("in-memory")) {
            System.err.println("DriverWordCount: store is rocksdb or in-memory, got " + storeKind);
            System.exit(64);
        }
        boolean inMemory = storeKind.equals("in-memory");
        long words = 0;
        for (String line : lines) {
            words += words(line).size();
        }

        double warmupS = 0.0;
        if (warmupLines > 0) {
            try (TopologyTestDriver driver = new TopologyTestDriver(topology(inMemory), props)) {
                warmupS = pipe(driver, lines.subList(0, warmupLines));
            }
        }
        try (TopologyTestDriver driver = new TopologyTestDriver(topology(inMemory), props)) {
            double elapsedS = pipe(driver, lines);
            TestOutputTopic<String, Long> out = driver.createOutputTopic("word-counts-out",
                    new StringDeserializer(), new LongDeserializer());
            long outputRecords = out.getQueueSize();
            Map<String, Long> fromTopic = out.readKeyValuesToMap();
            Map<String, Long> fromStore = new HashMap<>();
            KeyValueStore<String, Long> store = driver.getKeyValueStore("word-counts");
            try (KeyValueIterator<String, Long> it = store.all()) {
                while (it.hasNext()) {
                    KeyValue<String, Long> kv = it.next();
                    fromStore.put(kv.key, kv.value);
                }
            }
            int code = 0;
            if (!fromStore.equals(fromTopic)) {
                System.err.println("DriverWordCount: the store's counts differ from the output topic's last values");
                code = 1;
            }
            if (outputRecords != words) {
                System.err.printf("DriverWordCount: expected one count update per word (%d), got %d output records%n",
                        words, outputRecords);
                code = 1;
            }
            long total = 0;
            long checksum = 0;
            CRC32 crc = new CRC32();
            for (Map.Entry<String, Long> e : fromStore.entrySet()) {
                total += e.getValue();
                crc.reset();
                crc.update((e.getKey() + "\t" + e.getValue()).getBytes(StandardCharsets.UTF_8));
                checksum += crc.getValue();
            }
            System.out.printf(Locale.ROOT, "RESULT sentences=%d words=%d elapsed_s=%.6f warmup_s=%.6f "
                            + "warmup_sentences=%d output_records=%d distinct=%d total=%d checksum=%d%n",
                    lines.size(), words, elapsedS, warmupS, warmupLines, outputRecords, fromStore.size(), total,
                    checksum);
            System.exit(code);
        }
    }

    static Topology topology(boolean inMemory) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream("sentences", Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(DriverWordCount::words)
                .selectKey((key, word) -> word)
                .groupByKey(Grouped.with("by-word", Serdes.String(), Serdes.String()))
                .count(inMemory
                        ? Materialized.<String, Long>as(Stores.inMemoryKeyValueStore("word-counts"))
                        : Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("word-counts"))
                .toStream()
                .to("word-counts-out", Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build();
    }

    /** Pipes sentence i as (line-i, sentence) at timestamp 0; returns the seconds the loop took. */
    static double pipe(TopologyTestDriver driver, List<String> lines) {
        TestInputTopic<String, String> topic = driver.createInputTopic("sentences", new StringSerializer(),
                new StringSerializer(), Instant.ofEpochMilli(0), Duration.ZERO);
        long start = System.nanoTime();
        for (int i = 0; i < lines.size(); i++) {
            topic.pipeInput("line-" + i, lines.get(i));
        }
        return (System.nanoTime() - start) / 1e9;
    }

    /** Python's {@code sentence.split()} for ASCII text: split on runs of whitespace, no empty words. */
    static List<String> words(String sentence) {
        String trimmed = sentence.strip();
        return trimmed.isEmpty() ? List.of() : Arrays.asList(trimmed.split("\\s+"));
    }
}
