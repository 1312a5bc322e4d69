package streamsonspark.reference;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TableJoined;
import org.apache.kafka.streams.kstream.ValueJoiner;
import org.apache.kafka.streams.kstream.internals.foreignkeyjoin.SubscriptionResponseWrapper;
import org.apache.kafka.streams.kstream.internals.foreignkeyjoin.SubscriptionResponseWrapperSerde;
import org.apache.kafka.streams.kstream.internals.foreignkeyjoin.SubscriptionWrapper;
import org.apache.kafka.streams.kstream.internals.foreignkeyjoin.SubscriptionWrapperSerde;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.internals.Murmur3;

/**
 * Foreign-key table-table joins (KIP-213, issue 13): orders(orderId -> "customerId,amount") joined with
 * customers(customerId -> name). Mirrored in tests/conformance/test_kafka_reference.py (fk_join).
 */
final class ForeignKeyScenarios {
    private ForeignKeyScenarios() {}

    static final Serde<String> S = Serdes.String();

    static List<Scenario> all() {
        final List<Scenario> all = new ArrayList<>();
        for (final String kind : new String[] {"inner", "left"}) {
            all.add(fkJoin(kind));
        }
        all.add(fkJoinUnmaterialized());
        return all;
    }

    /**
     * Wire vectors of the join's internal formats (tests/unit/serde/test_foreign_key_serdes.py reads them):
     * {@code java -cp 'deps/kafka-reference/target/kafka-reference.jar:deps/kafka-reference/target/lib/*'
     * streamsonspark.reference.ForeignKeyScenarios > tests/data/foreign-key-wire-vectors.json}
     */
    public static void main(final String[] args) {
        final StringBuilder out = new StringBuilder("{\"kafka_version\": \"4.3.1\",\n \"murmur3_hash128\": [");
        final String[] inputs = {"", "a", "c1,10", "hello world", "0123456789abcdef", "0123456789abcdefXYZ",
            "\u00e9t\u00e9 \u2603 \ud83d\ude00 orders and customers, a longer value 12345"};
        for (int i = 0; i < inputs.length; i++) {
            final byte[] b = inputs[i].getBytes(StandardCharsets.UTF_8);
            final long[] h = Murmur3.hash128(b);
            out.append(i == 0 ? "\n  " : ",\n  ").append("{\"bytes_hex\": \"").append(hex(b))
                    .append("\", \"hash128\": [").append(h[0]).append(", ").append(h[1]).append("]}");
        }
        final SubscriptionWrapperSerde<String> subscriptions = new SubscriptionWrapperSerde<>(() -> "t-pk", S);
        final SubscriptionResponseWrapperSerde<String> responses = new SubscriptionResponseWrapperSerde<>(S);
        final long[] h = Murmur3.hash128("c1,10".getBytes(StandardCharsets.UTF_8));
        final Object[][] subs = {
            {h, SubscriptionWrapper.Instruction.PROPAGATE_ONLY_IF_FK_VAL_AVAILABLE, "o1", 3},
            {null, SubscriptionWrapper.Instruction.DELETE_KEY_AND_PROPAGATE, "o2", 0},
            {h, SubscriptionWrapper.Instruction.PROPAGATE_NULL_IF_NO_FK_VAL_AVAILABLE, "order-\u00e9", 2},
            {h, SubscriptionWrapper.Instruction.DELETE_KEY_NO_PROPAGATE, "o4", 1}};
        out.append("],\n \"subscriptions\": [");
        for (int i = 0; i < subs.length; i++) {
            final SubscriptionWrapper.Instruction instruction = (SubscriptionWrapper.Instruction) subs[i][1];
            final byte[] b = subscriptions.serializer().serialize("t", new RecordHeaders(),
                    new SubscriptionWrapper<>((long[]) subs[i][0], instruction, (String) subs[i][2],
                            (Integer) subs[i][3]));
            out.append(i == 0 ? "\n  " : ",\n  ").append(String.format(
                    "{\"hash\": %s, \"instruction\": %d, \"primary_key\": \"%s\", \"primary_partition\": %d, "
                            + "\"bytes_hex\": \"%s\"}",
                    hashJson((long[]) subs[i][0]), instruction.value(), subs[i][2], subs[i][3], hex(b)));
        }
        final Object[][] resps = {{h, "alice"}, {h, null}, {null, "bob"}, {null, null}};
        out.append("],\n \"responses\": [");
        for (int i = 0; i < resps.length; i++) {
            final byte[] b = responses.serializer().serialize("t", new RecordHeaders(),
                    new SubscriptionResponseWrapper<>((long[]) resps[i][0], (String) resps[i][1], null));
            out.append(i == 0 ? "\n  " : ",\n  ").append(String.format(
                    "{\"hash\": %s, \"foreign_value\": %s, \"bytes_hex\": \"%s\"}", hashJson((long[]) resps[i][0]),
                    resps[i][1] == null ? "null" : "\"" + resps[i][1] + "\"", hex(b)));
        }
        System.out.println(out.append("]}"));
    }

