package io.tributary.cli;

import akka.actor.Address;
import akka.actor.typed.ActorSystem;
import akka.cluster.ClusterEvent;
import akka.cluster.Member;
import akka.cluster.typed.Cluster;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A node's view of the cluster membership, as a small text file that {@code server --members-file FILE} brings up to
 * date every second (rewritten when the view changed, else only touched: the later of its {@code updated} line and the
 * file's modification time is the view's time) and {@code cluster status} reads (a client JVM is not a cluster member and cannot ask Akka for it).
 *
 * <p>Layout, one item per line, fields separated by tabs:
 *
 * <pre>
 * # comment lines start with '#'
 * updated	&lt;epoch millis of this view&gt;
 * self	&lt;address akka://tributary@host:port&gt;	&lt;uid&gt;	&lt;status&gt;
 * leader	&lt;address of the cluster leader, or -&gt;
 * oldest	&lt;address of the oldest Up broker member (where singletons run), or -&gt;
 * member	&lt;address&gt;	&lt;uid&gt;	&lt;status&gt;	&lt;roles, comma-separated&gt;	reachable|unreachable
 * </pre>
 *
 * <p>The file is replaced atomically (written beside it, then moved), so a reader never sees half a view.
 */
final class MembershipFile {
  private MembershipFile() {}

  /** One member as a node sees it. */
  record MemberView(String address, long uid, String status, List<String> roles, boolean reachable) {
    /** {@code host:port} of {@link #address}. */
    String hostPort() {
      return TopicsCommand.node(address);
    }
  }

  /** A node's whole view. */
  record View(long updatedMillis, String self, long selfUid, String selfStatus, String leader, String oldest,
      List<MemberView> members) {
    /** The member with this {@code host:port}, or null. */
    MemberView member(String hostPort) {
      for (MemberView m : members) {
        if (m.hostPort().equals(hostPort)) {
          return m;
        }
      }
      return null;
    }
  }

  /** The text of a view (see the class comment). */
  static String format(View v) {
    StringBuilder sb = new StringBuilder();
    sb.append("# Cluster membership as seen by ").append(v.self()).append(" (brought up to date every second)\n");
    sb.append("updated\t").append(v.updatedMillis()).append('\n');
    sb.append("self\t").append(v.self()).append('\t').append(v.selfUid()).append('\t').append(v.selfStatus())
        .append('\n');
    sb.append("leader\t").append(v.leader() == null ? "-" : v.leader()).append('\n');
    sb.append("oldest\t").append(v.oldest() == null ? "-" : v.oldest()).append('\n');
    for (MemberView m : v.members()) {
      sb.append("member\t").append(m.address()).append('\t').append(m.uid()).append('\t').append(m.status())
          .append('\t').append(m.roles().isEmpty() ? "-" : String.join(",", m.roles())).append('\t')
          .append(m.reachable() ? "reachable" : "unreachable").append('\n');
    }
    return sb.toString();
  }

  /**
   * Parses {@link #format}'s text.
   *
   * @throws IllegalArgumentException if a line is malformed or {@code updated} / {@code self} is missing
   */
  static View parse(String text) {
    long updated = -1;
    String self = null;
    long selfUid = 0;
    String selfStatus = null;
    String leader = null;
    String oldest = null;
    List<MemberView> members = new ArrayList<>();
    for (String line : text.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      String[] f = line.split("\t", -1);
      try {
        switch (f[0]) {
          case "updated" -> updated = Long.parseLong(f[1]);
          case "self" -> {
            self = f[1];
            selfUid = Long.parseLong(f[2]);
            selfStatus = f[3];
          }
          case "leader" -> leader = "-".equals(f[1]) ? null : f[1];
          case "oldest" -> oldest = "-".equals(f[1]) ? null : f[1];
          case "member" -> members.add(new MemberView(f[1], Long.parseLong(f[2]), f[3],
              "-".equals(f[4]) ? List.of() : List.of(f[4].split(",")), "reachable".equals(f[5])));
          default -> { } // a later version's line: ignore
        }
      } catch (ArrayIndexOutOfBoundsException | NumberFormatException e) {
        throw new IllegalArgumentException("malformed line in a members file: " + line, e);
      }
    }
    if (updated < 0 || self == null) {
      throw new IllegalArgumentException("not a members file (no 'updated' or 'self' line)");
    }
    return new View(updated, self, selfUid, selfStatus, leader, oldest, List.copyOf(members));
  }

