package io.tributary.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * The numeric ids of a journal's persistence ids, in an append-only file beside its LevelDB store: the id mapping
 * Akka's LevelDB journal keeps in the store itself, under keys {@code (1, 0, numericId)} below every event key.
 *
 * <p>Why a file: a mapping key written into the store lands in the same memtable as the new persistence id's first
 * events, which sit at the top of the key range. The level-0 table LevelDB flushes from that memtable then spans the
 * whole key range and overlaps the tables flushed after it, and their compaction rewrites them and the tables below
 * (measured in {@code bin/compare-kafka}'s 1 KiB row, where every run writes a new topic: 4 level-0 + 1 level-1
 * tables rewritten into 20.9 MB, then 18.8 MB more in level 2, within one run; the dear runs cost 1.6-1.8 CPU-s
 * against 1.2-1.4). Without it, the tables of an appended log are disjoint and LevelDB places them without
 * rewriting (the same rows then logged no compaction at all).
 *
 * <p>A lost or cut file must not hand a stored partition's events to another persistence id or start it empty: the
 * journal checks that every numeric id its store holds keys of has a mapping ({@link TunedLeveldbJournal#checkStore}
 * before a broker starts, and again when the journal opens its store) and refuses to start otherwise.
 *
 * <p>Format: an 8-byte header {@code "TRIBPID"} + version {@code 1}, then one entry per mapping: the name's length
 * (int, UTF-8 bytes), the numeric id (int), the name, and a CRC-32C (int) of the id and the name; big-endian. Each
 * {@link #append} is forced to disk before it returns, so no event is ever stored under an id the file has not
 * durably recorded; an entry cut short by a crash (or a whole last entry that fails its checksum, or a tail of zero
 * bytes: a torn write) was therefore never used, and {@link #read} drops it. A damaged entry followed by more
 * entries, or a length no entry can have, is corruption and an error: dropping it could hand its id to another
 * persistence id.
 *
 * <p>Not thread-safe: the journal calls it under its id lock.
 */
final class PersistenceIdLog implements AutoCloseable {
  /** The file's name in the journal's directory. */
  static final String FILE_NAME = "persistence-ids";

  private static final byte[] HEADER = {'T', 'R', 'I', 'B', 'P', 'I', 'D', 1};
  private static final int MAX_NAME_BYTES = 64 * 1024;

  private final Path file;
  private final FileChannel channel;

  private PersistenceIdLog(Path file, FileChannel channel) {
    this.file = file;
    this.channel = channel;
  }

  /**
   * Reads the mappings of {@code dir}'s file (none if there is no file yet), drops a torn last entry, and opens the
   * file for {@link #append} (creating it with its header if it is missing).
   *
   * @param dir the journal's directory (the LevelDB store's)
   * @param into receives every mapping read: persistence id to numeric id, in the file's order
   * @return the open log; the caller closes it
   * @throws IOException if the file cannot be read, created or truncated, if it does not start with the header, or if
   *     an entry other than the last is damaged, names an id twice, or gives two names one id
   */
  static PersistenceIdLog open(Path dir, Map<String, Integer> into) throws IOException {
    try {
      return openFile(dir, into);
    } catch (IOException e) {
      throw named(dir.resolve(FILE_NAME), e);
    }
  }

  /** {@code e}, or an IOException naming {@code file} if its message does not (e.g. "Is a directory"). */
  private static IOException named(Path file, IOException e) {
    String m = String.valueOf(e.getMessage());
    return m.contains(file.toString()) ? e : new IOException(file + ": " + m, e);
  }

  private static PersistenceIdLog openFile(Path dir, Map<String, Integer> into) throws IOException {
    Path file = dir.resolve(FILE_NAME);
    Files.createDirectories(dir);
    FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
        StandardOpenOption.WRITE);
    try {
      long good;
      if (ch.size() < HEADER.length) {
        // new, or its creation was cut short before the header was durable: no entry was ever written
        ch.truncate(0);
        ch.write(ByteBuffer.wrap(HEADER), 0);
        ch.force(true);
        good = HEADER.length;
      } else {
        byte[] all = new byte[Math.toIntExact(ch.size())];
        ByteBuffer buf = ByteBuffer.wrap(all);
        while (buf.hasRemaining() && ch.read(buf, buf.position()) >= 0) {
          // read it all
        }
        good = parse(file, all, into);
        if (good < all.length) {
          ch.truncate(good); // a torn last entry: its id was never handed out
          ch.force(true);
        }
      }
      ch.position(good);
      return new PersistenceIdLog(file, ch);
    } catch (IOException | RuntimeException e) {
      ch.close();
      throw e;
    }
  }

  /**
   * The mappings in {@code dir}'s file (persistence id to numeric id; empty if there is no file), without changing
   * it: a torn last entry is left out, not truncated.
   *
   * @throws IOException as {@link #open}
   */
  static Map<String, Integer> read(Path dir) throws IOException {
    Path file = dir.resolve(FILE_NAME);
    Map<String, Integer> ids = new LinkedHashMap<>();
    if (Files.exists(file)) {
      byte[] all;
      try {
        all = Files.readAllBytes(file);
      } catch (IOException e) {
        throw named(file, e);
      }
      if (all.length >= HEADER.length) {
        parse(file, all, ids);
      }
    }
    return ids;
  }

  /** Parses {@code all} into {@code into}; returns the length of its intact part (a torn last entry excluded). */
  private static long parse(Path file, byte[] all, Map<String, Integer> into) throws IOException {
    if (!Arrays.equals(all, 0, HEADER.length, HEADER, 0, HEADER.length)) {
      throw new IOException(file + " is not a Tributary persistence id file (bad header)");
    }
    Map<Integer, String> names = new LinkedHashMap<>();
    ByteBuffer buf = ByteBuffer.wrap(all);
    buf.position(HEADER.length);
    while (buf.hasRemaining()) {
      int start = buf.position();
      if (buf.remaining() < 12) {
        return start; // torn: not even its length, id and checksum
      }
      int len = buf.getInt();
      int id = buf.getInt();
      boolean last;
      if ((len < 0 || len > MAX_NAME_BYTES) && !zeros(all, start)) {
        // an append writes its length whole or not at all (a torn entry is a prefix of what was written)
        throw new IOException(file + " is corrupt: the entry at byte " + start + " has a length of " + len);
      } else if (buf.remaining() < len + 4) {
        return start; // torn: it ends past the end of the file
      } else {
        byte[] name = new byte[len];
        buf.get(name);
        int crc = buf.getInt();
        if (crc == checksum(id, name)) {
          String pid = new String(name, StandardCharsets.UTF_8);
          String other = names.putIfAbsent(id, pid);
          Integer known = into.putIfAbsent(pid, id);
          if (other != null || (known != null && known != id)) {
            throw new IOException(file + " is corrupt: entry at byte " + start + " maps '" + pid + "' to " + id
                + ", which the file already maps differently");
          }
          continue;
        }
        last = !buf.hasRemaining();
      }
      if (last || zeros(all, start)) {
        return start; // or a tail of zeros: a crash kept the file's new length but not the bytes written
      }
      throw new IOException(file + " is corrupt: the entry at byte " + start + " fails its checksum");
    }
    return buf.position();
  }

  private static boolean zeros(byte[] all, int from) {
    for (int i = from; i < all.length; i++) {
      if (all[i] != 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * Records that {@code persistenceId} has numeric id {@code id}, durably (the file is forced to disk) before it
   * returns.
   *
   * @throws IOException if the write or the force fails; the file may then hold a torn entry, which {@link #open}
   *     drops
   * @throws IllegalArgumentException if the name is longer than 64 KiB in UTF-8
   */
  void append(String persistenceId, int id) throws IOException {
    byte[] name = persistenceId.getBytes(StandardCharsets.UTF_8);
    if (name.length > MAX_NAME_BYTES) {
      throw new IllegalArgumentException("persistence id longer than " + MAX_NAME_BYTES + " bytes");
    }
    ByteBuffer entry = ByteBuffer.allocate(12 + name.length);
    entry.putInt(name.length).putInt(id).put(name).putInt(checksum(id, name)).flip();
    while (entry.hasRemaining()) {
      channel.write(entry);
    }
    channel.force(false);
  }

  private static int checksum(int id, byte[] name) {
    CRC32C crc = new CRC32C();
    crc.update(ByteBuffer.allocate(4).putInt(id).flip());
    crc.update(name);
    return (int) crc.getValue();
  }

  /** The file's path. */
  Path file() {
    return file;
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }
}
