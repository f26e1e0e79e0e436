package io.tributary.cluster;

import akka.cluster.ddata.Key;
import akka.cluster.ddata.LWWMap;
import akka.cluster.ddata.LWWMapKey;

/**
 * Where the cluster's metadata lives: one Akka Distributed Data {@link LWWMap} from topic name to
 * {@link TopicMetadata}, in Tributary's own replicator ({@link MetadataReplicator}), durable on every broker node
 * (see {@code tributary.metadata.replicator.durable} in reference.conf) so that it survives a full-cluster restart,
 * and written with majority consistency by the {@link Controller} singleton only (so last-writer-wins never has two
 * writers to choose between, except for the moment a singleton hands over, where the newer write wins).
 */
public final class ClusterMetadata {
  private ClusterMetadata() {}

  /** The topic map's key. */
  public static final Key<LWWMap<String, TopicMetadata>> TOPICS = LWWMapKey.create("tributary-topics");
}
