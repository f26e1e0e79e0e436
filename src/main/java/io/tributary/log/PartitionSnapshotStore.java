package io.tributary.log;

import akka.dispatch.Futures;
import akka.persistence.SelectedSnapshot;
import akka.persistence.SnapshotMetadata;
import akka.persistence.SnapshotSelectionCriteria;
import akka.persistence.serialization.Snapshot;
import akka.serialization.Serialization;
import akka.serialization.SerializationExtension;
import com.typesafe.config.Config;
import java.io.File;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import scala.concurrent.ExecutionContext;
import scala.concurrent.Future;

/**
 * The snapshot store of partitions (Akka Persistence plugin {@code tributary.persistence.snapshot}): one file per
 * snapshot in {@code dir}, as Akka's {@code LocalSnapshotStore}, whose files it reads and writes unchanged, with one
 * difference: a persistence id too long for a file name gets a file name of its SHA-256 instead.
 *
 * <p>Akka's store names a file {@code snapshot-<URL-encoded persistence id>-<sequence nr>-<timestamp>}. A partition's
 * persistence id is {@code partition|<topic>-<partition>}, and a legal topic name has up to 249 characters (Kafka's
 * limit), so for names above ~205 characters the file name passed the 255 bytes a file system allows: every snapshot
 * of such a partition failed, and with it the journal deletion that retention does after a snapshot
 * ({@code PartitionLeader}), so its disk space never came back and its recovery replayed every event. Here a
 * snapshot whose file name in Akka's form (or its {@code tmp} form while written) would pass {@link #MAX_NAME_BYTES}
 * is named {@code snapshot-~<64 hex digits of SHA-256 of the id>-<sequence nr>-<timestamp>} instead ({@code ~} is
 * never in a URL-encoded id, so the two forms cannot meet); every other file is named exactly as Akka's, and loading
 * and deleting look for both forms, so snapshots written before stay readable.
 *
 * <p>Files are written under their name with {@code tmp} appended and renamed into place, so a crash leaves no
 * partial snapshot under a snapshot's name; loading tries the youngest matching snapshot first and up to {@code
 * max-load-attempts} older ones when one fails to read (as Akka's). Contents are Akka's: the serialized {@link
 * Snapshot} wrapper.
 *
 * <p>Confinement: an Akka Persistence plugin actor; file I/O runs on {@code stream-dispatcher}.
 */
public final class PartitionSnapshotStore extends akka.persistence.snapshot.japi.SnapshotStore {

  /** The longest file name written, in bytes (common file systems allow 255). */
  static final int MAX_NAME_BYTES = 255;

  private final Path dir;
  private final int maxLoadAttempts;
  private final ExecutionContext io;
  private final Serialization serialization;

  /**
   * Called by Akka Persistence with the plugin's config ({@code dir}, {@code max-load-attempts},
   * {@code stream-dispatcher}, as Akka's local store).
   *
   * @throws IllegalArgumentException if {@code max-load-attempts} is below 1
   */
  public PartitionSnapshotStore(Config config) {
    this.dir = new File(config.getString("dir")).toPath();
    this.maxLoadAttempts = config.getInt("max-load-attempts");
    if (maxLoadAttempts < 1) {
      throw new IllegalArgumentException("max-load-attempts must be >= 1, was " + maxLoadAttempts);
    }
    this.io = context().system().dispatchers().lookup(config.getString("stream-dispatcher"));
    this.serialization = SerializationExtension.get(context().system());
  }

  @Override
  public void preStart() throws Exception {
    Files.createDirectories(dir);
    super.preStart();
  }

  /** The id's part of Akka's file names: its URL encoding. */
  static String encodedId(String persistenceId) {
    return URLEncoder.encode(persistenceId, StandardCharsets.UTF_8);
  }

