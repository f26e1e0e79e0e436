package io.tributary.protocol;

/**
 * Versions of the client–broker protocol.
 *
 * <p>Every request carries the version its sender speaks. A broker answers requests of any version from
 * {@link #MIN_SUPPORTED} to {@link #CURRENT}; an older client keeps working against a newer broker (new fields get
 * defaults), and a request newer than the broker understands is answered with {@link ErrorCode#UNSUPPORTED_VERSION}.
 * This is the same contract as Kafka's per-API request versions, with one version for the whole protocol.
 */
public final class ProtocolVersions {
  /** The version this build speaks. */
  public static final short CURRENT = 0;
  /** The oldest version this build still answers. */
  public static final short MIN_SUPPORTED = 0;

  private ProtocolVersions() {}

  /** Whether a request of {@code version} can be answered by this build. */
  public static boolean isSupported(short version) {
    return version >= MIN_SUPPORTED && version <= CURRENT;
  }
}
