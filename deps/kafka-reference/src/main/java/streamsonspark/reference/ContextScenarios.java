package streamsonspark.reference;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProductionExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * The processor context as Kafka's everywhere (issue 26, item 8): what a global store's processor reads of
 * {@code context.recordMetadata()}, what a versioned store answers a processor that reaches it ({@code put}'s
 * valid-to code, {@code get(key, asOf)} and {@code delete}'s {@code VersionedRecord}s, {@code validTo} included), and
 * the {@code ProducerRecord} a production exception handler receives (topic, partition, key, value, timestamp,
 * headers). Mirrored in tests/conformance/test_kafka_reference.py (processor_context).
 */
final class ContextScenarios {
    private ContextScenarios() {}

    static final Serde<String> S = Serdes.String();

    static List<Scenario> all() {
        return List.of(globalMetadata(), versioned(), productionHandler());
    }

    /** "topic/partition/offset" of the record being processed, or "none". */
    static String where(final ProcessorContext<?, ?> context) {
        final Optional<RecordMetadata> m = context.recordMetadata();
        return m.map(r -> r.topic() + "/" + r.partition() + "/" + r.offset()).orElse("none");
    }

    /** A global store's processor: puts each record's value with where it came from. */
    static final class GlobalRecorder implements Processor<String, String, Void, Void> {
        private ProcessorContext<Void, Void> context;
        private KeyValueStore<String, String> store;

        @Override
        public void init(final ProcessorContext<Void, Void> context) {
            this.context = context;
            this.store = context.getStateStore("meta-store");
        }

        @Override
        public void process(final Record<String, String> record) {
            store.put(record.key(), record.value() + "@" + where(context));
        }
    }

    /** Reads the global store for each record's key; forwards what it holds and where the record came from. */
    static final class GlobalLookup implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> context;
        private KeyValueStore<String, String> store;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
            this.store = context.getStateStore("meta-store");
        }

        @Override
        public void process(final Record<String, String> record) {
            context.forward(record.withValue(Scenarios.n(store.get(record.key())) + " seen at " + where(context)));
        }
    }

    /**
     * A global store fed by a processor (addGlobalStore) that records {@code recordMetadata()}: topic "globals",
     * partition, offset. Every key (a, b, y) lands on partition 0 of 4 by murmur2, so at 1 and 4 partitions the
     * metadata is Kafka's driver's.
     */
    static Scenario globalMetadata() {
        return new Scenario("processor-context", "global-metadata",
                "A global store's processor reads recordMetadata() (topic, partition, offset) of the records it loads",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    // logging left enabled: Kafka disables it for a global store (no error)
                    builder.addGlobalStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("meta-store"),
                            S, S), "globals", Consumed.with(S, S), GlobalRecorder::new);
                    builder.stream("lookups", Consumed.with(S, S)).process(GlobalLookup::new)
                            .to("lookups-out", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("globals", "string", "string")
                .input("lookups", "string", "string")
                .output("lookups-out", "string", "string")
                .store("meta-store", "kv")
                .pipe("globals", "a", "g1", 5L)
                .pipe("globals", "b", "g2", 6L, "h", "1")
                .pipe("lookups", "a", "l1", 7L)
                .pipe("globals", "a", "g3", 4L)
                .pipe("lookups", "a", "l2", 8L)
                .pipe("lookups", "b", "l3", 9L)
                .pipe("globals", "y", "g4", 10L)
                .pipe("lookups", "y", "l4", 11L)
                .pipe("lookups", "b", "l5", 12L);
    }

    /**
     * A versioned store (history retention 20 ms) connected to the store-read interpreter: put returns the new
     * version's valid-to time (-1: it is the latest; Long.MIN_VALUE: older than the history retention, not put), get
     * and get as of a time and delete answer VersionedRecords as Kafka's store does through a processor.
     */
    static Scenario versioned() {
        final Scenario s = new Scenario("processor-context", "versioned",
                "A processor's versioned store: put's valid-to codes, get, get(key, asOf) and delete as Kafka answers "
                        + "them, within and beyond the history retention",
                props -> {
                    final Topology topology = new Topology();
                    topology.addSource("ops-source", S.deserializer(), S.deserializer(), "ops");
                    topology.addProcessor("interpreter", StoreReadScenarios.Interpreter::new, "ops-source");
                    topology.addStateStore(Stores.versionedKeyValueStoreBuilder(
                            Stores.persistentVersionedKeyValueStore("versions", Duration.ofMillis(20)), S, S),
                            "interpreter");
                    topology.addSink("results-sink", "results", S.serializer(), S.serializer(), "interpreter");
                    return topology;
                })
                .input("ops", "string", "string")
                .output("results", "string", "string");
        long ts = 0;
        for (final String op : new String[] {
            "put a v10 10", "put a v20 20", "put a v15 15", "put a v5 5", "put a v15b 15", "get a", "get a 17",
            "get a 12", "get a 20", "get a 4", "get zz", "get zz 10", "delete a 30", "get a", "get a 25",
            "get a 30", "put a v50 50", "put a v8 8", "get a 12", "get a 35", "get a 45", "delete a 10",
            "delete b 40", "get b", "put b w45 45", "put b w42 42", "get b 44", "delete b 47", "get b 46", "get b"}) {
            s.pipe("ops", "g", "versions " + op, ts++);
        }
        for (final String read : new String[] {"get a", "get a 40", "get a 30", "get b", "get b 44", "get b 50"}) {
            s.read("versions", "versioned", read);
        }
        return s;
    }

    /** A String serializer that refuses values starting with "bad". */
    static final class Picky implements Serializer<String> {
        @Override
        public byte[] serialize(final String topic, final String data) {
            if (data != null && data.startsWith("bad")) {
                throw new SerializationException("cannot serialize " + data);
            }
            return data == null ? null : data.getBytes(StandardCharsets.UTF_8);
        }
    }

    static final Serde<String> PICKY = Serdes.serdeFrom(new Picky(), new StringDeserializer());

    /**
     * A production exception handler that resumes and writes what it was handed, Kafka's {@code ProducerRecord}
     * (topic, partition, key, value, timestamp, headers) with the origin and the exception's message, to
     * "handler-saw" (as a dead letter queue record, keyed by the record's key).
     */
    public static final class RecordingProductionHandler implements ProductionExceptionHandler {
        @Override
        public void configure(final Map<String, ?> configs) {}

        @Override
        public Response handleSerializationError(final ErrorHandlerContext context,
                                                 final ProducerRecord record,
                                                 final Exception exception,
                                                 final SerializationExceptionOrigin origin) {
            final List<String> headers = new ArrayList<>();
            for (final Header h : record.headers()) {
                headers.add(h.key() + "=" + (h.value() == null ? "null" : new String(h.value(),
                        StandardCharsets.UTF_8)));
            }
            final String seen = "topic=" + record.topic() + " partition=" + record.partition() + " key="
                    + record.key() + " value=" + record.value() + " timestamp=" + record.timestamp() + " headers="
                    + headers + " origin=" + origin + " error=" + exception.getMessage();
            final byte[] key = record.key() == null ? null
                    : String.valueOf(record.key()).getBytes(StandardCharsets.UTF_8);
            return Response.resume(List.of(new ProducerRecord<>("handler-saw", null, record.timestamp(), key,
                    seen.getBytes(StandardCharsets.UTF_8))));
        }
    }

    /** Every record to partition 0. */
    static final class ToZero implements org.apache.kafka.streams.processor.StreamPartitioner<String, String> {
        @Override
        public Optional<Set<Integer>> partitions(final String topic, final String key, final String value,
                                                 final int numPartitions) {
            return Optional.of(Set.of(0));
        }
    }

    /**
     * Records that a sink cannot serialize (a key or a value starting with "bad"), sent with the default partitioning
     * (the handler's record has no partition) and by a stream partitioner (the partition it picked): the handler
     * receives Kafka's ProducerRecord and resumes (each counted dropped).
     */
    static Scenario productionHandler() {
        return new Scenario("processor-context", "production-handler",
                "A production exception handler receives Kafka's ProducerRecord (topic, partition, key, value, "
                        + "timestamp, headers) for records a sink cannot serialize",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final var events = builder.stream("events", Consumed.with(S, S));
                    events.to("out", Produced.with(PICKY, PICKY));
                    events.to("out-pinned", Produced.with(PICKY, PICKY).withStreamPartitioner(new ToZero()));
                    return builder.build(props);
                })
                .config("production.exception.handler",
                        "streamsonspark.reference.ContextScenarios$RecordingProductionHandler")
                .input("events", "string", "string")
                .output("out", "string", "string")
                .output("out-pinned", "string", "string")
                .output("handler-saw", "string", "string")
                .pipe("events", "a", "fine", 1L, "h", "1")
                .pipe("events", "b", "bad1", 2L, "h", "2", "i", "x")
                .pipe("events", "badkey", "ok", 3L)
                .pipe("events", "c", "bad2", 4L)
                .pipe("events", "a", "fine2", 5L);
    }
}
