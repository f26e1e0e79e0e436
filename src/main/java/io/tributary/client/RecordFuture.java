package io.tributary.client;

import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The future of one sent record that also runs the sender's {@link Callback} (if any) when it completes: one object
 * per record instead of a future plus a dependent stage. Thread-safe as {@link CompletableFuture}; the callback runs
 * at most once, on the completing thread, after the future is complete.
 */
final class RecordFuture extends CompletableFuture<RecordMetadata> {
  private static final Logger log = LoggerFactory.getLogger(RecordFuture.class);
  private final Callback callback;

  RecordFuture(Callback callback) {
    this.callback = callback;
  }

  @Override
  public boolean complete(RecordMetadata value) {
    boolean first = super.complete(value);
    if (first && callback != null) {
      run(value, null);
    }
    return first;
  }

  @Override
  public boolean completeExceptionally(Throwable ex) {
    boolean first = super.completeExceptionally(ex);
    if (first && callback != null) {
      run(null, ex instanceof Exception e ? e : new RuntimeException(ex));
    }
    return first;
  }

  private void run(RecordMetadata metadata, Exception exception) {
    try {
      callback.onCompletion(metadata, exception);
    } catch (RuntimeException e) {
      log.warn("A producer callback threw; ignored", e);
    }
  }

  @Override
  public <U> CompletableFuture<U> newIncompleteFuture() {
    return new CompletableFuture<>(); // dependent stages are plain futures
  }
}
