package io.tributary.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.tributary.client.Producer;
import io.tributary.client.ProducerRecord;
import io.tributary.client.RecordMetadata;
import io.tributary.client.Serializer;
import io.tributary.client.TributaryClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One broker JVM, a 6-partition topic, three consumer JVMs ({@link GroupMemberMain}) in one group processing a
 * continuous stream and committing; one consumer JVM is SIGKILLed. Its partitions move to the others; every produced
 * record is processed at least once; a record is processed again only if its offset had not been committed; and no
 * partition is ever owned by two live members at once (from each member's own log of assignments).
 */
class GroupFailoverIT {
  private static final String TOPIC = "stream";
  private static final String GROUP = "workers";
  private final List<Process> members = new ArrayList<>();
  private BrokerProcess broker;

  @AfterEach
  void stopAll() {
    for (Process p : members) {
      p.destroyForcibly();
    }
    if (broker != null) {
      broker.close();
    }
  }

  private record Event(char type, long time, String[] fields) {}

  private static List<Event> read(Path log) {
    List<Event> out = new ArrayList<>();
    try {
      if (!Files.exists(log)) {
        return out;
      }
      String text = Files.readString(log, StandardCharsets.UTF_8);
      // only whole lines: the last line may be one a member is still writing (a CI run read "R <time> 1" and the
      // check of the record values failed with an index out of bounds; a cut value would read as another record's),
      // or one a member killed with SIGKILL left cut short for good
      for (String line : text.substring(0, text.lastIndexOf('\n') + 1).split("\n")) {
        String[] f = line.split(" ");
        if (f.length >= 2) {
          out.add(new Event(f[0].charAt(0), Long.parseLong(f[1]), f));
        }
      }
    } catch (IOException | RuntimeException e) {
      // a line being written: read again next time
    }
    return out;
  }

  /** The partitions a member owns at the end of its log (assigned minus revoked/lost). */
  private static Set<Integer> owned(List<Event> events) {
    Set<Integer> owned = new HashSet<>();
    for (Event e : events) {
      if (e.type() == 'A' || e.type() == 'V' || e.type() == 'L') {
        Set<Integer> ps = partitions(e.fields()[2]);
        if (e.type() == 'A') {
          owned.addAll(ps);
        } else {
          owned.removeAll(ps);
        }
      }
    }
    return owned;
  }

  private static Set<Integer> partitions(String s) {
    Set<Integer> out = new HashSet<>();
    if (!s.equals("-")) {
      for (String p : s.split(",")) {
        out.add(Integer.parseInt(p));
      }
    }
    return out;
  }

  private static void await(String what, Duration max, BooleanSupplier check) throws InterruptedException {
    long deadline = System.nanoTime() + max.toNanos();
    while (!check.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("timed out after " + max.toSeconds() + " s waiting for: " + what);
      }
      Thread.sleep(100); // polling other processes' logs: there is no event to subscribe to
    }
  }

  private Process startMember(Path dir, String bootstrap, int i) throws IOException {
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> cmd = List.of(java, "-Xmx256m", "-Dlogback.configurationFile=logback.xml", "-cp",
        System.getProperty("java.class.path"), GroupMemberMain.class.getName(), bootstrap, GROUP, TOPIC,
        dir.resolve("member-" + i + ".log").toString(), "member-" + i);
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(dir.resolve("member-" + i + ".out").toFile()).start();
    members.add(p);
    return p;
  }

  @Test
  void killedMembersPartitionsMoveAndNothingIsLostOrDoubleOwned() throws Exception {
    Path dir = JavaProcesses.testDir("GroupFailoverIT", "killed");
    Path logDir = dir.resolve("logs");
    Files.createDirectories(logDir);
    // the broker process reads ./application.conf from its working directory (the log dir)
    Files.writeString(logDir.resolve("application.conf"), String.join("\n",
        "tributary.broker.group.initial.rebalance.delay.ms = 500",
        "tributary.broker.group.min.session.timeout.ms = 1000",
        "tributary.broker.offsets.topic.num.partitions = 5", ""));
    broker = BrokerProcess.start("broker", dir.resolve("data"), BrokerProcess.freePort(), logDir);
    String bootstrap = broker.awaitReady();

    Map<String, Integer> ackedPartition = new ConcurrentHashMap<>();
    Map<String, Long> ackedOffset = new ConcurrentHashMap<>();
    AtomicBoolean producing = new AtomicBoolean(true);
    try (TributaryClient client = TributaryClient.connect(bootstrap)) {
      client.admin().createTopic(TOPIC, 6, (short) 1, Map.of());
      Producer<String, String> producer = client.producer(Map.of("acks", "1", "linger.ms", "5"),
          Serializer.string(), Serializer.string());
      Thread producerThread = new Thread(() -> {
        long n = 0;
        while (producing.get()) {
          String value = "v-" + n;
          producer.send(new ProducerRecord<>(TOPIC, "k-" + n, value)).whenComplete((RecordMetadata md, Throwable ex) -> {
            if (ex == null) {
              ackedPartition.put(value, md.partition());
              ackedOffset.put(value, md.offset());
            }
          });
          n++;
          if (n % 50 == 0) {
            try {
              Thread.sleep(10); // a steady stream of ~5000 records/s, not a flood
            } catch (InterruptedException e) {
              return;
            }
          }
        }
      }, "producer");
      producerThread.start();

      for (int i = 0; i < 3; i++) {
        startMember(dir, bootstrap, i);
      }
      Path[] logs = {dir.resolve("member-0.log"), dir.resolve("member-1.log"), dir.resolve("member-2.log")};
      await("all three members own partitions and process records", Duration.ofSeconds(90), () -> {
        Set<Integer> union = new HashSet<>();
        for (Path l : logs) {
          List<Event> ev = read(l);
          Set<Integer> o = owned(ev);
          if (o.isEmpty() || ev.stream().noneMatch(e -> e.type() == 'R')) {
            return false;
          }
          union.addAll(o);
        }
        return union.size() == 6;
      });
      Set<Integer> victimPartitions = owned(read(logs[1]));
      members.get(1).destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      long killTime = System.currentTimeMillis();

      await("the killed member's partitions are assigned to the others", Duration.ofSeconds(60), () -> {
        Set<Integer> others = new HashSet<>(owned(read(logs[0])));
        others.addAll(owned(read(logs[2])));
        return others.containsAll(victimPartitions) && others.size() == 6;
      });
      Thread.sleep(1000); // keep producing for a moment after the move
      producing.set(false);
      producerThread.join();
      producer.flush();
      producer.close();

      await("the survivors processed every acknowledged record", Duration.ofSeconds(60), () -> {
        Set<String> seen = new HashSet<>();
        for (Path l : List.of(logs[0], logs[1], logs[2])) {
          for (Event e : read(l)) {
            if (e.type() == 'R') {
              seen.add(e.fields()[4]);
            }
          }
        }
        return seen.containsAll(ackedOffset.keySet());
      });
      members.get(0).destroy();
      members.get(2).destroy();
      assertTrue(members.get(0).waitFor(60, TimeUnit.SECONDS));
      assertTrue(members.get(2).waitFor(60, TimeUnit.SECONDS));

      verify(List.of(read(logs[0]), read(logs[1]), read(logs[2])), killTime, ackedPartition, ackedOffset);
    }
  }

  private static void verify(List<List<Event>> logs, long killTime, Map<String, Integer> ackedPartition,
      Map<String, Long> ackedOffset) {
    // 1. at least once, with the acknowledged partition and offset
    Map<String, String> firstSeenAt = new HashMap<>();
    for (List<Event> log : logs) {
      for (Event e : log) {
        if (e.type() == 'R') {
          firstSeenAt.putIfAbsent(e.fields()[4], e.fields()[2] + "@" + e.fields()[3]);
        }
      }
    }
    for (Map.Entry<String, Long> a : ackedOffset.entrySet()) {
      String where = firstSeenAt.get(a.getKey());
      assertEquals(ackedPartition.get(a.getKey()) + "@" + a.getValue(), where, "record " + a.getKey());
    }
    // 2. a record is processed again only if its offset was not committed before
    List<long[]> commits = new ArrayList<>(); // partition, offset, time
    List<long[]> processed = new ArrayList<>(); // partition, offset, time
    for (List<Event> log : logs) {
      for (Event e : log) {
        if (e.type() == 'C') {
          commits.add(new long[] {Long.parseLong(e.fields()[2]), Long.parseLong(e.fields()[3]), e.time()});
        } else if (e.type() == 'R') {
          processed.add(new long[] {Long.parseLong(e.fields()[2]), Long.parseLong(e.fields()[3]), e.time()});
        }
      }
    }
    Map<String, Integer> times = new HashMap<>();
    int duplicates = 0;
    for (long[] r : processed) {
      String key = r[0] + "@" + r[1];
      if (times.merge(key, 1, Integer::sum) > 1) {
        duplicates++;
        for (long[] c : commits) {
          if (c[0] == r[0] && c[1] > r[1] && c[2] < r[2]) {
            fail("record " + key + " processed again at " + r[2] + " after offset " + c[1] + " was committed at "
                + c[2]);
          }
        }
      }
    }
    // 3. no partition owned by two live members at once
    Map<Integer, List<long[]>> intervals = new HashMap<>(); // partition -> [member, start, end]
    for (int m = 0; m < logs.size(); m++) {
      Map<Integer, Long> since = new HashMap<>();
      long end = Long.MAX_VALUE;
      for (Event e : logs.get(m)) {
        if (e.type() == 'A') {
          for (int p : partitions(e.fields()[2])) {
            since.put(p, e.time());
          }
        } else if (e.type() == 'V' || e.type() == 'L') {
          for (int p : partitions(e.fields()[2])) {
            Long s = since.remove(p);
            if (s != null) {
              intervals.computeIfAbsent(p, k -> new ArrayList<>()).add(new long[] {m, s, e.time()});
            }
          }
        } else if (e.type() == 'X') {
          end = e.time();
        }
      }
      long close = m == 1 ? killTime : end;
      for (Map.Entry<Integer, Long> open : since.entrySet()) {
        intervals.computeIfAbsent(open.getKey(), k -> new ArrayList<>()).add(new long[] {m, open.getValue(), close});
      }
    }
    for (Map.Entry<Integer, List<long[]>> e : intervals.entrySet()) {
      List<long[]> list = e.getValue();
      list.sort((a, b) -> Long.compare(a[1], b[1]));
      for (int i = 1; i < list.size(); i++) {
        long[] prev = list.get(i - 1);
        long[] cur = list.get(i);
        if (prev[0] != cur[0] && cur[1] < prev[2]) {
          fail("partition " + e.getKey() + " owned by member-" + (int) prev[0] + " until " + prev[2]
              + " and by member-" + (int) cur[0] + " from " + cur[1]);
        }
      }
    }
    System.out.println("GroupFailoverIT: " + ackedOffset.size() + " records acknowledged, " + processed.size()
        + " processed, " + duplicates + " duplicates (all above committed offsets), " + commits.size() + " commits");
  }
}
