package streamsonspark.reference;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.ValueJoiner;

/**
 * When left/outer stream-stream joins emit their non-joined records (Kafka's
 * {@code KStreamKStreamJoin.emitNonJoinedOuterRecords}): the wall-clock throttle (a scan of the outer-join store at
 * most once per {@code __emit.interval.ms.kstreams.outer.join.spurious.results.fix__}, default 1000 ms, of the
 * driver's mock clock) and the earliest time the join tracks after a scan (the last record the scan visited, even
 * when it emitted it). Mirrored in tests/conformance/test_kafka_reference.py (outer_join_emission).
 */
final class OuterJoinScenarios {
    private OuterJoinScenarios() {}

    static final Serde<String> S = Serdes.String();
    static final String EMIT_INTERVAL = "__emit.interval.ms.kstreams.outer.join.spurious.results.fix__";

    static List<Scenario> all() {
        final List<Scenario> all = new ArrayList<>();
        for (final String kind : new String[] {"left", "outer"}) {
            all.add(emitThrottle(kind, false));
            all.add(emitThrottle(kind, true));
            all.add(minTime(kind));
            all.add(minTimeAsymmetric(kind));
        }
        return all;
    }

    /** left/outer join of "left" and "right" into "joined", the joiner rendering a missing side as "null". */
    static Scenario join(final String name, final String variant, final String description, final String kind,
                         final JoinWindows windows) {
        return new Scenario(name, variant, description,
                props -> {
                    final StreamsBuilder builder = new StreamsBuilder();
                    final KStream<String, String> left = builder.stream("left", Consumed.with(S, S));
                    final KStream<String, String> right = builder.stream("right", Consumed.with(S, S));
                    final ValueJoiner<String, String, String> joiner = (l, r) -> Scenarios.n(l) + "+" + Scenarios.n(r);
                    final StreamJoined<String, String, String> serdes = StreamJoined.with(S, S, S);
                    (kind.equals("left") ? left.leftJoin(right, joiner, windows, serdes)
                            : left.outerJoin(right, joiner, windows, serdes))
                            .to("joined", Produced.with(S, S));
                    return builder.build(props);
                })
                .input("left", "string", "string")
                .input("right", "string", "string")
                .output("joined", "string", "string");
    }

    /**
     * Emit interval 1000 ms (KafkaStreams' default; TopologyTestDriver's own default is 0): the first record scans the
     * empty store (the earliest time is Long.MAX_VALUE, and MAX_VALUE + 10 overflows) and takes the first second;
     * non-joined records due later in that second wait for the clock to move and a record to come (advancing the
     * clock alone emits nothing); a scan is allowed again exactly a second after the last one. With the emit
     * interval 0 each is emitted when due.
     */
    static Scenario emitThrottle(final String kind, final boolean intervalZero) {
        final Scenario s = join("outer-join-emit-throttle", kind + (intervalZero ? "-interval-0" : ""),
                "KStream " + kind + " join KStream, JoinWindows ofTimeDifferenceWithNoGrace(10): non-joined records "
                        + "due within one second of wall-clock time" + (intervalZero ? ", emit interval 0" : ""),
                kind, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(10)));
        return s.config(EMIT_INTERVAL, intervalZero ? "0" : "1000")
                .pipe("left", "a", "a1", 0L)
                .pipe("right", "x", "x1", 3L)
                .pipe("left", "b", "b1", 5L)
                .pipe("left", "c", "c1", 20L, "h", "c1")
                .pipe("right", "y", "y1", 22L)
                .pipe("left", "d", "d1", 25L)
                .pipe("left", "e", "e1", 40L, "h", "e1")
                .pipe("right", "z", "z1", 41L)
                .advanceWallClock(1000L)
                .pipe("left", "f", "f1", 42L, "h", "f1")
                .advanceWallClock(500L)
                .pipe("left", "g", "g1", 60L)
                .pipe("right", "g", "g2", 65L)
                .advanceWallClock(500L)
                .pipe("left", "h", "h1", 61L, "h", "h1")
                .pipe("left", "k", "k1", 200L)
                .advanceWallClock(999L)
                .pipe("left", "m", "m1", 211L)
                .advanceWallClock(1L)
                .pipe("left", "n", "n1", 212L, "h", "n1");
    }

    /**
     * Emit interval 1000 ms. After a scan the join's earliest time is the last record the scan visited, also one it
     * emitted and removed: after the store emptied (a1 emitted, b1 then waits), the next record's scan runs sooner
     * than the waiting b1 asks for (a no-op) and takes the second, so b0 and b1, due at d1, wait for the clock.
     */
    static Scenario minTime(final String kind) {
        return join("outer-join-min-time", kind,
                "KStream " + kind + " join KStream, JoinWindows ofTimeDifferenceWithNoGrace(10): the scan after the "
                        + "store emptied, out-of-order records",
                kind, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(10)))
                .config(EMIT_INTERVAL, "1000")
                .pipe("left", "a", "a1", 0L)
                .advanceWallClock(1000L)
                .pipe("left", "b", "b1", 20L)
                .advanceWallClock(1000L)
                .pipe("right", "r", "r1", 21L)
                .pipe("left", "b", "b0", 18L)
                .pipe("left", "d", "d1", 31L)
                .pipe("right", "d", "d2", 32L)
                .advanceWallClock(1000L)
                .pipe("left", "e", "e1", 33L)
                .advanceWallClock(1000L)
                .pipe("left", "f", "f1", 50L)
                .pipe("left", "g", "g1", 45L)
                .advanceWallClock(1000L)
                .pipe("left", "h", "h1", 70L);
    }

    /**
     * Windows of 20 ms before and 5 ms after, TopologyTestDriver's emit interval (0): whether a side's processor scans is gated by its own
     * "after" (20 ms for the right side), counted from the join's earliest time, so after the store emptied the
     * right side scans (and emits the left's closed records) sooner than the waiting records' own times allow.
     */
    static Scenario minTimeAsymmetric(final String kind) {
        return join("outer-join-min-time", kind + "-asymmetric",
                "KStream " + kind + " join KStream, JoinWindows ofTimeDifferenceWithNoGrace(5).before(20), the "
                        + "driver's emit interval: the right side's scan after the store emptied",
                kind, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(5)).before(Duration.ofMillis(20)))
                .pipe("left", "a", "a1", 0L)
                .pipe("left", "b", "b1", 10L)
                .pipe("right", "r", "r1", 25L)
                .pipe("right", "s", "s1", 31L)
                .pipe("left", "c", "c1", 40L)
                .pipe("right", "t", "t1", 52L)
                .pipe("right", "u", "u1", 70L)
                .pipe("right", "v", "v1", 100L);
    }
}