  /**
   * Reads a view.
   *
   * @return null if the file does not exist or cannot be parsed (e.g. written by something else)
   */
  static View read(Path file) {
    try {
      View v = parse(Files.readString(file, StandardCharsets.UTF_8));
      long touched = Files.getLastModifiedTime(file).toMillis(); // see Writer: an unchanged view is only touched
      return touched > v.updatedMillis()
          ? new View(touched, v.self(), v.selfUid(), v.selfStatus(), v.leader(), v.oldest(), v.members())
          : v;
    } catch (NoSuchFileException e) {
      return null;
    } catch (IOException | IllegalArgumentException e) {
      return null;
    }
  }

  /** The view of the node running {@code system} now. */
  static View snapshot(ActorSystem<?> system) {
    Cluster cluster = Cluster.get(system);
    ClusterEvent.CurrentClusterState state = cluster.state();
    Set<Member> unreachable = new HashSet<>(state.getUnreachable());
    List<MemberView> members = new ArrayList<>();
    Member oldest = null;
    for (Member m : state.getMembers()) {
      members.add(new MemberView(m.address().toString(), m.uniqueAddress().longUid(), m.status().toString(),
          List.copyOf(new TreeSet<>(m.getRoles())), !unreachable.contains(m)));
      if (m.status() == akka.cluster.MemberStatus.up() && m.hasRole("broker")
          && (oldest == null || m.isOlderThan(oldest))) {
        oldest = m;
      }
    }
    Member self = cluster.selfMember();
    Address leader = state.getLeader();
    return new View(System.currentTimeMillis(), self.address().toString(), self.uniqueAddress().longUid(),
        self.status().toString(), leader == null ? null : leader.toString(),
        oldest == null ? null : oldest.address().toString(), members);
  }

  /** Writes {@code text} to {@code file} atomically (a temporary file beside it, then a move). */
  static void writeAtomically(Path file, String text) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.writeString(tmp, text, StandardCharsets.UTF_8);
    try {
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  /**
   * Brings a node's members file up to date every second on a daemon thread of its own: it rewrites the file when the
   * view changed, and otherwise only sets the file's modification time, which {@link #read} takes as the view's time
   * (a rewrite creates, writes and renames a file: profiled at 0.8% of a broker's CPU at 20,000 records/s).
   */
  static final class Writer implements AutoCloseable {
    private final Path file;
    private final ScheduledExecutorService timer;
    private View written; // confined to the timer thread

    private Writer(Path file) {
      this.file = file;
      this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "tributary-members-file");
        t.setDaemon(true);
        return t;
      });
    }

    /**
     * Removes a previous node's file (so no stale view is read as this node's) and checks the directory.
     *
     * @throws CliException if the file's directory cannot be written
     */
    static Writer create(Path file) {
      try {
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.deleteIfExists(file);
      } catch (IOException e) {
        throw new CliException("Cannot write the members file " + file + ": " + e.getMessage(), e);
      }
      return new Writer(file);
    }

    /** Writes the view of {@code system} now and then every second, until {@link #close()}. */
    void start(ActorSystem<?> system) {
      timer.scheduleAtFixedRate(() -> {
        try {
          View now = snapshot(system);
          if (written != null && sameExceptTime(written, now)) {
            Files.setLastModifiedTime(file, FileTime.fromMillis(now.updatedMillis()));
          } else {
            written = null;
            writeAtomically(file, format(now));
            written = now;
          }
        } catch (IOException | RuntimeException e) {
          written = null; // rewrite next time (the file may be gone)
          // best effort: the next tick tries again; a reader treats an old view as stale
        }
      }, 0, 1, TimeUnit.SECONDS);
    }

    private static boolean sameExceptTime(View a, View b) {
      return a.self().equals(b.self()) && a.selfUid() == b.selfUid() && a.selfStatus().equals(b.selfStatus())
          && java.util.Objects.equals(a.leader(), b.leader()) && java.util.Objects.equals(a.oldest(), b.oldest())
          && a.members().equals(b.members());
    }

    /** Stops writing. Idempotent. The last view stays (with its time) for diagnosis. */
    @Override
    public void close() {
      timer.shutdownNow();
      try {
        timer.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
