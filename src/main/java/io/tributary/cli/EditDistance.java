package io.tributary.cli;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * Typo distance for "did you mean" hints: the optimal string alignment distance (Levenshtein plus the swap of two
 * neighbouring characters, each edit counting 1). Stateless and thread-safe.
 */
final class EditDistance {
  private EditDistance() {}

  /** The number of single-character insertions, deletions, substitutions and neighbour swaps from a to b. */
  static int between(String a, String b) {
    int n = a.length();
    int m = b.length();
    int[][] d = new int[n + 1][m + 1];
    for (int i = 0; i <= n; i++) {
      d[i][0] = i;
    }
    for (int j = 0; j <= m; j++) {
      d[0][j] = j;
    }
    for (int i = 1; i <= n; i++) {
      for (int j = 1; j <= m; j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
        if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
          d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return d[n][m];
  }

  /**
   * The candidates at most {@code maxDistance} edits from {@code typed} (and fewer edits than half the candidate's
   * length, so that short words are not "close" to everything), nearest first, ties in the candidates' order.
   */
  static List<String> closest(String typed, Collection<String> candidates, int maxDistance) {
    List<String> close = new ArrayList<>();
    for (String c : candidates) {
      int d = between(typed, c);
      if (d <= maxDistance && d * 2 < c.length() && !close.contains(c)) {
        close.add(c);
      }
    }
    close.sort(Comparator.comparingInt(c -> between(typed, c)));
    return close;
  }
}
