package io.mooncake.dist.worker.store;

import io.mooncake.dist.scheduler.domain.FilePlan;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.domain.ObjectPlan;
import io.mooncake.dist.scheduler.domain.SourceRules;
import io.mooncake.dist.scheduler.domain.SourceUrls;
import io.mooncake.dist.transfer.ObjectDigest;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The download of a seed that took over from a failed one (seed failover): reads from the source
 * only the objects no live node holds ({@link ResumePlan#toFetch}), one range request per run of
 * adjacent objects, and writes each into its byte range of the file, as a copy would. Each object
 * is hashed as it arrives, fsynced and handed to the sink (published) before the next one is read,
 * so followers start on it at once.
 *
 * <p>Unlike a seed's first download it neither creates the partial file afresh (the copies this
 * node made as a follower are in it, and its copies of held objects may still be writing) nor
 * renames it: the node's own {@code MATERIALIZE}, once every object is there, checks the whole file
 * and gives it its final name. A source that ignores the range (or a {@code file://} source, which
 * this read cannot prove unchanged without a validator) is read from byte 0, skipping up to the
 * run. A retry reads every object of the payload not held again.
 */
final class FillIn {
  private static final Logger log = LoggerFactory.getLogger(FillIn.class);
  private static final int BUFFER = 1 << 20;

  private FillIn() {}

  /**
   * @param before bytes fetched for earlier files of the payload (for {@code progress})
   * @return object id to digest for every object read, in byte order
   */
  static LinkedHashMap<String, String> file(
      ModelStore store,
      SourceOpener sources,
      ObjectDigest.Algorithm publishes,
      ModelRef model,
      SourceRules rules,
      FilePlan file,
      Set<String> held,
      long before,
      LongConsumer progress,
      ObjectSink sink)
      throws StoreException {
    List<ResumePlan.Run> runs = ResumePlan.toFetch(ObjectLayout.inByteOrder(file), held);
    LinkedHashMap<String, String> digests = new LinkedHashMap<>();
    if (runs.isEmpty()) {
      return digests;
    }
    String url = file.downloadUrl();
    if (url == null || url.isBlank()) {
      throw new StoreException("no download_url for " + file.path(), false);
    }
    String shown = SourceUrls.display(url);
    long fetched = before;
    try (FileChannel out = store.openForObjectWrite(model, file)) {
      for (ResumePlan.Run run : runs) {
        log.info(
            "fetching bytes {}-{} of {} from {} ({} object(s) no live node holds)",
            run.from(),
            run.end() - 1,
            file.path(),
            shown,
            run.objects().size());
        SourceOpener.Opened opened = sources.open(url, file.sizeBytes(), rules, run.from(), null);
        if (opened.startsAt() > run.from()) {
          // SourceOpener answers from the byte asked for or from 0; anything else is a bug here,
          // and writing those bytes at these offsets would corrupt the file.
          try {
            opened.in().close();
          } catch (IOException e) {
            log.debug("closing {} failed: {}", shown, e.toString());
          }
          throw new StoreException(
              shown + " answered from byte " + opened.startsAt() + ", not " + run.from(), false);
        }
        try (InputStream in = opened.in()) {
          skip(in, run.from() - opened.startsAt(), shown);
          for (ObjectPlan o : run.objects()) {
            digests.put(o.objectId(), object(in, out, o, publishes, shown, store, file, model));
            fetched += o.length();
            progress.accept(fetched);
            sink.completed(file, o, digests.get(o.objectId()));
          }
        } catch (IOException e) {
          throw new StoreException("reading " + shown + " failed: " + e.getMessage(), true, e);
        }
      }
    } catch (IOException e) {
      throw store.writeFailure(store.finalPath(model, file), e);
    }
    return digests;
  }

  private static void skip(InputStream in, long n, String shown) throws IOException {
    try {
      in.skipNBytes(n);
    } catch (java.io.EOFException e) {
      throw new IOException(shown + " ended before byte " + n, e);
    }
  }

  /** Reads one object, writes it at its offset, fsyncs it, and returns its digest. */
  private static String object(
      InputStream in,
      FileChannel out,
      ObjectPlan o,
      ObjectDigest.Algorithm publishes,
      String shown,
      ModelStore store,
      FilePlan file,
      ModelRef model)
      throws IOException, StoreException {
    ObjectDigest digest = ObjectDigest.start(publishes);
    byte[] buf = new byte[(int) Math.min(BUFFER, Math.max(1, o.length()))];
    long done = 0;
    while (done < o.length()) {
      int n = in.read(buf, 0, (int) Math.min(buf.length, o.length() - done));
      if (n < 0) {
        throw new IOException(
            shown + " ended inside object " + o.objectId() + " at byte " + (o.offset() + done));
      }
      digest.update(buf, 0, n);
      ByteBuffer bytes = ByteBuffer.wrap(buf, 0, n);
      try {
        while (bytes.hasRemaining()) {
          out.write(bytes, o.offset() + done + bytes.position());
        }
        if (done + n == o.length()) {
          out.force(false);
        }
      } catch (IOException e) {
        throw store.writeFailure(store.finalPath(model, file), e);
      }
      done += n;
    }
    return digest.finish();
  }
}
