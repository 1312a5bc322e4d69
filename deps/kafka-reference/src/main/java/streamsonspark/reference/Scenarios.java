package streamsonspark.reference;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Branched;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.EmitStrategy;
import org.apache.kafka.streams.kstream.GlobalKTable;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.SlidingWindows;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.ValueJoiner;
import org.apache.kafka.streams.kstream.WindowedSerdes;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.FixedKeyProcessor;
import org.apache.kafka.streams.processor.api.FixedKeyProcessorContext;
import org.apache.kafka.streams.processor.api.FixedKeyRecord;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;

/**
 * The scenarios. Every one is mirrored, operator by operator, in tests/conformance/test_kafka_reference.py
 * (same names, same order of DSL calls, so generated names and describe() agree); keep the two in step.
 * Joiners render a missing side as "null" (Java's string concatenation), which the Python mirror spells out.
 */
final class Scenarios {
    private Scenarios() {}

    static final Serde<String> S = Serdes.String();
    static final Serde<Long> L = Serdes.Long();

    /** Materialized for a key-value store, caching on (Kafka's default) or off. */
    static <V> Materialized<String, V, KeyValueStore<Bytes, byte[]>> kv(final String name, final Serde<V> values,
                                                                        final boolean caching) {
        final Materialized<String, V, KeyValueStore<Bytes, byte[]>> m =
                Materialized.<String, V, KeyValueStore<Bytes, byte[]>>as(name).withKeySerde(S).withValueSerde(values);
        return caching ? m : m.withCachingDisabled();
    }

    static <V> Materialized<String, V, WindowStore<Bytes, byte[]>> window(final String name, final Serde<V> values,
                                                                          final boolean caching) {
        final Materialized<String, V, WindowStore<Bytes, byte[]>> m =
                Materialized.<String, V, WindowStore<Bytes, byte[]>>as(name).withKeySerde(S).withValueSerde(values);
        return caching ? m : m.withCachingDisabled();
    }

    static <V> Materialized<String, V, SessionStore<Bytes, byte[]>> session(final String name, final Serde<V> values,
                                                                            final boolean caching) {
        final Materialized<String, V, SessionStore<Bytes, byte[]>> m =
                Materialized.<String, V, SessionStore<Bytes, byte[]>>as(name).withKeySerde(S).withValueSerde(values);
        return caching ? m : m.withCachingDisabled();
    }

    static String n(final Object o) {
        return String.valueOf(o);
    }

    static List<Scenario> all() {
        final List<Scenario> all = new ArrayList<>();
        for (final boolean caching : new boolean[] {true, false}) {
            final String variant = caching ? "cached" : "uncached";
            all.add(wordcount(variant, caching));
            all.add(reduce(variant, caching));
            all.add(aggregate(variant, caching));
            all.add(tableAggregate(variant, caching));
            all.add(cogroup(variant, caching));
            all.add(tableFilter(variant, caching));
            all.add(toTable(variant, caching));
            all.add(tableReduce(variant, caching));
            all.add(tumbling(variant, caching));
            all.add(hopping(variant, caching));
            all.add(sliding(variant, caching));
            all.add(session(variant, caching));
        }
        all.add(wordcount("cache-max-bytes-0", true).config("statestore.cache.max.bytes", "0"));
        all.add(tableAggregate("cache-max-bytes-0", true).config("statestore.cache.max.bytes", "0"));
        for (final String kind : new String[] {"inner", "left"}) {
            all.add(streamTableJoin(kind));
            all.add(globalTableJoin(kind));
        }
        for (final String kind : new String[] {"inner", "left", "outer"}) {
            all.add(tableTableJoin(kind));
            for (final boolean grace : new boolean[] {true, false}) {
                all.add(streamStreamJoin(kind, grace));
            }
        }
        all.add(suppressWindowClose());
        all.add(suppressTimeLimit());
        for (final String windows : new String[] {"tumbling", "sliding", "session"}) {
            all.add(emitOnWindowClose(windows));
        }
        all.add(repartition());
        for (final String optimization : new String[] {"none", "all"}) {
            all.add(selectKeyOptimization(optimization));
        }
        all.add(splitMerge());
        all.add(mergeRekey());
        all.add(punctuation());
        // Differences Kafka 4.3.1 showed beyond the scenarios above (issue 13).
        for (final String kind : new String[] {"inner", "left"}) {
            all.add(globalTableJoinNullKey(kind));
        }
        all.add(repartitionedPartitions());
        all.add(cogroupWindowedStreamTime());
        all.add(streamTableJoinJoined());
        all.add(processValues());
        all.add(deadLetterQueueDeserialization());
        all.add(deadLetterQueueProcessing());
        all.addAll(ForeignKeyScenarios.all());
        all.addAll(VersionedScenarios.all());
        all.addAll(OuterJoinScenarios.all());
        all.addAll(TransformValuesScenarios.all());
        all.addAll(MaterializedScenarios.all());
        all.addAll(StoreReadScenarios.all());
        all.addAll(TimestampScenarios.all());
        all.addAll(RoutingScenarios.all());
        all.addAll(QueryScenarios.all());
        all.addAll(HeadersStoreScenarios.all());
        all.addAll(DslHeadersScenarios.all());
        all.addAll(DslHeadersSupplierScenarios.all());
        all.addAll(ContextScenarios.all());
        all.addAll(TopologyErrorScenarios.all());
        all.addAll(StoreFactoryScenarios.all());
        return all;
    }

    // ------------------------------------------------------------------ aggregations

