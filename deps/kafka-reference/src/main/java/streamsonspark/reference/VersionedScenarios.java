package streamsonspark.reference;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;

/**
 * Versioned key-value stores (KIP-889) and stream-table joins against versioned tables (KIP-914), issue 13: a table
 * "prices" in a versioned store (history retention 10 ms) and a stream "orders" joined with it. Mirrored in
 * tests/conformance/test_kafka_reference.py (versioned_table, versioned_join, ..., versioned_view_join).
 */
final class VersionedScenarios {
    private VersionedScenarios() {}

    static final Serde<String> S = Serdes.String();

    static List<Scenario> all() {
        final List<Scenario> all = new ArrayList<>();
        all.add(versionedTable());
        for (final String kind : new String[] {"inner", "left"}) {
            all.add(versionedJoin(kind));
        }
        all.add(versionedDownstream());
        all.add(versionedFilter());
        all.add(versionedForeignKeyJoin());
        for (final String kind : new String[] {"inner", "left", "grace"}) {
            all.add(versionedViewJoin(kind));
        }
        return all;
    }

    static KTable<String, String> prices(final StreamsBuilder builder) {
        return builder.table("prices", Consumed.with(S, S),
                Materialized.<String, String>as(Stores.persistentVersionedKeyValueStore("prices-store",
                        Duration.ofMillis(10))).withKeySerde(S).withValueSerde(S));
    }

