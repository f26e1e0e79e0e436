package io.tributary.cluster;

import java.io.File;
import java.io.InputStream;
import org.fusesource.leveldbjni.JniDBFactory;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.Options;

/**
 * Run in a child JVM by {@link LevelDbDurableStoreTest}: opens the LevelDB in {@code args[0]} (taking its lock),
 * prints {@link #READY}, and keeps it open until its standard input ends.
 */
public final class LevelDbLockHolder {
  static final String READY = "locked";

  private LevelDbLockHolder() {}

  public static void main(String[] args) throws Exception {
    DB db = JniDBFactory.factory.open(new File(args[0]), new Options().createIfMissing(true));
    try {
      System.out.println(READY);
      System.out.flush();
      InputStream in = System.in;
      while (in.read() >= 0) {
        // wait for end of input
      }
    } finally {
      db.close();
    }
  }
}
