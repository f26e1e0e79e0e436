package io.tributary.client;

import akka.actor.typed.ActorRef;
import io.tributary.protocol.AdminRequest;
import io.tributary.protocol.GroupProtocol;
import io.tributary.protocol.ListOffsetsRequest;
import io.tributary.protocol.ListOffsetsResponse;
import io.tributary.protocol.AdminResponse;
import io.tributary.protocol.ClientRequest;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.ProtocolVersions;
import io.tributary.protocol.TopicDescription;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * {@link Admin} over the gateway's {@link AdminRequest}s.
 *
 * <p>Each call is one request per attempt (timeout {@code request.timeout.ms}); retriable errors (REQUEST_TIMED_OUT,
 * NETWORK_EXCEPTION, LEADER_NOT_AVAILABLE, ...) are retried every {@code retry.backoff.ms} until {@code
 * default.api.timeout.ms} has passed, then thrown. Non-retriable errors are thrown at once. As in Kafka, a create or
 * delete retried after a lost answer may report TOPIC_ALREADY_EXISTS / UNKNOWN_TOPIC_OR_PARTITION for its own earlier
 * attempt. {@code describeTopics} does not retry UNKNOWN_TOPIC_OR_PARTITION (the answer is definite).
 *
 * <p>Thread-safe.
 */
final class TributaryAdmin implements Admin {

  private final TributaryClient client;
  private final AdminSettings settings;
  private final AtomicBoolean closed = new AtomicBoolean();

  TributaryAdmin(TributaryClient client, AdminSettings settings) {
    this.client = client;
    this.settings = settings;
  }

  /**
   * {@inheritDoc}
   *
   * @throws TributaryException INVALID_TOPIC_EXCEPTION, INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR,
   *     INVALID_CONFIG, TOPIC_ALREADY_EXISTS, or REQUEST_TIMED_OUT / NETWORK_EXCEPTION after retrying for {@code
   *     default.api.timeout.ms}
   */
  @Override
  public TopicDescription createTopic(
      String name, int partitions, short replicationFactor, Map<String, String> configs) {
    Objects.requireNonNull(name, "name");
    Map<String, String> topicConfigs = configs == null ? Map.of() : Map.copyOf(configs);
    AdminResponse response =
        call(
            "create topic " + name,
            replyTo ->
                new AdminRequest.CreateTopic(
                    ProtocolVersions.CURRENT, name, partitions, replicationFactor, topicConfigs, replyTo),
            false);
    for (TopicDescription description : response.topics()) {
      if (name.equals(description.name())) {
        return description;
      }
    }
    List<TopicDescription> described = describeTopics(List.of(name));
    return described.get(0);
  }

  /**
   * {@inheritDoc}
   *
   * @throws TributaryException UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC_EXCEPTION, or REQUEST_TIMED_OUT after
   *     retrying
   */
  @Override
  public void deleteTopic(String name) {
    Objects.requireNonNull(name, "name");
    call(
        "delete topic " + name,
        replyTo -> new AdminRequest.DeleteTopic(ProtocolVersions.CURRENT, name, replyTo),
        false);
  }

  /**
   * {@inheritDoc}
   *
   * @throws TributaryException REQUEST_TIMED_OUT after retrying
   */
  @Override
  public List<String> listTopics(boolean listInternal) {
    AdminResponse response =
        call(
            "list topics",
            replyTo -> new AdminRequest.ListTopics(ProtocolVersions.CURRENT, listInternal, replyTo),
            true);
    return response.topicNames() == null ? List.of() : List.copyOf(response.topicNames());
  }

  /**
   * {@inheritDoc}
   *
   * @throws TributaryException UNKNOWN_TOPIC_OR_PARTITION naming a topic that does not exist, or REQUEST_TIMED_OUT
   *     after retrying
   */
  @Override
  public List<TopicDescription> describeTopics(Collection<String> names) {
    List<String> list = List.copyOf(names);
    AdminResponse response =
        call(
            "describe topics " + list,
            replyTo -> new AdminRequest.DescribeTopics(ProtocolVersions.CURRENT, list, replyTo),
            false);
    return response.topics() == null ? List.of() : List.copyOf(response.topics());
  }

  @Override
  public Map<TopicPartition, Long> listOffsets(Collection<TopicPartition> partitions, long timestamp) {
    Map<TopicPartition, Long> out = new java.util.LinkedHashMap<>();
    for (TopicPartition tp : partitions) {
      ListOffsetsResponse r = call("list offsets of " + tp,
          replyTo -> new ListOffsetsRequest(ProtocolVersions.CURRENT, tp.topic(), tp.partition(), timestamp, replyTo),
          ListOffsetsResponse::error, ListOffsetsResponse::errorMessage, false);
      out.put(tp, r.offset());
    }
    return out;
  }

  @Override
  public List<GroupProtocol.GroupListing> listConsumerGroups() {
    GroupProtocol.ListGroupsResponse r = call("list groups",
        replyTo -> new GroupProtocol.ListGroups(ProtocolVersions.CURRENT, "", replyTo),
        GroupProtocol.ListGroupsResponse::error, x -> null, true);
    return List.copyOf(r.groups());
  }

