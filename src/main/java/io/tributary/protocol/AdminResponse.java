package io.tributary.protocol;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * The answer to any {@link AdminRequest}.
 *
 * @param error NONE or the error of the request (see each request)
 * @param errorMessage detail or {@code null}
 * @param topicNames for ListTopics: the names, sorted; otherwise empty
 * @param topics for DescribeTopics and CreateTopic: the descriptions; otherwise empty
 */
public record AdminResponse(
    @JsonProperty("error") ErrorCode error,
    @JsonProperty("errorMessage") String errorMessage,
    @JsonProperty("topicNames") List<String> topicNames,
    @JsonProperty("topics") List<TopicDescription> topics)
    implements CborSerializable {
  @JsonCreator
  public AdminResponse {}

  /** A success with nothing to return. */
  public static AdminResponse ok() {
    return new AdminResponse(ErrorCode.NONE, null, List.of(), List.of());
  }

  /** A failure. */
  public static AdminResponse failed(ErrorCode error, String message) {
    return new AdminResponse(error, message, List.of(), List.of());
  }
}