    /**
     * The table's updates (an out-of-order one within history retention is stored and forwarded, one older than
     * retention is neither) and as-of reads of the store by a left join without grace (each order reads the price as
     * of its timestamp; older than retention: only the latest version, if it is old enough).
     */
    static Scenario versionedTable() {
        return new Scenario("versioned-table", "default",
                "KTable in a versioned store: out-of-order updates within and beyond history retention, tombstones, "
                        + "as-of reads by a stream-table left join",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KTable<String, String> prices = prices(builder);
                    prices.toStream().to("price-updates", Produced.with(S, S));
                    builder.stream("orders", Consumed.with(S, S))
                            .leftJoin(prices, (o, p) -> o + "@" + Scenarios.n(p))
                            .to("orders-priced", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("prices", "string", "string")
                .input("orders", "string", "string")
                .output("price-updates", "string", "string")
                .output("orders-priced", "string", "string")
                .pipe("prices", "a", "p10", 10L)
                .pipe("prices", "a", "p20", 20L)
                .pipe("prices", "a", "p15", 15L)
                .pipe("prices", "a", "p5", 5L)
                .pipe("orders", "a", "o1", 12L)
                .pipe("orders", "a", "o2", 17L)
                .pipe("orders", "a", "o3", 25L)
                .pipe("orders", "a", "o4", 3L)
                .pipe("prices", "a", null, 30L)
                .pipe("orders", "a", "o5", 31L)
                .pipe("orders", "a", "o6", 22L)
                .pipe("prices", "a", "p25", 25L)
                .pipe("orders", "a", "o7", 26L)
                .pipe("prices", "b", "q1", 40L)
                .pipe("orders", "a", "o8", 29L)
                .pipe("orders", "b", "o9", 40L)
                .pipe("prices", "b", "q0", 35L)
                .pipe("orders", "b", "o10", 36L)
                .pipe("prices", "b", "q1b", 40L)
                .pipe("orders", "b", "o11", 41L)
                .pipe("prices", "b", "q2", 42L)
                .pipe("prices", "b", "q-old", 31L)
                .pipe("orders", "b", "o12", 35L);
    }

    /**
     * A stream-table join with a grace period of 5 ms: orders wait in the join's buffer until stream time passes
     * their timestamp + grace, so table updates arriving out of order within grace are seen; an order older than
     * grace joins at once; evicted in (timestamp, key) order.
     */
    static Scenario versionedJoin(final String kind) {
        return new Scenario("versioned-join", kind,
                "KStream " + kind + " join a versioned KTable with a grace period: buffered orders see out-of-order "
                        + "price updates",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KTable<String, String> prices = prices(builder);
                    final KStream<String, String> orders = builder.stream("orders", Consumed.with(S, S));
                    final Joined<String, String, String> joined =
                            Joined.with(S, S, S).withGracePeriod(Duration.ofMillis(5));
                    (kind.equals("inner")
                            ? orders.join(prices, (o, p) -> o + "@" + Scenarios.n(p), joined)
                            : orders.leftJoin(prices, (o, p) -> o + "@" + Scenarios.n(p), joined))
                            .to("orders-priced", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("prices", "string", "string")
                .input("orders", "string", "string")
                .output("orders-priced", "string", "string")
                .pipe("prices", "a", "p10", 10L)
                .pipe("orders", "a", "o1", 12L)
                .pipe("prices", "a", "p11", 11L)
                .pipe("orders", "a", "o2", 18L)
                .pipe("prices", "a", "p16", 16L)
                .pipe("orders", "a", "o3", 14L)
                .pipe("prices", "a", "p13", 13L)
                .pipe("orders", "a", "o4", 25L)
                .pipe("orders", "a", "o5", 10L)
                .pipe("orders", "b", "o6", 26L)
                .pipe("prices", "b", "q1", 20L)
                .pipe("orders", "b", "x1", 30L)
                .pipe("orders", "a", "x2", 30L)
                .pipe("orders", "a", "o7", 40L)
                .pipe("orders", "c", "z1", 41L)
                .pipe("orders", "a", null, 100L)
                .pipe("orders", "c", "z2", 50L)
                .pipe("orders", "b", "z3", 44L)
                .pipe("prices", "c", "r1", 43L);
    }
    /**
     * Versioned semantics downstream of a versioned table (KIP-914): an out-of-order update (not the latest version)
     * passes map_values and to_stream, but a table-table join and a group_by aggregation skip it (the join counts it
     * dropped); a store older than history retention is dropped at the source.
     */
    static Scenario versionedDownstream() {
        return new Scenario("versioned-downstream", "default",
                "Out-of-order updates of a versioned table through map_values, a table-table join and group_by count",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KTable<String, String> prices = prices(builder);
                    final KTable<String, String> discounts = builder.table("discounts", Consumed.with(S, S));
                    final KTable<String, String> marked = prices.mapValues(v -> v + "!");
                    marked.toStream().to("marked", Produced.with(S, S));
                    prices.join(discounts, (p, d) -> p + "-" + d).toStream().to("joined", Produced.with(S, S));
                    marked.groupBy((k, v) -> KeyValue.pair(v.substring(0, 1), v), Grouped.with(S, S))
                            .count()
                            .toStream()
                            .to("counts", Produced.with(S, Serdes.Long()));
                    return builder.build(props);
                })
                .input("prices", "string", "string")
                .input("discounts", "string", "string")
                .output("marked", "string", "string")
                .output("joined", "string", "string")
                .output("counts", "string", "long")
                .pipe("discounts", "a", "d1", 1L)
                .pipe("prices", "a", "p10", 10L)
                .pipe("prices", "a", "q20", 20L)
                .pipe("prices", "a", "p15", 15L)
                .pipe("prices", "b", "p30", 30L)
                .pipe("prices", "a", "q25", 25L)
                .pipe("prices", "a", "p1", 1L)
                .pipe("discounts", "b", "d2", 31L)
                .pipe("prices", "b", "q28", 28L)
                .pipe("prices", "b", "q31", 31L);
    }
    /**
     * Filters of a versioned table: unmaterialized (versioned semantics: a delete of an absent row is forwarded) and
     * materialized in a versioned store of its own (history retention 4 ms), which a stream joins as of its records.
     */
    static Scenario versionedFilter() {
        return new Scenario("versioned-filter", "default",
                "KTable filters of a versioned table, unmaterialized and in a versioned store, and a join against one",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KTable<String, String> prices = prices(builder);
                    prices.filter((k, v) -> v.startsWith("p")).toStream().to("filtered", Produced.with(S, S));
                    final KTable<String, String> kept = prices.filter((k, v) -> v.startsWith("p"),
                            Materialized.<String, String>as(Stores.persistentVersionedKeyValueStore("kept-store",
                                    Duration.ofMillis(4))).withKeySerde(S).withValueSerde(S));
                    kept.toStream().to("kept", Produced.with(S, S));
                    builder.stream("orders", Consumed.with(S, S))
                            .leftJoin(kept, (o, p) -> o + "@" + Scenarios.n(p))
                            .to("orders-priced", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("prices", "string", "string")
                .input("orders", "string", "string")
                .output("filtered", "string", "string")
                .output("kept", "string", "string")
                .output("orders-priced", "string", "string")
                .pipe("prices", "a", "p10", 10L)
                .pipe("prices", "a", "q12", 12L)
                .pipe("prices", "a", "q14", 14L)
                .pipe("prices", "a", "p11", 11L)
                .pipe("prices", "a", "p13", 13L)
                .pipe("prices", "b", "p20", 20L)
                .pipe("prices", "a", "p9", 9L)
                .pipe("prices", "a", "p17", 17L)
                .pipe("orders", "a", "o1", 11L)
                .pipe("orders", "a", "o2", 13L)
                .pipe("orders", "a", "o3", 15L)
                .pipe("orders", "a", "o4", 18L)
                .pipe("prices", "a", null, 21L)
                .pipe("prices", "a", null, 22L)
                .pipe("orders", "a", "o5", 21L);
    }

    /**
     * A foreign-key join of two versioned tables (KIP-914 for KIP-213): an out-of-order update of either table
     * (within history retention, so stored and forwarded as "not latest") is skipped by the join and counted dropped.
     */
    static Scenario versionedForeignKeyJoin() {
        return new Scenario("versioned-fk-join", "default",
                "KTable-KTable foreign-key join of two versioned tables: out-of-order updates on either side skipped",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KTable<String, String> orders = builder.table("orders", Consumed.with(S, S),
                            Materialized.<String, String>as(Stores.persistentVersionedKeyValueStore("orders-store",
                                    Duration.ofMillis(100))).withKeySerde(S).withValueSerde(S));
                    final KTable<String, String> customers = builder.table("customers", Consumed.with(S, S),
                            Materialized.<String, String>as(Stores.persistentVersionedKeyValueStore(
                                    "customers-store", Duration.ofMillis(100))).withKeySerde(S).withValueSerde(S));
                    orders.join(customers, o -> o.split(",")[0], (o, c) -> o + "/" + c)
                            .toStream().to("orders-enriched", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("orders", "string", "string")
                .input("customers", "string", "string")
                .output("orders-enriched", "string", "string")
                .pipe("customers", "c1", "Ann", 10L)
                .pipe("customers", "c2", "Bob", 10L)
                .pipe("orders", "o1", "c1,5", 20L)
                .pipe("orders", "o1", "c2,7", 15L)
                .pipe("customers", "c1", "Annie", 8L)
                .pipe("customers", "c1", "Ann2", 30L)
                .pipe("orders", "o2", "c2,9", 31L)
                .pipe("orders", "o1", "c2,6", 40L)
                .pipe("customers", "c2", "Bobby", 35L);
    }

    /**
     * Stream-table joins against unmaterialized views of a versioned table (KIP-914): a filter and a mapValues of
     * "prices" read through value getters that delegate get(key, asOf) to the versioned store, so each order sees
     * the view of the price as of its timestamp, not the latest price. "grace": left joins with a 5 ms grace period
     * (allowed: a view of a versioned table is versioned).
     */
    static Scenario versionedViewJoin(final String kind) {
        return new Scenario("versioned-view-join", kind,
                "KStream " + kind + " joins against an unmaterialized filter and mapValues of a versioned KTable: "
                        + "orders read the views as of their timestamps",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KTable<String, String> prices = prices(builder);
                    final KTable<String, String> cheap = prices.filter((k, v) -> v.startsWith("p"));
                    final KTable<String, String> marked = prices.mapValues(v -> v + "!");
                    final KStream<String, String> orders = builder.stream("orders", Consumed.with(S, S));
                    if (kind.equals("inner")) {
                        orders.join(cheap, (o, p) -> o + "@" + Scenarios.n(p))
                                .to("orders-cheap", Produced.with(S, S));
                        orders.join(marked, (o, p) -> o + "@" + Scenarios.n(p))
                                .to("orders-marked", Produced.with(S, S));
                    } else if (kind.equals("left")) {
                        orders.leftJoin(cheap, (o, p) -> o + "@" + Scenarios.n(p))
                                .to("orders-cheap", Produced.with(S, S));
                        orders.leftJoin(marked, (o, p) -> o + "@" + Scenarios.n(p))
                                .to("orders-marked", Produced.with(S, S));
                    } else {
                        final Joined<String, String, String> joined =
                                Joined.with(S, S, S).withGracePeriod(Duration.ofMillis(5));
                        orders.leftJoin(cheap, (o, p) -> o + "@" + Scenarios.n(p), joined)
                                .to("orders-cheap", Produced.with(S, S));
                        orders.leftJoin(marked, (o, p) -> o + "@" + Scenarios.n(p), joined)
                                .to("orders-marked", Produced.with(S, S));
                    }
                    return builder.build(props);
                })
                .input("prices", "string", "string")
                .input("orders", "string", "string")
                .output("orders-cheap", "string", "string")
                .output("orders-marked", "string", "string")
                .pipe("prices", "a", "p10", 10L)
                .pipe("prices", "a", "x20", 20L)
                .pipe("prices", "a", "p15", 15L)
                .pipe("orders", "a", "o1", 12L)
                .pipe("orders", "a", "o2", 17L)
                .pipe("orders", "a", "o3", 25L)
                .pipe("orders", "a", "o4", 3L)
                .pipe("prices", "a", "p18", 18L)
                .pipe("orders", "a", "o5", 19L)
                .pipe("prices", "b", "q40", 40L)
                .pipe("orders", "b", "o6", 38L)
                .pipe("orders", "b", "o7", 41L)
                .pipe("prices", "a", null, 42L)
                .pipe("orders", "a", "o8", 41L)
                .pipe("orders", "a", "o9", 43L)
                .pipe("prices", "b", "q36", 36L)
                .pipe("orders", "b", "o10", 37L)
                .pipe("orders", "a", "o11", 21L)
                .pipe("orders", "b", "o12", 60L);
    }
}
