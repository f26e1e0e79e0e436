package io.tributary.log;

import akka.actor.AbstractExtensionId;
import akka.actor.ActorSystem;
import akka.actor.ExtendedActorSystem;
import akka.actor.Extension;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The open {@link TunedLeveldbJournal} stores of one ActorSystem, by journal plugin id (its config path, e.g.
 * {@code tributary.persistence.journal-0}), so that a partition can read its record batches straight from its store
 * ({@link TunedLeveldbJournal#readRecordBatches}) instead of through Akka's replay protocol. A journal registers
 * itself once its store is open and leaves before it closes it; a plugin of another class never registers, and its
 * partitions read through {@link JournalAccess#replay}.
 *
 * <p>An Akka extension (one per ActorSystem); thread-safe.
 */
public final class JournalStores implements Extension {

  /** The extension's id: {@code JournalStores.ID.get(system)}. */
  public static final Id ID = new Id();

  private final ConcurrentMap<String, TunedLeveldbJournal> stores = new ConcurrentHashMap<>();

  private JournalStores() {}

  /** The extension of {@code system}. */
  public static JournalStores get(ActorSystem system) {
    return ID.get(system);
  }

  /** The open store of journal plugin {@code pluginId}, or {@code null} if none is registered under that id. */
  public TunedLeveldbJournal store(String pluginId) {
    return stores.get(pluginId);
  }

  void register(String pluginId, TunedLeveldbJournal journal) {
    stores.put(pluginId, journal);
  }

  void unregister(String pluginId, TunedLeveldbJournal journal) {
    stores.remove(pluginId, journal);
  }

  /** Creates the extension. */
  public static final class Id extends AbstractExtensionId<JournalStores> {
    private Id() {}

    @Override
    public JournalStores createExtension(ExtendedActorSystem system) {
      return new JournalStores();
    }
  }
}
