package streamsonspark.kafka;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

/**
 * Writes streams-on-spark record batches to Kafka with a {@link Producer}: one call per batch from Python (py4j)
 * instead of one per record. A batch is the layout of {@code connectors/record_batch.py}: records back to back,
 * each a little-endian prefix (timestamp int64, key length int32, value length int32, header count int32; -1 is
 * null), the key, the value and the headers (key length int32, UTF-8 key, value length int32, value); {@code ends}
 * holds each record's end position as a little-endian int64. Every record keeps its partition, timestamp and
 * headers, which Spark's own Kafka sink would not (it drops record timestamps).
 */
public final class RecordBatchWriter {
    private final Producer<byte[], byte[]> producer;
    private final List<Future<RecordMetadata>> pending = new ArrayList<>();
    private final List<String> batches = new ArrayList<>();       // "topic-partition" of each batch sent
    private final List<Integer> batchEnds = new ArrayList<>();    // index in pending after each batch

    public RecordBatchWriter(Producer<byte[], byte[]> producer) {
        this.producer = producer;
    }

    /** Sends every record of one batch to {@code topic}-{@code partition}; returns how many were sent. */
    public int send(String topic, int partition, byte[] data, byte[] ends) {
        ByteBuffer in = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer endsIn = ByteBuffer.wrap(ends).order(ByteOrder.LITTLE_ENDIAN);
        int count = ends.length / 8;
        for (int i = 0; i < count; i++) {
            long timestamp = in.getLong();
            int keyLength = in.getInt();
            int valueLength = in.getInt();
            int headerCount = in.getInt();
            byte[] key = bytes(in, keyLength);
            byte[] value = bytes(in, valueLength);
            List<Header> headers = new ArrayList<>(headerCount);
            for (int h = 0; h < headerCount; h++) {
                String headerKey = new String(bytes(in, in.getInt()), StandardCharsets.UTF_8);
                headers.add(new RecordHeader(headerKey, bytes(in, in.getInt())));
            }
            long end = endsIn.getLong();
            if (in.position() != end) {
                throw new IllegalArgumentException("corrupt record batch for " + topic + "-" + partition + ": record " + i
                        + " ends at " + in.position() + ", its index says " + end);
            }
            pending.add(producer.send(new ProducerRecord<>(topic, partition, timestamp, key, value, headers)));
        }
        if (in.hasRemaining()) {
            throw new IllegalArgumentException("corrupt record batch for " + topic + "-" + partition + ": "
                    + in.remaining() + " bytes after its " + count + " records");
        }
        batches.add(topic + "-" + partition);
        batchEnds.add(pending.size());
        return count;
    }

    /** Flushes the producer and waits for every record sent so far to be acknowledged; the first failure throws. */
    public int flush(long timeoutMs) throws Exception {
        producer.flush();
        int acknowledged = 0;
        try {
            for (int i = 0; i < pending.size(); i++) {
                try {
                    pending.get(i).get(timeoutMs, TimeUnit.MILLISECONDS);
                } catch (ExecutionException e) {
                    throw new RuntimeException("writing a record to " + origin(i) + " failed: " + e.getCause(), e.getCause());
                }
                acknowledged++;
            }
        } finally {
            pending.clear();
            batches.clear();
            batchEnds.clear();
        }
        return acknowledged;
    }

    private String origin(int record) {
        int batch = 0;
        while (batchEnds.get(batch) <= record) {
            batch++;
        }
        int first = batch == 0 ? 0 : batchEnds.get(batch - 1);
        return batches.get(batch) + " (record " + (record - first) + " of its batch)";
    }

    private static byte[] bytes(ByteBuffer in, int length) {
        if (length < 0) {
            return null;
        }
        byte[] out = new byte[length];
        in.get(out);
        return out;
    }
}
