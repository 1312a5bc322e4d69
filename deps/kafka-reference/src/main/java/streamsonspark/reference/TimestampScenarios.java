package streamsonspark.reference;

import java.util.ArrayList;
import java.util.List;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.FailOnInvalidTimestamp;
import org.apache.kafka.streams.processor.TimestampExtractor;
import org.apache.kafka.streams.processor.UsePartitionTimeOnInvalidTimestamp;
import org.apache.kafka.streams.test.TestRecord;

/**
 * Issue 26, items 3 and 4: timestamp extractors (a source's own extractor, given the partition time, a negative
 * extracted timestamp dropping the record; Kafka's {@code LogAndSkipOnInvalidTimestamp} by class name as
 * {@code default.timestamp.extractor} for the other source) and {@code max.task.idle.ms} (a task with two input
 * partitions waiting for the empty one, until the wall clock passes its deadline). Every record has the key "k"
 * (one task at any partition count). Mirrored in tests/conformance/test_kafka_reference.py (timestamp_extractor,
 * max_task_idle).
 */
final class TimestampScenarios {
    private TimestampScenarios() {}

    static final Serde<String> S = Serdes.String();
    static final Serde<Long> L = Serdes.Long();

    static List<Scenario> all() {
        final List<Scenario> all = new ArrayList<>();
        all.add(timestampExtractor());
        for (final String idle : new String[] {"100", "0", "-1"}) {
            all.add(maxTaskIdle(idle));
        }
        all.add(maxTaskIdleRepartition());
        all.add(maxTaskIdleThree());
        return all;
    }

    /** "neg": -5 (dropped); "pt": the partition time; "t=N": N; anything else: the record's timestamp. */
    static final class ValueTime implements TimestampExtractor {
        @Override
        public long extract(final ConsumerRecord<Object, Object> record, final long partitionTime) {
            final String value = (String) record.value();
            if (value.equals("neg")) {
                return -5L;
            }
            if (value.equals("pt")) {
                return partitionTime;
            }
            if (value.startsWith("t=")) {
                return Long.parseLong(value.substring(2));
            }
            return record.timestamp();
        }
    }

