package io.tributary.client;

import io.tributary.protocol.AdminRequest;
import io.tributary.protocol.AdminResponse;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.ProtocolVersions;
import io.tributary.protocol.TopicDescription;
import io.tributary.protocol.TopicNames;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A cache of topic partition counts, filled from {@code DescribeTopics} answers, as Kafka's client {@code Metadata}.
 * Entries older than {@code metadata.max.age.ms} are refreshed in the background while the old value is still used;
 * {@link #requestRefresh} refreshes one topic after an error such as UNKNOWN_TOPIC_OR_PARTITION.
 *
 * <p>Thread-safe.
 */
final class Metadata {

  /** @param leaders each partition's leader's node address as the broker described it (null when it had none) */
  private record Entry(int partitionCount, String[] leaders, long fetchedAtMs) {}

  private final TributaryClient client;
  private final int requestTimeoutMs;
  private final long retryBackoffMs;
  private final long maxAgeMs;
  private final Map<String, Entry> topics = new ConcurrentHashMap<>();
  private final Map<String, Boolean> refreshing = new ConcurrentHashMap<>();

  Metadata(TributaryClient client, int requestTimeoutMs, long retryBackoffMs, long maxAgeMs) {
    this.client = client;
    this.requestTimeoutMs = requestTimeoutMs;
    this.retryBackoffMs = retryBackoffMs;
    this.maxAgeMs = maxAgeMs;
  }

  /**
   * The cached partition count of {@code topic}, or -1 if not known; starts a background refresh if the entry is
   * older than {@code metadata.max.age.ms}. Never blocks.
   */
  int cachedPartitionCount(String topic) {
    Entry entry = topics.get(topic);
    if (entry == null) {
      return -1;
    }
    if (nowMs() - entry.fetchedAtMs() > maxAgeMs) {
      requestRefresh(topic);
    }
    return entry.partitionCount();
  }

  /**
   * The partition count of {@code topic}, from the cache or else asked from the broker, retrying retriable errors
   * (UNKNOWN_TOPIC_OR_PARTITION included: the topic may be being created) every {@code retry.backoff.ms} for up to
   * {@code maxWaitMs}.
   *
   * @throws TributaryException INVALID_TOPIC_EXCEPTION at once for an illegal name; UNKNOWN_TOPIC_OR_PARTITION if the
   *     topic did not appear within {@code maxWaitMs}; REQUEST_TIMED_OUT if no broker answered; another
   *     non-retriable broker error at once
   */
  int partitionCount(String topic, long maxWaitMs) {
    int cached = cachedPartitionCount(topic);
    if (cached > 0) {
      return cached;
    }
    return fetch(topic, maxWaitMs);
  }

  /**
   * Asks the broker for the partition count of {@code topic} now, ignoring the cache, retrying as {@link
   * #partitionCount}.
   *
   * @throws TributaryException as {@link #partitionCount}
   */
  int fetch(String topic, long maxWaitMs) {
    String invalid = TopicNames.invalidReason(topic);
    if (invalid != null) {
      throw new TributaryException(ErrorCode.INVALID_TOPIC_EXCEPTION, invalid);
    }
    long start = nowMs();
    long deadline = TributaryClient.saturatedAdd(start, maxWaitMs);
    TributaryException last = null;
    while (true) {
      long remaining = deadline - nowMs();
      long attemptTimeout = Math.max(1, Math.min(requestTimeoutMs, remaining));
      try {
        AdminResponse response =
            TributaryClient.await(describe(topic, attemptTimeout), "describe topic " + topic, attemptTimeout);
        if (response.error() == ErrorCode.NONE) {
          int count = partitionCountOf(response, topic);
          if (count > 0) {
            topics.put(topic, new Entry(count, leadersOf(response, topic, count), nowMs()));
            return count;
          }
          last = unknown(topic, maxWaitMs);
        } else if (response.error().retriable()) {
          last = new TributaryException(response.error(), messageOf(response));
        } else {
          throw new TributaryException(response.error(), messageOf(response));
        }
      } catch (TributaryException e) {
        if (!e.isRetriable()) {
          throw e;
        }
        last = e;
      }
      long pause = Math.min(retryBackoffMs, deadline - nowMs());
      if (pause < 0 || nowMs() >= deadline) {
        if (last.errorCode() == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
          throw unknown(topic, maxWaitMs);
        }
        throw last;
      }
      sleep(pause);
    }
  }

  /** Refreshes {@code topic} in the background (at most one refresh per topic at a time); errors are ignored. */
  void requestRefresh(String topic) {
    if (!TopicNames.isValid(topic) || refreshing.putIfAbsent(topic, Boolean.TRUE) != null) {
      return;
    }
    describe(topic, requestTimeoutMs)
        .whenComplete(
            (response, failure) -> {
              refreshing.remove(topic);
              if (failure == null && response.error() == ErrorCode.NONE) {
                int count = partitionCountOf(response, topic);
                if (count > 0) {
                  topics.put(topic, new Entry(count, leadersOf(response, topic, count), nowMs()));
                }
              } else if (response != null && response.error() == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
                topics.remove(topic);
              }
            });
  }

  private CompletionStage<AdminResponse> describe(String topic, long timeoutMs) {
    return client.ask(
        replyTo -> new AdminRequest.DescribeTopics(ProtocolVersions.CURRENT, List.of(topic), replyTo), timeoutMs);
  }

  /**
   * The leader's node address of {@code topic}-{@code partition} as last described (refreshed with the topic after a
   * stale-leader error), or null if not known. Never blocks. The producer puts batches of partitions with the same
   * leader in one request (as Kafka's, one per broker), so that a leader that does not answer holds up only its own
   * partitions' batches.
   */
  String leader(String topic, int partition) {
    Entry entry = topics.get(topic);
    return entry == null || partition < 0 || partition >= entry.leaders().length ? null : entry.leaders()[partition];
  }

  private static String[] leadersOf(AdminResponse response, String topic, int count) {
    String[] leaders = new String[count];
    for (TopicDescription description : response.topics()) {
      if (topic.equals(description.name())) {
        for (io.tributary.protocol.PartitionDescription p : description.partitions()) {
          if (p.partition() >= 0 && p.partition() < count) {
            leaders[p.partition()] = p.leader();
          }
        }
      }
    }
    return leaders;
  }

  private static int partitionCountOf(AdminResponse response, String topic) {
    if (response.topics() == null) {
      return -1;
    }
    for (TopicDescription description : response.topics()) {
      if (topic.equals(description.name())) {
        return description.partitions() == null ? -1 : description.partitions().size();
      }
    }
    return -1;
  }

  private static TributaryException unknown(String topic, long maxWaitMs) {
    return new TributaryException(
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        "Topic " + topic + " not present in metadata after " + maxWaitMs + " ms");
  }

  private static String messageOf(AdminResponse response) {
    return response.errorMessage() != null ? response.errorMessage() : response.error().defaultMessage();
  }

  static long nowMs() {
    return System.nanoTime() / 1_000_000L;
  }

  static void sleep(long ms) {
    if (ms <= 0) {
      return;
    }
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TributaryException(ErrorCode.NETWORK_EXCEPTION, "interrupted", e);
    }
  }
}