  /** The id's part of file names too long for Akka's form: {@code ~} and the hex SHA-256 of its UTF-8 bytes. */
  static String hashedId(String persistenceId) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(persistenceId.getBytes(StandardCharsets.UTF_8));
      return "~" + HexFormat.of().formatHex(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e); // every Java SE has it
    }
  }

  /**
   * The file name of a snapshot: Akka's ({@code snapshot-<URL-encoded id>-<sequence nr>-<timestamp>}) when that name
   * and its {@code tmp} form fit {@link #MAX_NAME_BYTES}, else the same with {@link #hashedId}.
   */
  static String fileName(SnapshotMetadata md) {
    String tail = "-" + md.sequenceNr() + "-" + md.timestamp();
    String akkas = "snapshot-" + encodedId(md.persistenceId()) + tail; // URL encoding is ASCII: chars are bytes
    return akkas.length() + "tmp".length() <= MAX_NAME_BYTES ? akkas
        : "snapshot-" + hashedId(md.persistenceId()) + tail;
  }

  /** A stored snapshot: what Akka Persistence knows of it, and its file. */
  private record Stored(SnapshotMetadata metadata, Path file) {}

  /** The stored snapshots of {@code persistenceId} that {@code criteria} selects, in either name form, oldest first. */
  private List<Stored> list(String persistenceId, SnapshotSelectionCriteria criteria) throws IOException {
    List<String> prefixes = List.of("snapshot-" + encodedId(persistenceId) + "-",
        "snapshot-" + hashedId(persistenceId) + "-");
    List<Stored> found = new ArrayList<>();
    try (var names = Files.newDirectoryStream(dir,
        f -> f.getFileName().toString().startsWith(prefixes.get(0))
            || f.getFileName().toString().startsWith(prefixes.get(1)))) {
      for (Path p : names) {
        String name = p.getFileName().toString();
        String rest = name.substring(name.startsWith(prefixes.get(0)) ? prefixes.get(0).length()
            : prefixes.get(1).length());
        int dash = rest.indexOf('-');
        if (dash <= 0 || !digits(rest, 0, dash) || !digits(rest, dash + 1, rest.length())) {
          continue; // a tmp file, or another id's file that starts with this id's name and a dash
        }
        SnapshotMetadata md = SnapshotMetadata.apply(persistenceId, Long.parseLong(rest.substring(0, dash)),
            Long.parseLong(rest.substring(dash + 1)));
        if (selects(criteria, md)) {
          found.add(new Stored(md, p));
        }
      }
    } catch (NoSuchFileException e) {
      return List.of(); // the directory was removed
    }
    found.sort(Comparator.comparingLong((Stored st) -> st.metadata().sequenceNr())
        .thenComparingLong(st -> st.metadata().timestamp()));
    return found;
  }

  private static boolean digits(String s, int from, int to) {
    if (to - from < 1 || to - from > 19) {
      return false;
    }
    for (int i = from; i < to; i++) {
      if (s.charAt(i) < '0' || s.charAt(i) > '9') {
        return false;
      }
    }
    return true;
  }

  private static boolean selects(SnapshotSelectionCriteria c, SnapshotMetadata md) {
    return md.sequenceNr() <= c.maxSequenceNr() && md.timestamp() <= c.maxTimestamp()
        && md.sequenceNr() >= c.minSequenceNr() && md.timestamp() >= c.minTimestamp();
  }

  @Override
  public Future<Optional<SelectedSnapshot>> doLoadAsync(String persistenceId, SnapshotSelectionCriteria criteria) {
    return Futures.future(() -> {
      List<Stored> all = list(persistenceId, criteria);
      Exception last = null;
      for (int i = all.size() - 1, tries = 0; i >= 0 && tries < maxLoadAttempts; i--, tries++) {
        SnapshotMetadata md = all.get(i).metadata();
        try {
          byte[] bytes = Files.readAllBytes(all.get(i).file());
          Snapshot s = serialization.deserialize(bytes, Snapshot.class).get();
          return Optional.of(SelectedSnapshot.create(md, s.data()));
        } catch (NoSuchFileException deletedMeanwhile) {
          last = deletedMeanwhile; // retention deleted it after the listing: an older one may still be there
        } catch (Exception e) {
          last = e;
          log().error(e, "Error loading snapshot [{}], remaining attempts: [{}]", md,
              Math.min(i, maxLoadAttempts - tries - 1));
        }
      }
      if (last != null && !(last instanceof NoSuchFileException)) {
        throw last; // every attempt failed: recovery fails, as with Akka's store
      }
      return Optional.<SelectedSnapshot>empty();
    }, io);
  }

  @Override
  public Future<Void> doSaveAsync(SnapshotMetadata metadata, Object snapshot) {
    return Futures.future(() -> {
      byte[] bytes = serialization.serialize(new Snapshot(snapshot)).get();
      String name = fileName(metadata);
      Path tmp = dir.resolve(name + "tmp");
      Files.write(tmp, bytes);
      Files.move(tmp, dir.resolve(name), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      return null;
    }, io);
  }

  @Override
  public Future<Void> doDeleteAsync(SnapshotMetadata metadata) {
    return Futures.future(() -> {
      // Akka's store deletes every file of this id and sequence nr, whatever the timestamp
      SnapshotSelectionCriteria exact = SnapshotSelectionCriteria.create(metadata.sequenceNr(), Long.MAX_VALUE,
          metadata.sequenceNr(), 0L);
      for (Stored st : list(metadata.persistenceId(), exact)) {
        Files.deleteIfExists(st.file());
      }
      return null;
    }, io);
  }

  @Override
  public Future<Void> doDeleteAsync(String persistenceId, SnapshotSelectionCriteria criteria) {
    return Futures.future(() -> {
      for (Stored st : list(persistenceId, criteria)) {
        Files.deleteIfExists(st.file());
      }
      return null;
    }, io);
  }
}