    static Scenario wordcount(final String variant, final boolean caching) {
        return new Scenario("wordcount", variant,
                "flatMapValues + groupBy (named repartition) + count; a sentence repeating a word, out-of-order and "
                        + "headers",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.stream("sentences", Consumed.with(S, S))
                            .flatMapValues(v -> Arrays.asList(v.toLowerCase().split(" ")))
                            .groupBy((k, word) -> word, Grouped.with("by-word", S, S))
                            .count(kv("word-counts", L, caching))
                            .toStream()
                            .to("word-counts-out", Produced.with(S, L));
                    return builder.build(props);
                })
                .input("sentences", "string", "string")
                .output("word-counts-out", "string", "long")
                .output("wordcount-" + variant + "-by-word-repartition", "string", "string")
                .store("word-counts", "timestamped-kv")
                .pipe("sentences", "doc-1", "the quick brown fox", 1000L, "trace", "t1")
                .pipe("sentences", "doc-2", "The the lazy dog", 1010L)
                .pipe("sentences", "doc-3", "a dog barks", 990L)
                .pipe("sentences", "doc-4", "fox", 1020L, "trace", "t4")
                .pipe("sentences", null, "the end", 1005L);
    }

    static Scenario reduce(final String variant, final boolean caching) {
        return new Scenario("reduce", variant,
                "groupByKey + reduce; null key and null value dropped; out-of-order timestamps",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.stream("events", Consumed.with(S, S))
                            .groupByKey(Grouped.with(S, S))
                            .reduce((a, b) -> a + "|" + b, kv("reduced", S, caching))
                            .toStream()
                            .to("reduced-out", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("events", "string", "string")
                .output("reduced-out", "string", "string")
                .store("reduced", "timestamped-kv")
                .pipe("events", "a", "1", 10L, "h", "a1")
                .pipe("events", "b", "2", 5L)
                .pipe("events", "a", "3", 3L)
                .pipe("events", "a", null, 12L)
                .pipe("events", null, "x", 13L)
                .pipe("events", "b", "4", 20L, "h", "b4")
                .pipe("events", "a", "5", 15L);
    }

    static Scenario aggregate(final String variant, final boolean caching) {
        return new Scenario("aggregate", variant,
                "groupByKey + aggregate to a Long (sum of the values); timestamps are the max seen per key",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.stream("events", Consumed.with(S, S))
                            .groupByKey(Grouped.with(S, S))
                            .aggregate(() -> 0L, (k, v, agg) -> agg + Long.parseLong(v), kv("sums", L, caching))
                            .toStream()
                            .to("sums-out", Produced.with(S, L));
                    return builder.build(props);
                })
                .input("events", "string", "string")
                .output("sums-out", "string", "long")
                .store("sums", "timestamped-kv")
                .pipe("events", "a", "1", 100L)
                .pipe("events", "b", "10", 50L, "src", "b")
                .pipe("events", "a", "2", 90L)
                .pipe("events", "a", "3", 110L)
                .pipe("events", "b", null, 120L)
                .pipe("events", "b", "20", 60L);
    }

    static Scenario tableAggregate(final String variant, final boolean caching) {
        return new Scenario("table-aggregate", variant,
                "KTable.groupBy + aggregate with adder and subtractor: updates, moves, deletes, re-puts",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.table("users", Consumed.with(S, S))
                            .groupBy((user, region) -> KeyValue.pair(region, user), Grouped.with("by-region", S, S))
                            .aggregate(() -> "", (k, v, agg) -> agg + "+" + v, (k, v, agg) -> agg + "-" + v,
                                    kv("region-agg", S, caching))
                            .toStream()
                            .to("region-out", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("users", "string", "string")
                .output("region-out", "string", "string")
                .store("region-agg", "timestamped-kv")
                .pipe("users", "alice", "eu", 1L)
                .pipe("users", "bob", "eu", 2L)
                .pipe("users", "carol", "us", 3L)
                .pipe("users", "alice", "us", 4L, "h", "move")
                .pipe("users", "bob", null, 5L)
                .pipe("users", "dave", null, 6L)
                .pipe("users", "carol", "us", 7L)
                .pipe("users", "alice", "eu", 2L);
    }

    static Scenario cogroup(final String variant, final boolean caching) {
        return new Scenario("cogroup", variant, "KIP-150 cogroup of two grouped streams into one aggregate",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KGroupedStream<String, String> clicks =
                            builder.stream("clicks", Consumed.with(S, S)).groupByKey(Grouped.with(S, S));
                    final KGroupedStream<String, String> views =
                            builder.stream("views", Consumed.with(S, S)).groupByKey(Grouped.with(S, S));
                    clicks.<String>cogroup((k, v, agg) -> agg + "c" + v)
                            .cogroup(views, (k, v, agg) -> agg + "v" + v)
                            .aggregate(() -> "", kv("cogrouped", S, caching))
                            .toStream()
                            .to("cogrouped-out", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("clicks", "string", "string")
                .input("views", "string", "string")
                .output("cogrouped-out", "string", "string")
                .store("cogrouped", "timestamped-kv")
                .pipe("clicks", "u1", "1", 10L)
                .pipe("views", "u1", "2", 5L)
                .pipe("views", "u2", "3", 20L, "h", "v3")
                .pipe("clicks", "u2", null, 21L)
                .pipe("clicks", "u1", "4", 8L)
                .pipe("views", "u1", "5", 30L);
    }

    static Scenario tableFilter(final String variant, final boolean caching) {
        return new Scenario("table-filter", variant,
                "table() materialized, filter (not materialized) + mapValues, filterNot materialized; tombstones",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KTable<String, String> items = builder.table("items", Consumed.with(S, S),
                            kv("items-store", S, caching));
                    items.filter((k, v) -> v.length() > 3)
                            .mapValues(v -> v.toUpperCase())
                            .toStream()
                            .to("long-items", Produced.with(S, S));
                    items.filterNot((k, v) -> v.length() > 3, kv("short-store", S, caching))
                            .toStream()
                            .to("short-items", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("items", "string", "string")
                .output("long-items", "string", "string")
                .output("short-items", "string", "string")
                .store("items-store", "timestamped-kv")
                .store("short-store", "timestamped-kv")
                .pipe("items", "a", "apple", 1L)
                .pipe("items", "b", "fig", 2L)
                .pipe("items", "c", "kiwi", 3L, "h", "c")
                .pipe("items", "b", null, 4L)
                .pipe("items", "a", "ab", 5L)
                .pipe("items", "a", null, 6L)
                .pipe("items", "c", null, 7L)
                .pipe("items", "d", null, 8L)
                .pipe("items", "e", "plum", 2L);
    }

    static Scenario toTable(final String variant, final boolean caching) {
        return new Scenario("to-table", variant, "KStream.toTable (named, materialized) + mapValues + toStream",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.stream("events", Consumed.with(S, S))
                            .toTable(Named.as("as-table"), kv("latest", S, caching))
                            .mapValues(v -> v + "!")
                            .toStream()
                            .to("latest-out", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("events", "string", "string")
                .output("latest-out", "string", "string")
                .store("latest", "timestamped-kv")
                .pipe("events", "a", "1", 5L)
                .pipe("events", "a", "2", 3L)
                .pipe("events", "b", "3", 7L, "h", "b")
                .pipe("events", "a", null, 8L)
                .pipe("events", null, "4", 9L)
                .pipe("events", "c", null, 10L);
    }

    static Scenario tableReduce(final String variant, final boolean caching) {
        return new Scenario("table-reduce", variant,
                "KTable.groupBy (re-key by value prefix) + reduce with adder and subtractor",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.table("scores", Consumed.with(S, S))
                            .groupBy((player, v) -> KeyValue.pair(v.split(":")[0], v.split(":")[1]),
                                    Grouped.with(S, S))
                            .reduce((agg, v) -> agg + "+" + v, (agg, v) -> agg + "-" + v,
                                    kv("team-scores", S, caching))
                            .toStream()
                            .to("team-out", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("scores", "string", "string")
                .output("team-out", "string", "string")
                .store("team-scores", "timestamped-kv")
                .pipe("scores", "p1", "red:1", 10L)
                .pipe("scores", "p2", "red:2", 11L, "h", "p2")
                .pipe("scores", "p1", "red:3", 12L)
                .pipe("scores", "p1", "blue:3", 9L)
                .pipe("scores", "p2", null, 13L)
                .pipe("scores", "p3", "blue:5", 14L)
                .pipe("scores", "p1", null, 15L);
    }

    // ------------------------------------------------------------------ windows

    static Scenario windowed(final String name, final String variant, final String description, final String keyType,
                             final java.util.function.Function<Properties, Topology> topology, final String storeKind) {
        return windowedSteps(new Scenario(name, variant, description, topology)
                .input("events", "string", "string")
                .output(name + "-out", keyType, "long")
                .store(name + "-store", storeKind, "a", "b"));
    }

    /** The records of {@link #windowed} (keys a and b on "events": out of order, late, a null value, headers). */
    static Scenario windowedSteps(final Scenario s) {
        return s.pipe("events", "a", "x", 1L)
                .pipe("events", "a", "x", 5L, "h", "a5")
                .pipe("events", "b", "x", 6L)
                .pipe("events", "a", "x", 12L)
                .pipe("events", "a", "x", 3L)
                .pipe("events", "b", "x", 20L)
                .pipe("events", "a", "x", 8L)
                .pipe("events", "a", null, 19L)
                .pipe("events", "a", "x", 18L, "h", "a18")
                .pipe("events", "b", "x", 26L)
                .pipe("events", "a", "x", 14L)
                .pipe("events", "b", "x", 40L)
                .pipe("events", "a", "x", 27L);
    }

    static Scenario tumbling(final String variant, final boolean caching) {
        return windowed("tumbling", variant, "tumbling windows size 10 grace 5, count; late records dropped",
                "time-windowed:10", props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.stream("events", Consumed.with(S, S))
                            .groupByKey(Grouped.with(S, S))
                            .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(5)))
                            .count(window("tumbling-store", L, caching))
                            .toStream()
                            .to("tumbling-out", Produced.with(WindowedSerdes.timeWindowedSerdeFrom(String.class, 10), L));
                    return builder.build(props);
                }, "window");
    }

    static Scenario hopping(final String variant, final boolean caching) {
        return windowed("hopping", variant, "hopping windows size 10 advance 5 grace 2, count",
                "time-windowed:10", props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.stream("events", Consumed.with(S, S))
                            .groupByKey(Grouped.with(S, S))
                            .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(2))
                                    .advanceBy(Duration.ofMillis(5)))
                            .count(window("hopping-store", L, caching))
                            .toStream()
                            .to("hopping-out", Produced.with(WindowedSerdes.timeWindowedSerdeFrom(String.class, 10), L));
                    return builder.build(props);
                }, "window");
    }

    static Scenario sliding(final String variant, final boolean caching) {
        return windowed("sliding", variant, "sliding windows time difference 10 grace 5, count",
                "time-windowed:10", props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.stream("events", Consumed.with(S, S))
                            .groupByKey(Grouped.with(S, S))
                            .windowedBy(SlidingWindows.ofTimeDifferenceAndGrace(Duration.ofMillis(10),
                                    Duration.ofMillis(5)))
                            .count(window("sliding-store", L, caching))
                            .toStream()
                            .to("sliding-out", Produced.with(WindowedSerdes.timeWindowedSerdeFrom(String.class, 10), L));
                    return builder.build(props);
                }, "window");
    }

    static Scenario session(final String variant, final boolean caching) {
        return windowed("session", variant, "session windows gap 5 grace 5, count; merges and tombstones",
                "session-windowed", props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.stream("events", Consumed.with(S, S))
                            .groupByKey(Grouped.with(S, S))
                            .windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofMillis(5),
                                    Duration.ofMillis(5)))
                            .count(session("session-store", L, caching))
                            .toStream()
                            .to("session-out", Produced.with(WindowedSerdes.sessionWindowedSerdeFrom(String.class), L));
                    return builder.build(props);
                }, "session");
    }

    static Scenario suppressWindowClose() {
        return new Scenario("suppress-window-close", "default",
                "tumbling size 10 grace 5 count + suppress(untilWindowCloses(unbounded)).withName(final)",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.stream("events", Consumed.with(S, S))
                            .groupByKey(Grouped.with(S, S))
                            .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(5)))
                            .count()
                            .suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()).withName("final"))
                            .toStream()
                            .to("final-out", Produced.with(WindowedSerdes.timeWindowedSerdeFrom(String.class, 10), L));
                    return builder.build(props);
                })
                .input("events", "string", "string")
                .output("final-out", "time-windowed:10", "long")
                .pipe("events", "a", "x", 1L, "h", "a1")
                .pipe("events", "b", "x", 2L)
                .pipe("events", "a", "x", 12L)
                .pipe("events", "a", "x", 3L)
                .pipe("events", "b", "x", 15L, "h", "b15")
                .pipe("events", "a", "x", 8L)
                .pipe("events", "b", "x", 24L)
                .pipe("events", "a", "x", 31L)
                .pipe("events", "b", "x", 50L);
    }

    static Scenario suppressTimeLimit() {
        return new Scenario("suppress-time-limit", "default",
                "groupByKey count + suppress(untilTimeLimit(10 ms, unbounded))",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.stream("events", Consumed.with(S, S))
                            .groupByKey(Grouped.with(S, S))
                            .count(Materialized.as("plain"))
                            .suppress(Suppressed.untilTimeLimit(Duration.ofMillis(10),
                                    Suppressed.BufferConfig.unbounded()))
                            .toStream()
                            .to("limited-out", Produced.with(S, L));
                    return builder.build(props);
                })
                .input("events", "string", "string")
                .output("limited-out", "string", "long")
                .store("plain", "timestamped-kv")
                .pipe("events", "a", "v", 0L)
                .pipe("events", "b", "v", 2L, "h", "b2")
                .pipe("events", "a", "v", 3L)
                .pipe("events", "a", "v", 9L)
                .pipe("events", "b", "v", 11L)
                .pipe("events", "a", "v", 12L)
                .pipe("events", "a", "v", 5L)
                .pipe("events", "b", "v", 30L)
                .pipe("events", "a", "v", 31L);
    }

    static Scenario emitOnWindowClose(final String windows) {
        final String keyType = windows.equals("session") ? "session-windowed" : "time-windowed:10";
        final Scenario s = new Scenario("emit-on-window-close", windows,
                "KIP-825 emitStrategy(onWindowClose()) on " + windows + " windows (10, grace 5) count",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final var grouped = builder.stream("events", Consumed.with(S, S)).groupByKey(Grouped.with(S, S));
                    final KTable<? extends org.apache.kafka.streams.kstream.Windowed<String>, Long> counts;
                    if (windows.equals("tumbling")) {
                        counts = grouped.windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(5)))
                                .emitStrategy(EmitStrategy.onWindowClose())
                                .count(window("final-store", L, true));
                    } else if (windows.equals("sliding")) {
                        counts = grouped.windowedBy(SlidingWindows.ofTimeDifferenceAndGrace(Duration.ofMillis(10),
                                        Duration.ofMillis(5)))
                                .emitStrategy(EmitStrategy.onWindowClose())
                                .count(window("final-store", L, true));
                    } else {
                        counts = grouped.windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofMillis(10),
                                        Duration.ofMillis(5)))
                                .emitStrategy(EmitStrategy.onWindowClose())
                                .count(session("final-store", L, true));
                    }
                    @SuppressWarnings("unchecked")
                    final KTable<org.apache.kafka.streams.kstream.Windowed<String>, Long> c =
                            (KTable<org.apache.kafka.streams.kstream.Windowed<String>, Long>) counts;
                    c.toStream().to("final-out", Produced.with(windows.equals("session")
                            ? WindowedSerdes.sessionWindowedSerdeFrom(String.class)
                            : WindowedSerdes.timeWindowedSerdeFrom(String.class, 10), L));
                    return builder.build(props);
                })
                .input("events", "string", "string")
                .output("final-out", keyType, "long")
                .pipe("events", "a", "x", 1L)
                .pipe("events", "a", "x", 5L)
                .pipe("events", "b", "x", 7L)
                .pipe("events", "a", "x", 12L)
                .pipe("events", "a", "x", 3L)
                .pipe("events", "a", "x", 14L)
                .pipe("events", "a", "x", 15L, "h", "closer")
                .pipe("events", "a", "x", 8L)
                .pipe("events", "b", "x", 26L)
                .pipe("events", "a", "x", 36L)
                .pipe("events", "b", "x", 60L);
        return s;
    }

    // ------------------------------------------------------------------ joins

    static Scenario streamTableJoin(final String kind) {
        return new Scenario("stream-table-join", kind, "KStream " + kind + " join KTable; null key/value, deletes",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KTable<String, String> profiles = builder.table("profiles", Consumed.with(S, S));
                    final KStream<String, String> clicks = builder.stream("clicks", Consumed.with(S, S));
                    final ValueJoiner<String, String, String> joiner = (c, p) -> c + "/" + n(p);
                    (kind.equals("inner") ? clicks.join(profiles, joiner) : clicks.leftJoin(profiles, joiner))
                            .to("enriched", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("profiles", "string", "string")
                .input("clicks", "string", "string")
                .output("enriched", "string", "string")
                .pipe("profiles", "u1", "p1", 1L)
                .pipe("clicks", "u1", "c1", 2L, "h", "c1")
                .pipe("clicks", "u2", "c2", 3L)
                .pipe("profiles", "u2", "p2", 4L)
                .pipe("clicks", "u2", "c3", 5L)
                .pipe("profiles", "u1", null, 6L)
                .pipe("clicks", "u1", "c4", 7L)
                .pipe("clicks", "u1", null, 8L)
                .pipe("clicks", null, "c5", 9L)
                .pipe("profiles", "u3", "p3", 1L)
                .pipe("clicks", "u3", "c6", 0L);
    }

    static Scenario globalTableJoin(final String kind) {
        return new Scenario("global-table-join", kind, "KStream " + kind + " join GlobalKTable with a key mapper",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final GlobalKTable<String, String> products = builder.globalTable("products",
                            Consumed.with(S, S), Materialized.as("product-store"));
                    final KStream<String, String> orders = builder.stream("orders", Consumed.with(S, S));
                    final ValueJoiner<String, String, String> joiner = (o, p) -> o + "=" + n(p);
                    (kind.equals("inner")
                            ? orders.join(products, (k, v) -> v.split(":")[0], joiner)
                            : orders.leftJoin(products, (k, v) -> v.split(":")[0], joiner))
                            .to("orders-out", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("products", "string", "string")
                .input("orders", "string", "string")
                .output("orders-out", "string", "string")
                .store("product-store", "timestamped-kv")
                .pipe("products", "p1", "pen", 1L)
                .pipe("products", "p2", "cup", 2L)
                .pipe("orders", "o1", "p1:2", 3L, "h", "o1")
                .pipe("orders", "o2", "p9:1", 4L)
                .pipe("products", "p1", null, 5L)
                .pipe("orders", "o3", "p1:5", 6L)
                .pipe("orders", "o4", "p2:1", 0L);
    }

    static Scenario tableTableJoin(final String kind) {
        return new Scenario("table-table-join", kind, "KTable " + kind + " join KTable; updates and deletes on both",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KTable<String, String> a = builder.table("left-t", Consumed.with(S, S));
                    final KTable<String, String> b = builder.table("right-t", Consumed.with(S, S));
                    final ValueJoiner<String, String, String> joiner = (x, y) -> n(x) + "+" + n(y);
                    (kind.equals("inner") ? a.join(b, joiner) : kind.equals("left") ? a.leftJoin(b, joiner)
                            : a.outerJoin(b, joiner))
                            .toStream()
                            .to("joined-t", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("left-t", "string", "string")
                .input("right-t", "string", "string")
                .output("joined-t", "string", "string")
                .pipe("left-t", "k", "a1", 1L)
                .pipe("right-t", "k", "b1", 2L, "h", "b1")
                .pipe("left-t", "k", "a2", 3L)
                .pipe("right-t", "k", null, 4L)
                .pipe("left-t", "q", "x", 5L)
                .pipe("left-t", "q", null, 6L)
                .pipe("left-t", "k", null, 7L)
                .pipe("right-t", "z", null, 8L)
                .pipe("right-t", "z", "b9", 9L)
                .pipe("left-t", "z", "a9", 3L);
    }

    static Scenario streamStreamJoin(final String kind, final boolean grace) {
        return new Scenario("stream-stream-join", kind + "-" + (grace ? "grace" : "nograce"),
                "KStream " + kind + " join KStream, JoinWindows " + (grace ? "ofTimeDifferenceAndGrace(10, 5)"
                        : "ofTimeDifferenceWithNoGrace(10)") + "; out-of-order and late records",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KStream<String, String> left = builder.stream("left", Consumed.with(S, S));
                    final KStream<String, String> right = builder.stream("right", Consumed.with(S, S));
                    final JoinWindows windows = grace
                            ? JoinWindows.ofTimeDifferenceAndGrace(Duration.ofMillis(10), Duration.ofMillis(5))
                            : JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(10));
                    final ValueJoiner<String, String, String> joiner = (l, r) -> n(l) + "+" + n(r);
                    final StreamJoined<String, String, String> serdes = StreamJoined.with(S, S, S);
                    (kind.equals("inner") ? left.join(right, joiner, windows, serdes)
                            : kind.equals("left") ? left.leftJoin(right, joiner, windows, serdes)
                            : left.outerJoin(right, joiner, windows, serdes))
                            .to("joined", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("left", "string", "string")
                .input("right", "string", "string")
                .output("joined", "string", "string")
                .pipe("left", "k", "a", 100L, "h", "a")
                .pipe("right", "k", "x", 105L)
                .pipe("right", "k", "y", 120L)
                .pipe("left", "k", "b", 95L)
                .pipe("left", "k", "c", 130L)
                .pipe("left", "j", "j1", 131L)
                .pipe("right", "k", "e", 112L, "h", "e")
                .pipe("left", "k", "d", 200L)
                .pipe("right", "k", "late", 96L)
                .pipe("left", null, "nokey", 201L)
                .pipe("left", "k", null, 202L)
                .pipe("right", "j", "j2", 205L)
                .pipe("right", "k", "z", 300L)
                .pipe("left", "k", "w", 400L);
    }

    // ------------------------------------------------------------------ topology shapes

    static Scenario repartition() {
        return new Scenario("repartition", "default",
                "selectKey + repartition(Repartitioned.as(rekeyed)) + groupByKey count; the repartition topic is read",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.stream("events", Consumed.with(S, S))
                            .selectKey((k, v) -> v.split(":")[0])
                            .repartition(Repartitioned.<String, String>as("rekeyed").withKeySerde(S).withValueSerde(S))
                            .groupByKey(Grouped.with(S, S))
                            .count(Materialized.as("rekeyed-counts"))
                            .toStream()
                            .to("rekeyed-out", Produced.with(S, L));
                    return builder.build(props);
                })
                .input("events", "string", "string")
                .output("rekeyed-out", "string", "long")
                .output("repartition-default-rekeyed-repartition", "string", "string")
                .store("rekeyed-counts", "timestamped-kv")
                .pipe("events", "e1", "u1:a", 10L, "h", "e1")
                .pipe("events", "e2", "u2:b", 5L)
                .pipe("events", "e3", "u1:c", 7L)
                .pipe("events", null, "u2:d", 20L);
    }

    static Scenario selectKeyOptimization(final String optimization) {
        return new Scenario("selectkey-optimization", optimization,
                "one selectKey feeding two groupByKey aggregations; topology.optimization=" + optimization
                        + " (merged repartition topics)",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KStream<String, String> rekeyed = builder.stream("events", Consumed.with(S, S))
                            .selectKey((k, v) -> v.split(":")[0]);
                    rekeyed.groupByKey(Grouped.with(S, S))
                            .count(Materialized.as("counts"))
                            .toStream()
                            .to("counts-out", Produced.with(S, L));
                    rekeyed.groupByKey(Grouped.with(S, S))
                            .reduce((a, b) -> a + "|" + b, Materialized.as("concat"))
                            .toStream()
                            .to("concat-out", Produced.with(S, S));
                    return builder.build(props);
                })
                .config("topology.optimization", optimization)
                .input("events", "string", "string")
                .output("counts-out", "string", "long")
                .output("concat-out", "string", "string")
                .store("counts", "timestamped-kv")
                .store("concat", "timestamped-kv")
                .pipe("events", "e1", "u1:a", 10L)
                .pipe("events", "e2", "u2:b", 5L, "h", "e2")
                .pipe("events", "e3", "u1:c", 7L)
                .pipe("events", "e4", "u1:d", 12L);
    }

    static Scenario splitMerge() {
        return new Scenario("split-merge", "default",
                "split(Named) with branch/withFunction/defaultBranch, then merge, filter, map, peek",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final Map<String, KStream<String, String>> branches = builder.stream("events", Consumed.with(S, S))
                            .split(Named.as("split-"))
                            .branch((k, v) -> v != null && v.startsWith("a"), Branched.as("a"))
                            .branch((k, v) -> v != null && v.startsWith("b"),
                                    Branched.withFunction(s -> s.mapValues(v -> v.toUpperCase()), "b"))
                            .defaultBranch(Branched.as("other"));
                    branches.get("split-a").to("a-out", Produced.with(S, S));
                    branches.get("split-b").to("b-out", Produced.with(S, S));
                    branches.get("split-a").merge(branches.get("split-other"))
                            .filter((k, v) -> k != null)
                            .map((k, v) -> KeyValue.pair(k + "!", n(v)))
                            .peek((k, v) -> { })
                            .to("merged-out", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("events", "string", "string")
                .output("a-out", "string", "string")
                .output("b-out", "string", "string")
                .output("merged-out", "string", "string")
                .pipe("events", "1", "apple", 1L, "h", "1")
                .pipe("events", "2", "banana", 2L)
                .pipe("events", "3", "cherry", 3L)
                .pipe("events", "4", null, 4L)
                .pipe("events", null, "avocado", 5L)
                .pipe("events", "6", "blueberry", 0L);
    }

    static Scenario mergeRekey() {
        return new Scenario("merge-rekey", "default",
                "two streams merged, map (key-changing), groupByKey(Grouped.as(merged)) count: repartition after merge",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KStream<String, String> a = builder.stream("a", Consumed.with(S, S));
                    final KStream<String, String> b = builder.stream("b", Consumed.with(S, S));
                    a.merge(b, Named.as("both"))
                            .map((k, v) -> KeyValue.pair(v, k), Named.as("swap"))
                            .groupByKey(Grouped.<String, String>as("merged").withKeySerde(S).withValueSerde(S))
                            .count(Named.as("count-them"), Materialized.as("merged-counts"))
                            .toStream(Named.as("changes"))
                            .to("merged-counts-out", Produced.<String, Long>as("write").withKeySerde(S).withValueSerde(L));
                    return builder.build(props);
                })
                .input("a", "string", "string")
                .input("b", "string", "string")
                .output("merged-counts-out", "string", "long")
                .store("merged-counts", "timestamped-kv")
                .pipe("a", "1", "x", 5L)
                .pipe("b", "2", "x", 3L, "h", "b2")
                .pipe("a", "3", "y", 7L)
                .pipe("b", "4", "x", 9L)
                .pipe("b", "5", null, 10L);
    }

    // ------------------------------------------------------------------ Processor API

    /** Counts per key in "pending"; every 10 ms of stream time forwards ("tick", entries pending) and every
     *  1000 ms of wall clock flushes (key, count) and empties the store. */
    static final class Buffer implements Processor<String, String, String, Long> {
        private ProcessorContext<String, Long> context;
        private KeyValueStore<String, Long> pending;

        @Override
        public void init(final ProcessorContext<String, Long> context) {
            this.context = context;
            pending = context.getStateStore("pending");
            context.schedule(Duration.ofMillis(10), PunctuationType.STREAM_TIME, ts -> {
                long n = 0;
                try (KeyValueIterator<String, Long> it = pending.all()) {
                    while (it.hasNext()) {
                        it.next();
                        n++;
                    }
                }
                context.forward(new Record<>("tick", n, ts));
            });
            context.schedule(Duration.ofMillis(1000), PunctuationType.WALL_CLOCK_TIME, ts -> {
                final List<KeyValue<String, Long>> all = new ArrayList<>();
                try (KeyValueIterator<String, Long> it = pending.all()) {
                    it.forEachRemaining(all::add);
                }
                for (final KeyValue<String, Long> kv : all) {
                    context.forward(new Record<>(kv.key, kv.value, ts));
                    pending.delete(kv.key);
                }
            });
        }

        @Override
        public void process(final Record<String, String> record) {
            final Long old = pending.get(record.key());
            pending.put(record.key(), old == null ? 1L : old + 1);
        }
    }

    static Scenario punctuation() {
        return new Scenario("punctuation", "default",
                "Processor API: a store-backed buffer with stream-time (10 ms) and wall-clock (1 s) punctuation",
                props -> {
                    final Topology topology = new Topology();
                    topology.addSource("src", S.deserializer(), S.deserializer(), "events");
                    topology.addProcessor("buffer", Buffer::new, "src");
                    topology.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("pending"), S, L)
                            .withLoggingDisabled(), "buffer");
                    topology.addSink("sink", "flushed", S.serializer(), L.serializer(), "buffer");
                    return topology;
                })
                .input("events", "string", "string")
                .output("flushed", "string", "long")
                .store("pending", "kv")
                .pipe("events", "a", "v", 3L)
                .pipe("events", "b", "v", 5L)
                .pipe("events", "a", "v", 12L)
                .advanceWallClock(999L)
                .pipe("events", "c", "v", 11L)
                .advanceWallClock(1L)
                .pipe("events", "a", "v", 35L)
                .advanceWallClock(2500L)
                .pipe("events", "b", "v", 36L)
                .advanceWallClock(500L)
                .pipe("events", "c", "v", 50L);
    }

    // ------------------------------------------------------------------ differences found beyond the first goldens

    static Scenario globalTableJoinNullKey(final String kind) {
        return new Scenario("global-table-join-null-key", kind,
                "KStream " + kind + " join GlobalKTable whose key mapper returns null (KIP-962), null keys and values",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final GlobalKTable<String, String> products = builder.globalTable("products",
                            Consumed.with(S, S), Materialized.as("product-store"));
                    final KStream<String, String> orders = builder.stream("orders", Consumed.with(S, S));
                    final ValueJoiner<String, String, String> joiner = (o, p) -> n(o) + "=" + n(p);
                    final org.apache.kafka.streams.kstream.KeyValueMapper<String, String, String> product =
                            (k, v) -> v == null || !v.contains(":") ? null : v.split(":")[0];
                    (kind.equals("inner")
                            ? orders.join(products, product, joiner)
                            : orders.leftJoin(products, product, joiner))
                            .to("orders-out", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("products", "string", "string")
                .input("orders", "string", "string")
                .output("orders-out", "string", "string")
                .store("product-store", "timestamped-kv")
                .pipe("products", "p1", "pen", 1L)
                .pipe("orders", "o1", "p1:2", 3L, "h", "o1")
                .pipe("orders", "o2", "no-product", 4L, "h", "o2")
                .pipe("orders", null, "p1:3", 5L)
                .pipe("orders", null, "no-product", 6L)
                .pipe("orders", "o3", null, 7L)
                .pipe("orders", "o4", "p9:1", 8L);
    }

    static Scenario repartitionedPartitions() {
        return new Scenario("repartitioned-partitions", "default",
                "Repartitioned.withNumberOfPartitions(3): the single-partition driver keeps one task",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.stream("events", Consumed.with(S, S))
                            .selectKey((k, v) -> v.split(":")[0])
                            .repartition(Repartitioned.<String, String>as("by-user").withKeySerde(S)
                                    .withValueSerde(S).withNumberOfPartitions(3))
                            .groupByKey(Grouped.with(S, S))
                            .count(Materialized.as("user-counts"))
                            .toStream()
                            .to("user-counts-out", Produced.with(S, L));
                    return builder.build(props);
                })
                .input("events", "string", "string")
                .output("user-counts-out", "string", "long")
                .store("user-counts", "timestamped-kv")
                .pipe("events", "e1", "u1:a", 10L)
                .pipe("events", "e2", "u2:b", 11L)
                .pipe("events", "e3", "u3:c", 12L)
                .pipe("events", "e4", "u1:d", 13L)
                .pipe("events", "e5", "u4:e", 14L)
                .pipe("events", "e6", "u2:f", 15L);
    }

    static Scenario cogroupWindowedStreamTime() {
        return new Scenario("cogroup-windowed-stream-time", "default",
                "windowed cogroup: each input keeps its own observed stream time for lateness",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KGroupedStream<String, String> clicks =
                            builder.stream("clicks", Consumed.with(S, S)).groupByKey(Grouped.with(S, S));
                    final KGroupedStream<String, String> views =
                            builder.stream("views", Consumed.with(S, S)).groupByKey(Grouped.with(S, S));
                    clicks.<String>cogroup((k, v, agg) -> agg + "c" + v)
                            .cogroup(views, (k, v, agg) -> agg + "v" + v)
                            .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(5)))
                            .aggregate(() -> "", window("cogrouped-windows", S, false))
                            .toStream()
                            .to("cogrouped-windows-out",
                                    Produced.with(WindowedSerdes.timeWindowedSerdeFrom(String.class, 10), S));
                    return builder.build(props);
                })
                .input("clicks", "string", "string")
                .input("views", "string", "string")
                .output("cogrouped-windows-out", "time-windowed:10", "string")
                .store("cogrouped-windows", "window")
                .pipe("clicks", "u1", "1", 2L)
                .pipe("views", "u1", "2", 4L)
                .pipe("clicks", "u1", "3", 40L)
                .pipe("views", "u1", "4", 6L, "h", "late-for-clicks")
                .pipe("clicks", "u1", "5", 7L)
                .pipe("views", "u1", "6", 41L)
                .pipe("views", "u1", "7", 8L)
                .pipe("clicks", "u2", "8", 33L)
                .pipe("views", "u2", "9", 31L);
    }

    static Scenario streamTableJoinJoined() {
        return new Scenario("stream-table-join-joined", "default",
                "selectKey then join(table, Joined.with(key, value, other)): the repartition takes Joined's serdes",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KTable<String, String> customers = builder.table("customers", Consumed.with(S, S));
                    builder.stream("orders", Consumed.with(S, S))
                            .selectKey((k, v) -> v.split(":")[0])
                            .join(customers, (o, c) -> o + "@" + c, Joined.with(S, S, S))
                            .to("orders-enriched", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("customers", "string", "string")
                .input("orders", "string", "string")
                .output("orders-enriched", "string", "string")
                .pipe("customers", "c1", "Ada", 1L)
                .pipe("customers", "c2", "Bob", 2L)
                .pipe("orders", "o1", "c1:pen", 3L, "h", "o1")
                .pipe("orders", "o2", "c2:cup", 4L)
                .pipe("orders", "o3", "c3:ink", 5L)
                .pipe("customers", "c1", "Ada L.", 6L)
                .pipe("orders", "o4", "c1:pad", 7L);
    }

    static Scenario processValues() {
        return new Scenario("process-values", "default",
                "KIP-820 processValues with a store after selectKey (still repartitions), then toStream(mapper)",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("seen"), S, L)
                            .withLoggingDisabled());
                    final KStream<String, String> numbered = builder.stream("events", Consumed.with(S, S))
                            .selectKey((k, v) -> v.split(":")[0])
                            .processValues(Numbering::new, "seen");
                    numbered.to("numbered-values", Produced.with(S, S));
                    numbered.groupByKey(Grouped.with(S, S))
                            .count(Materialized.as("numbered-counts"))
                            .toStream((k, count) -> k + "/" + count)
                            .to("numbered-out", Produced.with(S, L));
                    return builder.build(props);
                })
                .input("events", "string", "string")
                .output("numbered-values", "string", "string")
                .output("numbered-out", "string", "long")
                .store("seen", "kv")
                .store("numbered-counts", "timestamped-kv")
                .pipe("events", "e1", "u1:a", 10L, "h", "e1")
                .pipe("events", "e2", "u2:b", 11L)
                .pipe("events", "e3", "u1:c", 12L)
                .pipe("events", "e4", "u1:d", 9L);
    }

    /** Numbers each key's values in the "seen" store: value#n, the key unchanged (a FixedKeyProcessor). */
    static final class Numbering implements FixedKeyProcessor<String, String, String> {
        private FixedKeyProcessorContext<String, String> context;
        private KeyValueStore<String, Long> seen;

        @Override
        public void init(final FixedKeyProcessorContext<String, String> context) {
            this.context = context;
            seen = context.getStateStore("seen");
        }

        @Override
        public void process(final FixedKeyRecord<String, String> record) {
            final Long old = seen.get(record.key());
            final long n = old == null ? 1 : old + 1;
            seen.put(record.key(), n);
            context.forward(record.withValue(record.value() + "#" + n));
        }
    }

    // ------------------------------------------------------------------ error handlers and the dead letter queue

    static Scenario deadLetterQueueDeserialization() {
        return new Scenario("dead-letter-queue", "deserialization",
                "LogAndContinueExceptionHandler with errors.dead.letter.queue.topic.name: undecodable values go to "
                        + "the DLQ with Kafka's headers; the records around them are processed",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    builder.stream("numbers", Consumed.with(S, L))
                            .mapValues(v -> v % 1000)
                            .to("numbers-mod", Produced.with(S, L));
                    return builder.build(props);
                })
                .config("deserialization.exception.handler",
                        "org.apache.kafka.streams.errors.LogAndContinueExceptionHandler")
                .config("errors.dead.letter.queue.topic.name", "dlq")
                .input("numbers", "string", "string")
                .output("numbers-mod", "string", "long")
                .output("dlq", "string", "string")
                .pipe("numbers", "a", "AAAAAAAA", 1L, "h", "a")
                .pipe("numbers", "b", "bad", 2L, "h", "b")
                .pipe("numbers", "c", "BBBBBBBB", 3L)
                .pipe("numbers", null, "worse", 4L)
                .pipe("numbers", "d", "CCCCCCCC", 5L);
    }

    static Scenario deadLetterQueueProcessing() {
        return new Scenario("dead-letter-queue", "processing",
                "LogAndContinueProcessingExceptionHandler (KIP-1033) with a DLQ (KIP-1034): the failing processor's "
                        + "record goes to the DLQ, its sibling still gets it",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KStream<String, String> words = builder.stream("words", Consumed.with(S, S));
                    words.mapValues(v -> {
                        if (v.startsWith("bad")) {
                            throw new IllegalArgumentException("bad value " + v);
                        }
                        return v.toUpperCase();
                    }).to("upper", Produced.with(S, S));
                    words.to("copy", Produced.with(S, S));
                    return builder.build(props);
                })
                .config("processing.exception.handler",
                        "org.apache.kafka.streams.errors.LogAndContinueProcessingExceptionHandler")
                .config("errors.dead.letter.queue.topic.name", "dlq")
                .input("words", "string", "string")
                .output("upper", "string", "string")
                .output("copy", "string", "string")
                .output("dlq", "string", "string")
                .pipe("words", "a", "ok", 1L, "h", "a")
                .pipe("words", "b", "bad1", 2L, "h", "b")
                .pipe("words", "c", "fine", 3L)
                .pipe("words", "b", "bad2", 4L);
    }
}
