package io.tributary.log;

import akka.actor.ActorRef;
import akka.actor.ExtendedActorSystem;
import akka.pattern.Patterns;
import akka.persistence.JournalProtocol;
import akka.persistence.Persistence;
import akka.persistence.SnapshotProtocol;
import akka.persistence.SnapshotSelectionCriteria;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * The one place where Tributary talks to Akka Persistence's journal and snapshot store directly, through their
 * message protocols ({@link JournalProtocol}, {@link SnapshotProtocol}). These are public in the bytecode but Akka
 * internal API, so every use is kept here, behind a small surface with its own test:
 *
 * <ul>
 *   <li>reading a range of a partition's journal without recovering an actor (timestamp lookups below the in-memory
 *       tail, and fetches there when the journal is not a {@link TunedLeveldbJournal}, which partitions read
 *       directly: {@link JournalStores}),
 *   <li>deleting events up to a sequence number (retention: typed persistence deletes only through snapshot-count
 *       retention criteria, not to a chosen sequence number),
 *   <li>deleting snapshots (topic deletion).
 * </ul>
 *
 * <p>Thread-safe: it only sends messages.
 */
public final class JournalAccess {
  private final ExtendedActorSystem system;
  private final Persistence persistence;

  public JournalAccess(ExtendedActorSystem system) {
    this.system = system;
    this.persistence = Persistence.get(system);
  }

  /** The journal actor of plugin {@code pluginId}. */
  public ActorRef journal(String pluginId) {
    return persistence.journalFor(pluginId, ConfigFactory.empty());
  }

  /** The snapshot store actor of plugin {@code pluginId}. */
  public ActorRef snapshotStore(String pluginId) {
    return persistence.snapshotStoreFor(pluginId, ConfigFactory.empty());
  }

  /**
   * Asks the journal to replay events {@code fromSeqNr..toSeqNr} (at most {@code max}) of {@code persistenceId} to
   * {@code recipient}, which receives {@link JournalProtocol.ReplayedMessage} for each, then
   * {@link JournalProtocol.RecoverySuccess} or {@link JournalProtocol.ReplayMessagesFailure}.
   */
  public void replay(
      String pluginId, String persistenceId, long fromSeqNr, long toSeqNr, long max, ActorRef recipient) {
    journal(pluginId).tell(
        new JournalProtocol.ReplayMessages(fromSeqNr, toSeqNr, max, persistenceId, recipient), ActorRef.noSender());
  }

  /**
   * Deletes the events of {@code persistenceId} up to and including {@code toSeqNr}. LevelDB compacts the key range
   * afterwards (see {@code compaction-intervals}), which gives the disk space back.
   *
   * @return completes with {@code akka.persistence.DeleteMessagesSuccess} or {@code DeleteMessagesFailure}
   */
  public CompletionStage<Object> deleteMessagesTo(
      String pluginId, String persistenceId, long toSeqNr, Duration timeout) {
    ActorRef journal = journal(pluginId);
    return Patterns.askWithReplyTo(
        journal, replyTo -> new JournalProtocol.DeleteMessagesTo(persistenceId, toSeqNr, replyTo), timeout);
  }

  /**
   * Deletes the snapshots of {@code persistenceId} taken at sequence numbers up to and including {@code toSeqNr}.
   *
   * @return completes with {@code akka.persistence.DeleteSnapshotsSuccess} or {@code DeleteSnapshotsFailure}
   */
  public CompletionStage<Object> deleteSnapshotsTo(
      String pluginId, String persistenceId, long toSeqNr, Duration timeout) {
    return Patterns.ask(
        snapshotStore(pluginId),
        new SnapshotProtocol.DeleteSnapshots(
            persistenceId, SnapshotSelectionCriteria.create(toSeqNr, Long.MAX_VALUE)),
        timeout);
  }

  ExtendedActorSystem system() {
    return system;
  }
}
