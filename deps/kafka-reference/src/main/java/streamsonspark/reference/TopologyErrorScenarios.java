package streamsonspark.reference;

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.function.Supplier;

import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.ProcessorSupplier;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * Kafka 4.3.1's texts for the TopologyExceptions and StreamsExceptions the Topology API, the DSL and the driver raise
 * (issue 26, item 9), each at Kafka's stage: the call itself (the Topology API, Named), {@code build()}, or the
 * driver's start (a check named "driver-..." builds its topology first, which must not throw, then starts a driver).
 * Mirrored in tests/conformance/test_kafka_reference.py (ERROR_CHECKS, topology_errors).
 */
final class TopologyErrorScenarios {
    private TopologyErrorScenarios() {}

    static final Serde<String> S = Serdes.String();

    static List<Scenario> all() {
        return List.of(texts());
    }

    static StoreBuilder<KeyValueStore<String, String>> store(final String name) {
        return Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), S, S);
    }

    /** A processor that reads the store "st" in init (connected or not). */
    static final class ReadsStore implements Processor<String, String, String, String> {
        @Override
        public void init(final ProcessorContext<String, String> context) {
            context.getStateStore("st");
        }

        @Override
        public void process(final Record<String, String> record) {}
    }

    /** A global store's processor that does nothing. */
    static final class GlobalNoop implements Processor<String, String, Void, Void> {
        @Override
        public void process(final Record<String, String> record) {}
    }

    static final ProcessorSupplier<String, String, String, String> READS_STORE = ReadsStore::new;

    /** A topology with a source "s" (topic "a") and a processor "p" under it. */
    static Topology sourceAndProcessor() {
        return new Topology().addSource("s", "a").addProcessor("p", READS_STORE, "s");
    }

    /** Starts a driver on what {@code topology} builds; a failure of the build itself is not the check's. */
    static void atDriverStart(final Supplier<Topology> topology) {
        atDriverStart(topology, true);
    }

    /** ... with String default serdes, or none. */
    static void atDriverStart(final Supplier<Topology> topology, final boolean defaultSerdes) {
        final Topology built;
        try {
            built = topology.get();
        } catch (final RuntimeException e) {
            throw new IllegalStateException("the topology failed to build, before the driver: " + e, e);
        }
        final Properties props = new Properties();
        props.put("application.id", "topology-errors");
        props.put("bootstrap.servers", "dummy:9092");
        if (defaultSerdes) {
            props.put("default.key.serde", Serdes.StringSerde.class.getName());
            props.put("default.value.serde", Serdes.StringSerde.class.getName());
        }
        try (TopologyTestDriver driver = new TopologyTestDriver(built, props)) {
            driver.producedTopicNames();
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static Scenario texts() {
        return new Scenario("topology-errors", "texts",
                "Kafka's texts and stages for the Topology API's, the DSL's and the driver's TopologyExceptions and "
                        + "StreamsExceptions",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.stream("events", Consumed.with(S, S)).to("events-out", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("events", "string", "string")
                .output("events-out", "string", "string")
                .pipe("events", "a", "x", 1L)
                // the Topology API: each call checks at once
                .error("add-source-no-topics", () -> new Topology().addSource("s"))
                .error("add-source-twice", () -> new Topology().addSource("s", "a").addSource("s", "b"))
                .error("add-source-topic-twice", () -> new Topology().addSource("s1", "a").addSource("s2", "a"))
                .error("add-sink-twice", () -> new Topology().addSource("s", "a").addSink("s", "out", "s"))
                .error("add-sink-no-parent", () -> new Topology().addSink("k", "out"))
                .error("add-sink-unknown-parent", () -> new Topology().addSink("k", "out", "nope"))
                .error("add-sink-own-parent", () -> new Topology().addSink("k", "out", "k"))
                .error("add-sink-under-sink", () -> new Topology().addSource("s", "a").addSink("k1", "out", "s")
                        .addSink("k2", "out", "k1"))
                .error("add-processor-twice", () -> sourceAndProcessor().addProcessor("p", READS_STORE, "s"))
                .error("add-processor-no-parent", () -> new Topology().addProcessor("p", READS_STORE))
                .error("add-processor-unknown-parent", () -> new Topology().addProcessor("p", READS_STORE, "nope"))
                .error("add-processor-own-parent", () -> new Topology().addProcessor("p", READS_STORE, "p"))
                .error("add-state-store-twice", () -> sourceAndProcessor().addStateStore(store("st"), "p")
                        .addStateStore(store("st"), "p"))
                .error("add-state-store-unknown-processor", () -> new Topology().addStateStore(store("st"), "nope"))
                .error("connect-no-store", () -> sourceAndProcessor().connectProcessorAndStateStores("p"))
                .error("add-state-store-to-source", () -> sourceAndProcessor().addStateStore(store("st"), "s"))
                .error("global-store-source-name-taken", () -> sourceAndProcessor().addGlobalStore(
                        store("g").withLoggingDisabled(), "s", S.deserializer(), S.deserializer(), "g-topic", "gp",
                        GlobalNoop::new))
                .error("connect-unknown-store", () -> sourceAndProcessor().connectProcessorAndStateStores("p", "st"))
                .error("connect-unknown-processor", () -> sourceAndProcessor().addStateStore(store("st"))
                        .connectProcessorAndStateStores("nope", "st"))
                .error("connect-source", () -> sourceAndProcessor().addStateStore(store("st"))
                        .connectProcessorAndStateStores("s", "st"))
                .error("global-store-same-names", () -> new Topology().addGlobalStore(store("g").withLoggingDisabled(),
                        "gs", S.deserializer(), S.deserializer(), "g-topic", "gs", GlobalNoop::new))
                .error("global-store-twice", () -> new Topology().addGlobalStore(store("g").withLoggingDisabled(),
                        "gs", S.deserializer(), S.deserializer(), "g-topic", "gp", GlobalNoop::new)
                        .addStateStore(store("g")))
                .error("connect-global-store", () -> sourceAndProcessor().addGlobalStore(
                        store("g").withLoggingDisabled(), "gs", S.deserializer(), S.deserializer(), "g-topic", "gp",
                        GlobalNoop::new).connectProcessorAndStateStores("p", "g"))
                // the DSL: Named at the call, the others at the call or at build()
                .error("named-empty", () -> Named.as(""))
                .error("named-dot", () -> Named.as(".."))
                .error("named-illegal", () -> Named.as("a b"))
                .error("named-too-long", () -> Named.as("n".repeat(250)))
                .error("global-table-versioned", () -> new StreamsBuilder().globalTable("g-topic",
                        Materialized.as(Stores.persistentVersionedKeyValueStore("gv", Duration.ofMillis(10)))))
                .error("suppress-versioned", () -> new StreamsBuilder().table("t-topic",
                        Materialized.as(Stores.persistentVersionedKeyValueStore("tv", Duration.ofMillis(10))))
                        .suppress(Suppressed.untilTimeLimit(Duration.ofMillis(5),
                                Suppressed.BufferConfig.unbounded())))
                .error("build-suppress-versioned-upstream", () -> {   // the call passes; build() refuses
                    final StreamsBuilder builder = new StreamsBuilder();
                    try {
                        builder.table("t-topic", Materialized.as(Stores.persistentVersionedKeyValueStore("tv",
                                Duration.ofMillis(10)))).mapValues(v -> v).suppress(Suppressed.untilTimeLimit(
                                        Duration.ofMillis(5), Suppressed.BufferConfig.unbounded()));
                    } catch (final RuntimeException e) {
                        throw new IllegalStateException("refused at the call, not when building: " + e, e);
                    }
                    builder.build();
                })
                .error("suppress-window-close-not-windowed", () -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.table("t-topic", Consumed.with(S, S))
                            .suppress((Suppressed) Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()))
                            .toStream().to("t-out");
                    builder.build();
                })
                // the driver's start: processors are initialized
                .error("driver-store-not-connected", () -> atDriverStart(() -> sourceAndProcessor()
                        .addStateStore(store("st"))))
                .error("driver-store-unknown", () -> atDriverStart(TopologyErrorScenarios::sourceAndProcessor))
                .error("driver-source-without-serde", () -> atDriverStart(() -> new Topology()
                        .addSource("s", S.deserializer(), null, "a").addSink("k", "out", S.serializer(),
                                S.serializer(), "s"), false))
                .error("driver-sink-without-serde", () -> atDriverStart(() -> new Topology()
                        .addSource("s", S.deserializer(), S.deserializer(), "a").addSink("k", "out", "s"), false))
                .error("driver-global-source-first", () -> atDriverStart(() -> new Topology()
                        .addSource("s", "a").addGlobalStore(store("g").withLoggingDisabled(), "gs", null, null,
                                "g-topic", "gp", GlobalNoop::new), false))
                // build(): KIP-1111's explicit naming, merged source nodes
                .error("unnamed-internal-resources", () -> {   // the builder's TopologyConfig (build(props) ignores it)
                    final Properties p = new Properties();
                    p.put("application.id", "topology-errors");
                    p.put("bootstrap.servers", "dummy:9092");
                    p.put("ensure.explicit.internal.resource.naming", "true");
                    final StreamsBuilder builder = new StreamsBuilder(new TopologyConfig(new StreamsConfig(p)));
                    builder.stream("t", Consumed.with(S, S)).groupByKey().count().toStream().to("t-out");
                    builder.build();
                })
                .error("copartition-fixed-counts", () -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KStream<String, String> l = builder.stream("l", Consumed.with(S, S))
                            .repartition(Repartitioned.<String, String>numberOfPartitions(2).withName("l"));
                    final KStream<String, String> r = builder.stream("r", Consumed.with(S, S))
                            .repartition(Repartitioned.<String, String>numberOfPartitions(3).withName("r"));
                    l.join(r, (a, b) -> a + b, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(10)))
                            .to("lr");
                    builder.build();
                })
                .error("overlapping-sources", () -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.stream(List.of("t1", "t2"), Consumed.with(S, S)).to("o1");
                    builder.stream(List.of("t2", "t3"), Consumed.with(S, S)).to("o2");
                    builder.build();
                });
    }
}
