import java.nio.file.Files;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The README word count on Kafka Streams (Java), the baseline of bench/kafka_end_to_end.py.
 *
 * <pre>
 * stream(input) -> flatMapValues(lowercase, split on whitespace) -> selectKey(word)
 *   -> groupByKey(Grouped.as("by-word")) -> count(Materialized.as("word-counts"))
 *   -> toStream().to(output, Long serde)
 * </pre>
 *
 * Runs until its input is fully processed: an AdminClient polls the application's consumer group until its
 * committed offsets reach the end offsets of the input topic and then of the "by-word" repartition topic (with
 * at-least-once, Kafka Streams flushes the stores and the producer before committing, so by then every count
 * is in the output topic). Then it prints the elapsed time and exits (0; 2 on timeout, 1 if the application
 * failed). The output topic must exist (the broker does not auto-create topics).
 *
 * Arguments, key=value (defaults in brackets): bootstrap (required), input [sentences],
 * output [word-counts-out], application.id [kafka-streams-wordcount], state.dir [a new temp dir],
 * threads [1], commit.interval.ms [100], cache.max.bytes [Kafka Streams' default, 10485760],
 * timeout.s [600], poll.ms [100], processing.guarantee [at_least_once; exactly_once_v2 commits the offsets in
 * its transactions, so the end is detected the same way].
 *
 * Last line on stdout: RESULT elapsed_s=... running_s=... (from start() / from the first RUNNING state).
 */
public final class WordCount {

    private WordCount() {
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> args = new HashMap<>();
        for (String arg : argv) {
            int eq = arg.indexOf('=');
            if (eq <= 0) {
                System.err.println("WordCount: arguments are key=value, got " + arg);
                System.exit(64);
            }
            args.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        String bootstrap = args.get("bootstrap");
        if (bootstrap == null) {
            System.err.println("WordCount: bootstrap=host:port is required");
            System.exit(64);
        }
        String input = args.getOrDefault("input", "sentences");
        String output = args.getOrDefault("output", "word-counts-out");
        String appId = args.getOrDefault("application.id", "kafka-streams-wordcount");
        String stateDir = args.containsKey("state.dir") ? args.get("state.dir")
                : Files.createTempDirectory("kafka-streams-wordcount").toString();
        int threads = Integer.parseInt(args.getOrDefault("threads", "1"));
        long commitMs = Long.parseLong(args.getOrDefault("commit.interval.ms", "100"));
        long timeoutMs = (long) (Double.parseDouble(args.getOrDefault("timeout.s", "600")) * 1000);
        long pollMs = Long.parseLong(args.getOrDefault("poll.ms", "100"));

        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, commitMs);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, args.getOrDefault("processing.guarantee",
                StreamsConfig.AT_LEAST_ONCE));
        if (args.containsKey("cache.max.bytes")) {
            props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, Long.parseLong(args.get("cache.max.bytes")));
        }
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);

        StreamsBuilder builder = new StreamsBuilder();
        builder.<String, String>stream(input)
                .flatMapValues(WordCount::words)
                .selectKey((key, word) -> word)
                .groupByKey(Grouped.as("by-word"))
                .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("word-counts"))
                .toStream()
                .to(output, Produced.with(Serdes.String(), Serdes.Long()));

        String repartition = appId + "-by-word-repartition";
        Properties adminProps = new Properties();
        adminProps.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        adminProps.put(AdminClientConfig.CLIENT_ID_CONFIG, appId + "-progress");

        AtomicReference<Throwable> failure = new AtomicReference<>();
        long[] runningAt = {0L};
        int code;
        try (Admin admin = Admin.create(adminProps);
             KafkaStreams streams = new KafkaStreams(builder.build(), props)) {
            streams.setUncaughtExceptionHandler(error -> {
                failure.compareAndSet(null, error);
                return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
            });
            streams.setStateListener((now, before) -> {
                if (now == KafkaStreams.State.RUNNING && runningAt[0] == 0L) {
                    runningAt[0] = System.nanoTime();
                }
            });
            long start = System.nanoTime();
            streams.start();
            long deadline = start + timeoutMs * 1_000_000L;
            long lastLog = start;
            code = 2;
            while (System.nanoTime() < deadline) {
                if (failure.get() != null || streams.state() == KafkaStreams.State.ERROR
                        || streams.state() == KafkaStreams.State.NOT_RUNNING) {
                    code = 1;
                    break;
                }
                long inputLag = lag(admin, appId, input);
                long repartitionLag = inputLag == 0 ? lag(admin, appId, repartition) : -1;
                if (inputLag == 0 && repartitionLag == 0) {
                    code = 0;
                    break;
                }
                if (System.nanoTime() - lastLog > 5_000_000_000L) {
                    lastLog = System.nanoTime();
                    System.err.printf("WordCount: %.1fs, state %s, input lag %d, repartition lag %s%n",
                            (lastLog - start) / 1e9, streams.state(), inputLag,
                            repartitionLag < 0 ? "?" : Long.toString(repartitionLag));
                }
                Thread.sleep(pollMs);
            }
            long end = System.nanoTime();
            double elapsed = (end - start) / 1e9;
            double running = runningAt[0] == 0L ? elapsed : (end - runningAt[0]) / 1e9;
            if (code == 0) {
                System.out.printf("WordCount: input of %s fully processed in %.3f s (%.3f s after RUNNING)%n",
                        input, elapsed, running);
                System.out.printf(Locale.ROOT, "RESULT elapsed_s=%.3f running_s=%.3f%n", elapsed, running);
            } else if (code == 1) {
                System.err.println("WordCount: the application failed (state " + streams.state() + "): "
                        + failure.get());
                if (failure.get() != null) {
                    failure.get().printStackTrace();
                }
            } else {
                System.err.printf("WordCount: input not fully processed within %.0f s%n", timeoutMs / 1e3);
            }
            streams.close(Duration.ofSeconds(30));
            streams.cleanUp();
        }
        System.exit(code);
    }

    /** Python's {@code sentence.lower().split()}: lowercased, split on runs of whitespace, no empty words. */
    static List<String> words(String sentence) {
        String trimmed = sentence.toLowerCase(Locale.ROOT).strip();
        return trimmed.isEmpty() ? List.of() : Arrays.asList(trimmed.split("\\s+"));
    }

    /** Records of {@code topic} beyond the offsets the group committed (no commit yet counts as offset 0). */
    private static long lag(Admin admin, String group, String topic) throws Exception {
        Map<String, TopicDescription> described;
        try {
            described = admin.describeTopics(List.of(topic)).allTopicNames().get();
        } catch (java.util.concurrent.ExecutionException e) {
            return Long.MAX_VALUE; // the repartition topic is not created yet
        }
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        described.get(topic).partitions().forEach(p -> latest.put(new TopicPartition(topic, p.partition()),
                OffsetSpec.latest()));
        Map<TopicPartition, ListOffsetsResultInfo> ends = admin.listOffsets(latest).all().get();
        Map<TopicPartition, OffsetAndMetadata> committed =
                admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
        long total = 0;
        for (Map.Entry<TopicPartition, ListOffsetsResultInfo> e : ends.entrySet()) {
            OffsetAndMetadata done = committed.get(e.getKey());
            total += e.getValue().offset() - (done == null ? 0 : done.offset());
        }
        return total;
    }
}
