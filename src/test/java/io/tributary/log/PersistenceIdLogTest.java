package io.tributary.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PersistenceIdLogTest {
  @TempDir
  Path dir;

  private Path file() {
    return dir.resolve(PersistenceIdLog.FILE_NAME);
  }

  /** Opens the log, appends {@code pid -> id} pairs, closes it; returns what it read when opened. */
  private Map<String, Integer> openAndAppend(Object... pairs) throws IOException {
    Map<String, Integer> read = new LinkedHashMap<>();
    try (PersistenceIdLog log = PersistenceIdLog.open(dir, read)) {
      for (int i = 0; i < pairs.length; i += 2) {
        log.append((String) pairs[i], (Integer) pairs[i + 1]);
      }
    }
    return read;
  }

  @Test
  void mappingsAppendedAreReadBackInOrderAfterReopening() throws IOException {
    assertEquals(Map.of(), openAndAppend("p|t-0", 10, "p|t-1", 11));
    assertEquals(Map.of("p|t-0", 10, "p|t-1", 11), openAndAppend("p|ü-2", 12), "read back; a UTF-8 name appended");
    assertEquals(Map.of("p|t-0", 10, "p|t-1", 11, "p|ü-2", 12), PersistenceIdLog.read(dir));
  }

  @Test
  void aTornLastEntryIsDroppedAndTheFileGoesOnAfterTheIntactEntries() throws IOException {
    openAndAppend("a", 10, "b", 11);
    byte[] whole = Files.readAllBytes(file());
    int entryB = 12 + 1; // length, id, "b", checksum
    for (int cut = 1; cut < entryB; cut++) {
      Files.write(file(), Arrays.copyOf(whole, whole.length - cut));
      assertEquals(Map.of("a", 10), PersistenceIdLog.read(dir), "cut " + cut + " bytes: read leaves b out");
      assertEquals(Map.of("a", 10), openAndAppend("c", 11), "cut " + cut + " bytes: open drops b");
      assertEquals(Map.of("a", 10, "c", 11), PersistenceIdLog.read(dir), "and an append after it is read back");
    }
  }

  @Test
  void aLastEntryThatFailsItsChecksumIsATornWriteAndDropped() throws IOException {
    openAndAppend("a", 10, "b", 11);
    byte[] bytes = Files.readAllBytes(file());
    bytes[bytes.length - 5] ^= 1; // the name "b"
    Files.write(file(), bytes);
    assertEquals(Map.of("a", 10), openAndAppend());
    assertEquals(Map.of("a", 10), PersistenceIdLog.read(dir));
  }

  /** Writes {@code bytes} as the file; both reading and opening must fail with {@code message} and change nothing. */
  private void assertCorrupt(byte[] bytes, String message) throws IOException {
    Files.write(file(), bytes);
    IOException e = assertThrows(IOException.class, () -> PersistenceIdLog.read(dir));
    assertTrue(e.getMessage().contains(message), e.getMessage());
    assertThrows(IOException.class, () -> openAndAppend());
    assertEquals(bytes.length, Files.size(file()), "a corrupt file is not truncated");
  }

  @Test
  void aDamagedEntryBeforeOthersIsCorruptionNotATornWrite() throws IOException {
    openAndAppend("a", 10, "b", 11);
    byte[] bytes = Files.readAllBytes(file());
    bytes[8 + 8] ^= 1; // the name "a" of the first entry
    assertCorrupt(bytes, "is corrupt: the entry at byte 8 fails its checksum");
  }

  @Test
  void aLengthNoEntryCanHaveIsCorruptionWhereverItIs() throws IOException {
    openAndAppend("a", 10, "b", 11, "c", 12);
    byte[] whole = Files.readAllBytes(file());
    byte[] bytes = whole.clone();
    bytes[8 + 13 + 1] = 0x10; // b's length (its entry at byte 21): 1 MiB and more, past the largest name
    assertCorrupt(bytes, "is corrupt: the entry at byte 21 has a length of 1048577");
    byte[] last = whole.clone();
    last[8 + 2 * 13] = (byte) 0x80; // c's length negative: the last entry, but no append writes such a length
    assertCorrupt(last, "is corrupt: the entry at byte 34 has a length of");
  }

  @Test
  void anIdMappedTwiceOrAFileOfAnotherKindIsAnError() throws IOException {
    openAndAppend("a", 10, "b", 10);
    IOException twice = assertThrows(IOException.class, () -> PersistenceIdLog.read(dir));
    assertTrue(twice.getMessage().contains("maps 'b' to 10, which the file already maps differently"),
        twice.getMessage());

    Files.writeString(file(), "not an id file at all");
    IOException header = assertThrows(IOException.class, () -> openAndAppend());
    assertTrue(header.getMessage().endsWith("is not a Tributary persistence id file (bad header)"),
        header.getMessage());
  }

  @Test
  void aTailOfZerosIsATornWriteWhateverItsLength() throws IOException {
    openAndAppend("a", 10);
    byte[] whole = Files.readAllBytes(file());
    for (int zeros : new int[] {3, 12, 13, 29, 100}) {
      Files.write(file(), java.util.Arrays.copyOf(whole, whole.length + zeros)); // the size kept, not the bytes
      assertEquals(Map.of("a", 10), openAndAppend("b", 11), zeros + " zero bytes are dropped");
      assertEquals(Map.of("a", 10, "b", 11), PersistenceIdLog.read(dir), "and an append after them is read back");
      Files.write(file(), whole);
    }
    Files.writeString(file(), "x", java.nio.file.StandardOpenOption.APPEND);
    Files.write(file(), new byte[20], java.nio.file.StandardOpenOption.APPEND);
    assertThrows(IOException.class, () -> PersistenceIdLog.read(dir), "not zeros from the first bad byte: corrupt");
  }

  @Test
  void aFileThatCannotBeReadIsAnErrorNamingIt() throws IOException {
    Files.createDirectory(file());
    IOException e = assertThrows(IOException.class, () -> openAndAppend());
    assertTrue(e.getMessage().startsWith(file().toString()), e.getMessage());
  }

  @Test
  void aFileCutShortBeforeItsHeaderStartsAgainEmpty() throws IOException {
    Files.write(file(), new byte[] {'T', 'R', 'I'});
    assertEquals(Map.of(), openAndAppend("a", 10));
    assertEquals(Map.of("a", 10), PersistenceIdLog.read(dir));
  }
}
