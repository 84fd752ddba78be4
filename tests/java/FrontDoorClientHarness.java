// Kafka's own Java clients (kafka-clients 4.3.0) through the front door: a producer, a consumer
// in a group, a transactional producer and an Admin, each configured only through ordinary
// client properties. Line protocol; free-text fields are base64, "-" is empty.
import java.io.StringReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class FrontDoorClientHarness extends LineProtocol {
    static final Duration WAIT = Duration.ofSeconds(30);

    static Properties props(String f) throws Exception {
        Properties p = new Properties();
        p.load(new StringReader(decs(f)));
        return p;
    }

    static String node(Node n) {
        return n.id() + "@" + n.host() + ":" + n.port();
    }

    static KafkaProducer<String, String> producer(Properties p) {
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    /** Send values to partition 0 of topic, each acknowledged; their offsets. */
    static List<Long> send(KafkaProducer<String, String> producer, String topic, List<String> values)
            throws Exception {
        List<Long> offsets = new ArrayList<>();
        for (String v : values)
            offsets.add(producer.send(new ProducerRecord<>(topic, 0, null, v)).get(30, TimeUnit.SECONDS).offset());
        return offsets;
    }

    static List<String> values(String prefix, int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) out.add(prefix + i);
        return out;
    }

    static String joined(Collection<?> items) {
        List<String> out = new ArrayList<>();
        for (Object o : items) out.add(String.valueOf(o));
        return enc(String.join(",", out));
    }

    static String handle(String[] a) throws Exception {
        switch (a[0]) {
            case "produce": {
                // produce <props> <topic> <n>: values v0..v<n-1>; their offsets
                try (KafkaProducer<String, String> p = producer(props(a[1]))) {
                    return "ok " + joined(send(p, decs(a[2]), values("v", Integer.parseInt(a[3]))));
                }
            }
            case "produceFor": {
                // produceFor <props> <topic> <ms>: r0, r1, ... one at a time, each
                // acknowledged, for ms milliseconds after the first; how many
                int sent = 0;
                try (KafkaProducer<String, String> p = producer(props(a[1]))) {
                    send(p, decs(a[2]), List.of("r" + sent++));
                    long until = System.nanoTime() + Long.parseLong(a[3]) * 1_000_000L;
                    while (System.nanoTime() < until) {
                        send(p, decs(a[2]), List.of("r" + sent));
                        sent++;
                        Thread.sleep(20);
                    }
                }
                return "ok " + sent;
            }
            case "transact": {
                // transact <props> <topic>: t0..t2 committed, then x0..x2 aborted
                try (KafkaProducer<String, String> p = producer(props(a[1]))) {
                    p.initTransactions();
                    p.beginTransaction();
                    List<Long> committed = send(p, decs(a[2]), values("t", 3));
                    p.commitTransaction();
                    p.beginTransaction();
                    send(p, decs(a[2]), values("x", 3));
                    p.abortTransaction();
                    return "ok " + joined(committed);
                }
            }
            case "consume": {
                // consume <props with group.id> <topic>: subscribe, read to the end of
                // partition 0, commit; the values read and the group's committed offset
                return consume(props(a[1]), decs(a[2]));
            }
            case "cluster": {
                // cluster <props>: describeCluster's nodes and controller, and the topics
                try (Admin admin = Admin.create(props(a[1]))) {
                    DescribeClusterResult r = admin.describeCluster();
                    Set<String> nodes = new TreeSet<>();
                    for (Node n : r.nodes().get(30, TimeUnit.SECONDS)) nodes.add(node(n));
                    String controller = node(r.controller().get(30, TimeUnit.SECONDS));
                    Set<String> topics = new TreeSet<>(admin.listTopics().names().get(30, TimeUnit.SECONDS));
                    return "ok " + joined(nodes) + " " + enc(controller) + " " + joined(topics);
                }
            }
            default:
                return "err " + enc("unknown command " + a[0]);
        }
    }

    static String consume(Properties p, String topic) throws Exception {
        TopicPartition tp = new TopicPartition(topic, 0);
        List<String> got = new ArrayList<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            c.subscribe(List.of(topic));
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (true) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) got.add(r.value());
                if (c.assignment().contains(tp)) {
                    // read_committed: the end is the last stable offset (KIP-98)
                    long end = c.endOffsets(List.of(tp)).get(tp);
                    if (c.position(tp) >= end) break;
                }
                if (System.nanoTime() > deadline) throw new IllegalStateException("read only " + got);
            }
            c.commitSync(WAIT);
            OffsetAndMetadata committed = c.committed(Set.of(tp), WAIT).get(tp);
            return "ok " + joined(got) + " " + (committed == null ? -1 : committed.offset());
        }
    }

    /** The root cause's class and message, for the test to show what the client saw. */
    static String describe(Throwable t) {
        Throwable r = t;
        while (r instanceof ExecutionException && r.getCause() != null) r = r.getCause();
        return chain(r);
    }

    public static void main(String[] args) throws Exception {
        serve(FrontDoorClientHarness::handle, FrontDoorClientHarness::describe);
    }
}
