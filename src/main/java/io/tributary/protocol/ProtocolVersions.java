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
  public static final short CURRENT = 1;
  /**
   * The first version with {@link MultiProduceRequest} (several partitions' batches in one request). A client sends
   * it only as version 1 or later; a broker of version 0 cannot decode it (Artery drops it and the request times out),
   * so a newer client needs a broker at least this new. Version 0 requests are answered as before.
   */
  public static final short MULTI_PRODUCE = 1;
  /** The oldest version this build still answers. */
  public static final short MIN_SUPPORTED = 0;

  private ProtocolVersions() {}

  /** Whether a request of {@code version} can be answered by this build. */
  public static boolean isSupported(short version) {
    return version >= MIN_SUPPORTED && version <= CURRENT;
  }
}