    static String hex(final byte[] bytes) {
        final StringBuilder s = new StringBuilder();
        for (final byte b : bytes) {
            s.append(String.format("%02x", b));
        }
        return s.toString();
    }

    static String hashJson(final long[] hash) {
        return hash == null ? "null" : "[" + hash[0] + ", " + hash[1] + "]";
    }

    /** The customer id of an order, or null for an order without one (",40"). */
    static String customerOf(final String order) {
        return order.startsWith(",") ? null : order.split(",")[0];
    }

    /**
     * A left join with a (key, value) extractor (KIP-1104's BiFunction) and no Materialized: the result store's name is
     * generated (and burns an index) but the result is not materialized.
     */
    static Scenario fkJoinUnmaterialized() {
        return new Scenario("fk-join", "left-unmaterialized",
                "KTable left foreign-key join with a (key, value) extractor, result not materialized",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KTable<String, String> orders = builder.table("orders", Consumed.with(S, S));
                    final KTable<String, String> customers = builder.table("customers", Consumed.with(S, S));
                    orders.leftJoin(customers, (k, v) -> k.startsWith("x") ? null : customerOf(v),
                                    (o, c) -> o + "/" + Scenarios.n(c))
                            .toStream()
                            .to("orders-enriched", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("orders", "string", "string")
                .input("customers", "string", "string")
                .output("orders-enriched", "string", "string")
                .pipe("orders", "o1", "c1,10", 1L)
                .pipe("customers", "c1", "alice", 2L)
                .pipe("orders", "x1", "c1,5", 3L)
                .pipe("customers", "c1", "alice2", 4L)
                .pipe("orders", "o1", "c2,11", 5L)
                .pipe("customers", "c2", "bob", 6L)
                .pipe("orders", "x1", null, 7L)
                .pipe("customers", "c1", null, 8L);
    }

    /**
     * Inner: default (generated) names; left: named with TableJoined.as("oc"). Both materialize the result as
     * "order-customer" (caching off) and write it to "orders-enriched".
     */
    static Scenario fkJoin(final String kind) {
        return new Scenario("fk-join", kind,
                "KTable " + kind + " foreign-key join KTable: inserts on both sides, a foreign key change, order and "
                        + "customer tombstones, a customer update fanning out, a null foreign key",
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KTable<String, String> orders = builder.table("orders", Consumed.with(S, S));
                    final KTable<String, String> customers = builder.table("customers", Consumed.with(S, S));
                    final ValueJoiner<String, String, String> joiner = (o, c) -> o + "/" + Scenarios.n(c);
                    final Materialized<String, String, KeyValueStore<Bytes, byte[]>> m =
                            Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("order-customer")
                                    .withKeySerde(S).withValueSerde(S).withCachingDisabled();
                    final KTable<String, String> joined = kind.equals("inner")
                            ? orders.join(customers, ForeignKeyScenarios::customerOf, joiner, m)
                            : orders.leftJoin(customers, ForeignKeyScenarios::customerOf, joiner,
                                    TableJoined.as("oc"), m);
                    joined.toStream().to("orders-enriched", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("orders", "string", "string")
                .input("customers", "string", "string")
                .output("orders-enriched", "string", "string")
                .store("order-customer", "timestamped-kv")
                .pipe("customers", "c1", "alice", 1L)
                .pipe("orders", "o1", "c1,10", 2L, "h", "o1")
                .pipe("orders", "o2", "c2,20", 3L)
                .pipe("customers", "c2", "bob", 4L, "h", "c2")
                .pipe("orders", "o3", "c1,30", 5L)
                .pipe("customers", "c1", "alice2", 6L)
                .pipe("orders", "o1", "c2,11", 7L)
                .pipe("orders", "o2", null, 8L)
                .pipe("customers", "c2", null, 9L)
                .pipe("orders", "o4", ",40", 10L)
                .pipe("orders", "o4", "c1,41", 11L)
                .pipe("orders", "o3", "c3,31", 12L)
                .pipe("orders", "o1", "c2,12", 5L)
                .pipe("customers", "c3", "carol", 13L)
                .pipe("orders", "o9", null, 14L)
                .pipe("customers", "c1", "alice2", 15L)
                .pipe("orders", "o4", "c3,41", 16L)
                .pipe("orders", "o5", ",50", 17L)
                .pipe("orders", "o5", null, 18L);
    }
}
