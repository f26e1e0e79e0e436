package io.tributary.client;

/**
 * The consumer's view of its group membership, as Kafka's {@code ConsumerGroupMetadata}: a snapshot taken by {@link
 * Consumer#groupMetadata()}.
 *
 * @param groupId {@code group.id}
 * @param generationId the generation of the last assignment applied, or -1 outside a group
 * @param memberId the member id the coordinator gave, or "" outside a group
 * @param groupInstanceId {@code group.instance.id}, or {@code null} for a dynamic member
 */
public record ConsumerGroupMetadata(String groupId, int generationId, String memberId, String groupInstanceId) {}