  @Override
  public GroupProtocol.DescribeGroupResponse describeConsumerGroup(String groupId) {
    return call("describe group " + groupId,
        replyTo -> new GroupProtocol.DescribeGroup(ProtocolVersions.CURRENT, groupId, replyTo),
        GroupProtocol.DescribeGroupResponse::error, GroupProtocol.DescribeGroupResponse::errorMessage, true);
  }

  @Override
  public List<GroupProtocol.PartitionOffset> listConsumerGroupOffsets(String groupId) {
    GroupProtocol.OffsetFetchResponse r = call("fetch offsets of group " + groupId,
        replyTo -> new GroupProtocol.OffsetFetch(ProtocolVersions.CURRENT, groupId, List.of(), replyTo),
        GroupProtocol.OffsetFetchResponse::error, GroupProtocol.OffsetFetchResponse::errorMessage, true);
    return List.copyOf(r.offsets());
  }

  @Override
  public void alterConsumerGroupOffsets(String groupId, Map<TopicPartition, Long> offsets) {
    List<GroupProtocol.PartitionOffset> list = new java.util.ArrayList<>();
    offsets.forEach((tp, o) -> list.add(new GroupProtocol.PartitionOffset(tp.topic(), tp.partition(), o, null)));
    call("reset offsets of group " + groupId,
        replyTo -> new GroupProtocol.ResetOffsets(ProtocolVersions.CURRENT, groupId, list, replyTo),
        GroupProtocol.GroupResponse::error, GroupProtocol.GroupResponse::errorMessage, true);
  }

  @Override
  public void deleteConsumerGroup(String groupId) {
    call("delete group " + groupId,
        replyTo -> new GroupProtocol.DeleteGroup(ProtocolVersions.CURRENT, groupId, replyTo),
        GroupProtocol.GroupResponse::error, GroupProtocol.GroupResponse::errorMessage, true);
  }

  /** Marks the admin closed; later calls throw {@link IllegalStateException}. Idempotent. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      client.unregister(this);
    }
  }

  /**
   * One admin call with retries.
   *
   * @param retryUnknownTopic whether UNKNOWN_TOPIC_OR_PARTITION is retried (it is retriable for data requests, but
   *     a definite answer for create, delete and describe)
   */
  private AdminResponse call(
      String what, Function<ActorRef<AdminResponse>, ClientRequest> request, boolean retryUnknownTopic) {
    return call(what, request, AdminResponse::error, AdminResponse::errorMessage, retryUnknownTopic);
  }

  private <R> R call(
      String what,
      Function<ActorRef<R>, ClientRequest> request,
      Function<R, ErrorCode> errorOf,
      Function<R, String> messageOf,
      boolean retryUnknownTopic) {
    if (closed.get()) {
      throw new IllegalStateException("the Admin is closed");
    }
    long deadline = TributaryClient.saturatedAdd(Metadata.nowMs(), settings.defaultApiTimeoutMs());
    TributaryException lastAnswer = null; // the last error the broker answered (not a timeout of ours)
    while (true) {
      long remaining = deadline - Metadata.nowMs();
      long attemptTimeout = Math.max(1, Math.min(settings.requestTimeoutMs(), remaining));
      TributaryException failure;
      boolean answered = false;
      try {
        R response = TributaryClient.await(client.ask(request, attemptTimeout), what, attemptTimeout);
        ErrorCode error = errorOf.apply(response);
        if (error == ErrorCode.NONE) {
          return response;
        }
        String message = messageOf.apply(response);
        failure = new TributaryException(error, message != null ? message : error.defaultMessage());
        answered = true;
        lastAnswer = failure;
      } catch (TributaryException e) {
        failure = e;
      }
      boolean retriable =
          failure.isRetriable()
              && (retryUnknownTopic || failure.errorCode() != ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      long pause = Math.min(settings.retryBackoffMs(), deadline - Metadata.nowMs());
      if (!retriable) {
        throw failure;
      }
      if (pause < 0 || Metadata.nowMs() >= deadline) {
        // retried until default.api.timeout.ms: say so (the last attempt's own timeout was cut to what was left)
        String lost = client.lostGateway();
        String prefix = failure.errorCode().name() + ": " + what + ": ";
        String last = failure.getMessage().startsWith(prefix)
            ? failure.getMessage().substring(prefix.length()) : failure.getMessage();
        if (attemptTimeout < settings.requestTimeoutMs()) { // not the configured request.timeout.ms: say what it was
          last = last.replace(ClientConfig.REQUEST_TIMEOUT_MS + "=" + attemptTimeout + " ms",
              attemptTimeout + " ms (the rest of " + ClientConfig.DEFAULT_API_TIMEOUT_MS + ")");
        }
        // a last attempt that timed out on our side says little: name what the broker last answered too
        String broker = !answered && lastAnswer != null
            ? "; last answer from the broker: " + lastAnswer.getMessage() : "";
        throw new TributaryException(failure.errorCode(), what + ": no success within "
            + ClientConfig.DEFAULT_API_TIMEOUT_MS + "=" + settings.defaultApiTimeoutMs() + " ms"
            + (lost != null ? ": " + lost : "") + broker + "; last error: " + last, failure);
      }
      Metadata.sleep(pause);
    }
  }
}