    static Scenario timestampExtractor() {
        return new Scenario("timestamp-extractor", "consumed",
                "a source with its own extractor (from the value, the partition time, or negative: the record is "
                        + "dropped and counted), another with default.timestamp.extractor by Kafka's class name; "
                        + "a count downstream carries the extracted times",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KStream<String, String> events =
                            builder.stream("events", Consumed.with(S, S).withTimestampExtractor(new ValueTime()));
                    events.merge(builder.stream("plain", Consumed.with(S, S)))
                            .to("stamped", Produced.with(S, S));
                    events.groupByKey(Grouped.with(S, S))
                            .count(Scenarios.kv("counts", L, false))
                            .toStream()
                            .to("counts-out", Produced.with(S, L));
                    return builder.build(props);
                })
                .config("default.timestamp.extractor",
                        "org.apache.kafka.streams.processor.LogAndSkipOnInvalidTimestamp")
                .input("events", "string", "string")
                .input("plain", "string", "string")
                .output("stamped", "string", "string")
                .output("counts-out", "string", "long")
                .store("counts", "timestamped-kv")
                .pipe("events", "k", "pt", 100L)
                .pipe("events", "k", "t=50", 100L)
                .pipe("events", "k", "pt", 100L)
                .pipe("events", "k", "neg", 100L)
                .pipe("plain", "k", "p", 7L)
                .pipe("events", "k", "t=20", 100L)
                .pipe("events", "k", "pt", 100L)
                .pipe("events", "k", "t=80", 100L)
                .pipe("events", "k", "pt", 100L)
                .pipe("events", "k", "as-written", 60L)
                .pipe("events", "k", "neg", 100L)
                .error("extractor-raises", () -> pipeThrough("boom"))
                .error("extractor-raises-null-value", () -> pipeThrough(null))
                .error("fail-on-invalid-timestamp", () -> new FailOnInvalidTimestamp().extract(invalid(), 7L))
                .error("partition-time-unknown",
                        () -> new UsePartitionTimeOnInvalidTimestamp().extract(invalid(), -1L));
    }

    /** A record written with a negative timestamp, as Kafka's RecordDeserializer hands it to the extractor. */
    static ConsumerRecord<Object, Object> invalid() {
        final RecordHeaders headers = new RecordHeaders();
        headers.add("h", new byte[] {97, -1});
        return new ConsumerRecord<>("events", 0, 3L, -1L, TimestampType.CREATE_TIME, 1, 2, "k", "vv", headers,
                Optional.empty());
    }

    /** Pipes ("k", value) with the header h=a1 through a source whose extractor throws. */
    static void pipeThrough(final String value) {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream("events", Consumed.with(S, S).withTimestampExtractor((record, partitionTime) -> {
            throw new IllegalStateException("no time in " + record.value());
        })).to("out", Produced.with(S, S));
        final Properties props = new Properties();
        props.put("application.id", "extractor-raises");
        props.put("bootstrap.servers", "dummy:9092");
        try (TopologyTestDriver driver = new TopologyTestDriver(builder.build(props), props)) {
            final RecordHeaders headers = new RecordHeaders();
            headers.add("h", "a1".getBytes(StandardCharsets.UTF_8));
            driver.createInputTopic("events", S.serializer(), S.serializer())
                    .pipeInput(new TestRecord<>("k", value, headers, 5L));
        }
    }

    static Scenario maxTaskIdleThree() {
        return new Scenario("max-task-idle-three", "idle-100",
                "max.task.idle.ms=100 with three input partitions, two of them empty: Kafka visits them in its "
                        + "HashMap's order and stops at the first one still waited for, so the other's idle time "
                        + "starts only once that one's has passed",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.stream("a", Consumed.with(S, S))
                            .merge(builder.stream("b", Consumed.with(S, S)))
                            .merge(builder.stream("c", Consumed.with(S, S)))
                            .to("merged", Produced.with(S, S));
                    return builder.build(props);
                })
                .config("max.task.idle.ms", "100")
                .input("a", "string", "string")
                .input("b", "string", "string")
                .input("c", "string", "string")
                .output("merged", "string", "string")
                .pipe("a", "k", "a10", 10L)
                .advanceWallClock(60L)
                .advanceWallClock(50L)
                .advanceWallClock(60L)
                .advanceWallClock(50L)
                .pipe("b", "k", "b20", 20L)
                .advanceWallClock(60L)
                .pipe("c", "k", "c30", 30L)
                .advanceWallClock(50L)
                .advanceWallClock(60L)
                .pipe("a", "k", "a40", 40L)
                .advanceWallClock(110L)
                .advanceWallClock(110L);
    }

    static Scenario maxTaskIdleRepartition() {
        return new Scenario("max-task-idle-repartition", "idle-100",
                "max.task.idle.ms=100 with a repartition topic: Kafka's driver runs both subtopologies in one task, "
                        + "whose input partitions include the repartition topic's, so a record waits for it too",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.stream("words", Consumed.with(S, S))
                            .groupBy((k, v) -> v, Grouped.with("by-word", S, S))
                            .count(Scenarios.kv("word-counts", L, false))
                            .toStream()
                            .to("word-counts-out", Produced.with(S, L));
                    return builder.build(props);
                })
                .config("max.task.idle.ms", "100")
                .input("words", "string", "string")
                .output("word-counts-out", "string", "long")
                .store("word-counts", "timestamped-kv")
                .pipe("words", "k", "a", 10L)
                .advanceWallClock(100L)
                .pipe("words", "k", "b", 20L)
                .pipe("words", "k", "a", 30L)
                .advanceWallClock(50L)
                .advanceWallClock(50L)
                .advanceWallClock(100L);
    }

    static Scenario maxTaskIdle(final String idle) {
        final String variant = idle.equals("-1") ? "disabled" : "idle-" + idle;
        return new Scenario("max-task-idle", variant,
                "max.task.idle.ms=" + idle + ": two streams merged (one task, two input partitions); records "
                        + "piped to one wait for the other while it is empty, until the wall clock passes the idle "
                        + "time; then they go in timestamp order",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.stream("left", Consumed.with(S, S))
                            .merge(builder.stream("right", Consumed.with(S, S)))
                            .to("merged", Produced.with(S, S));
                    return builder.build(props);
                })
                .config("max.task.idle.ms", idle)
                .input("left", "string", "string")
                .input("right", "string", "string")
                .output("merged", "string", "string")
                .pipe("left", "k", "l10", 10L)
                .pipe("left", "k", "l30", 30L)
                .pipe("right", "k", "r20", 20L)
                .advanceWallClock(50L)
                .advanceWallClock(60L)
                .pipe("right", "k", "r5", 5L)
                .pipe("left", "k", "l40", 40L)
                .pipe("left", "k", "l50", 50L)
                .pipe("right", "k", "r45", 45L)
                .advanceWallClock(100L);
    }
}
