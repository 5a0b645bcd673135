package io.mooncake.dist.bench.fleet;

import io.mooncake.dist.transfer.ByteSink;
import io.mooncake.dist.transfer.ChunkTransferException;
import io.mooncake.dist.transfer.FetchResult;
import io.mooncake.dist.transfer.ObjectDigest;
import io.mooncake.dist.transfer.ObjectLocator;
import io.mooncake.dist.worker.Transport;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.function.LongConsumer;

/**
 * The timing model that replaces the bytes: every node has an uplink and a downlink of {@code rate}
 * bytes per second, shared by the transfers that cross them. A node serves an object it holds (its
 * transfer completed, or it is the seed) or, as the real chunk server does, one it is receiving, no
 * faster than it arrives; asked for anything else it answers NOT_FOUND. Like the real chunk server it
 * sends one object to at most {@link Transport#READERS_PER_OBJECT} readers at a time and answers
 * the next BUSY. Every 30 s it prints a {@code sim-links:} line to the log: how many links are full,
 * and how much of the traffic moves no faster than its source receives it. No byte is moved: the
 * fetch returns the digest the object's bytes (zeros) have.
 *
 * <p>Rates are recomputed every tick ({@code SIM_TICK_MS}, 100 ms by default: one tick's fill over
 * 8,000 flows took 13-122 ms of the starved simulator's time at N = 1,000, so at the 20 ms of
 * sessions 15-23 the model itself took a large share of the two cores it shares with the code under
 * test, and every fetch's start and end waited on the tick's lock; an object of 64 MiB at 16 MiB/s
 * takes 4 s, so 100 ms moves a transfer's end by at most 2.5%). The ticker sleeps between ticks
 * as a timer, not to wait for anything. {@code fair} = {@code max-min} (the default) gives
 * every transfer its max-min fair share, as TCP flows sharing links approach it: capacity a transfer
 * cannot use (its other link is busier, or it relays an object no faster than the object arrives)
 * goes to the transfers that can. {@code naive} (the model before session 15) gives a transfer
 * min(uplink / transfers out of its source, downlink / transfers into its destination) and lets
 * what a transfer limited elsewhere leaves unused go idle: a follower receiving eight relays, seven
 * of them waiting for bytes to arrive upstream, got an eighth of its downlink for the eighth.
 */
final class SimNetwork implements AutoCloseable {
  private final double rate;
  private final boolean maxMin;
  private final int tickMillis;
  private final Map<String, Node> nodes = new ConcurrentHashMap<>();
  private final Object lock = new Object();
  private final List<Flow> flows = new ArrayList<>();
  private final Map<Long, String> digestByLength = new ConcurrentHashMap<>();
  private final Thread ticker;
  private volatile boolean running = true;

  SimNetwork(double bytesPerSecond, boolean maxMin, int tickMillis) {
    if (tickMillis < 1) {
      throw new IllegalArgumentException("tick must be at least 1 ms, not " + tickMillis);
    }
    this.rate = bytesPerSecond;
    this.maxMin = maxMin;
    this.tickMillis = tickMillis;
    this.ticker = Thread.ofPlatform().daemon().name("sim-network").start(this::tickLoop);
  }

  /** The digest of {@code length} zero bytes, as the seed publishes it for its sparse file. */
  String zeroDigest(long length) {
    return digestByLength.computeIfAbsent(
        length,
        n -> {
          ObjectDigest d = ObjectDigest.start(ObjectDigest.Algorithm.CRC32C_CRC32);
          byte[] zeros = new byte[1 << 20];
          for (long left = n; left > 0; left -= zeros.length) {
            d.update(zeros, 0, (int) Math.min(zeros.length, left));
          }
          return d.finish();
        });
  }

  Node node(String hostPort) {
    return nodes.computeIfAbsent(hostPort, Node::new);
  }

  private final class Flow {
    final Node src;
    final Node dst;
    final String objectId;
    final long offset;
    final long length;
    final LongConsumer progress;
    final CompletableFuture<Void> done = new CompletableFuture<>();
    double got;
    double feed; // this tick: what its source's own arrival allows (infinite for a holder)
    double cap; // this tick: bytes/s it can take at most (its feed), then its rate
    boolean fixed;

    Flow(Node src, Node dst, String objectId, long offset, long length, LongConsumer progress) {
      this.src = src;
      this.dst = dst;
      this.objectId = objectId;
      this.offset = offset;
      this.length = length;
      this.progress = progress;
    }
  }

  /** One node's links and what it holds; the worker's {@link Transport}. */
  final class Node implements Transport {
    final String key;
    final Set<String> holds = ConcurrentHashMap.newKeySet();
    final Map<String, Flow> incoming = new HashMap<>();
    /** Flows out of this node per object (under the network's lock). */
    final Map<String, Integer> sending = new HashMap<>();
    volatile long served;
    int up;
    int down;
    final Link upLink = new Link();
    final Link downLink = new Link();

    Node(String key) {
      this.key = key;
    }

    @Override
    public Served serve(String bindHost, int port, ObjectLocator locator) {
      return new Served() {
        @Override
        public int port() {
          return port;
        }

        @Override
        public long bytesServed() {
          return served;
        }

        @Override
        public void close() {}
      };
    }

    @Override
    public FetchResult fetch(
        String host,
        int port,
        String objectId,
        long offset,
        long length,
        ByteSink sink,
        ObjectDigest.Algorithm algorithm,
        LongConsumer progress)
        throws ChunkTransferException {
      Node src = nodes.get(host + ":" + port);
      if (src == null) {
        throw new ChunkTransferException(
            ChunkTransferException.Kind.CONNECTION, "no simulated node at " + host + ":" + port);
      }
      Flow f = new Flow(src, this, objectId, offset, length, progress);
      // A real node registers an object it starts receiving (Arrivals) before it names its source
      // in Postgres, so a reader that found it there is served. Here the flow is registered only
      // when the fetch starts, a moment later: a source neither holding nor receiving the object
      // gets up to a second to start before it answers NOT_FOUND.
      for (int waited = 0; ; waited += 20) {
        synchronized (lock) {
          if (src.holds.contains(objectId) || src.incoming.containsKey(objectId)) {
            if (src.sending.getOrDefault(objectId, 0) >= Transport.READERS_PER_OBJECT) {
              throw new ChunkTransferException(
                  ChunkTransferException.Kind.BUSY,
                  "busy: object "
                      + objectId
                      + " is being sent to "
                      + Transport.READERS_PER_OBJECT
                      + " readers here already");
            }
            flows.add(f);
            src.sending.merge(objectId, 1, Integer::sum);
            incoming.put(objectId, f);
            break;
          }
        }
        if (waited >= 1000) {
          throw new ChunkTransferException(
              ChunkTransferException.Kind.NOT_FOUND, src.key + " does not hold " + objectId);
        }
        try {
          Thread.sleep(20);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new ChunkTransferException(ChunkTransferException.Kind.CONNECTION, "interrupted");
        }
      }
      try {
        f.done.get();
      } catch (InterruptedException e) {
        drop(f);
        Thread.currentThread().interrupt();
        throw new ChunkTransferException(ChunkTransferException.Kind.CONNECTION, "interrupted");
      } catch (ExecutionException e) {
        drop(f);
        throw (ChunkTransferException) e.getCause();
      }
      return new FetchResult(length, zeroDigest(length));
    }

    @Override
    public void close() {}
  }

  private void drop(Flow f) {
    synchronized (lock) {
      if (flows.remove(f)) {
        ended(f);
      }
      f.dst.incoming.remove(f.objectId, f);
    }
  }

  /** A flow left {@code flows} (under the lock): one reader fewer of its object at its source. */
  private static void ended(Flow f) {
    f.src.sending.computeIfPresent(f.objectId, (id, n) -> n <= 1 ? null : n - 1);
  }

  private void tickLoop() {
    long last = System.nanoTime();
    while (running) {
      try {
        Thread.sleep(tickMillis);
      } catch (InterruptedException e) {
        return;
      }
      long now = System.nanoTime();
      tick((now - last) / 1e9);
      last = now;
      tickNanos += System.nanoTime() - now;
      ticks++;
    }
  }

  /** A link's state during one tick's max-min fill. */
  private static final class Link {
    final List<Flow> flows = new ArrayList<>();
    double used; // by the flows whose rate is fixed
    int open; // flows whose rate is not fixed yet
    double key; // the level at which it saturates when it was queued

    double level(double rate) {
      return (rate - used) / open;
    }

    /** Adds a flow for this tick; the first one lists the link in {@code links}. */
    void join(Flow f, List<Link> links) {
      if (flows.isEmpty()) {
        links.add(this);
        used = 0;
      }
      flows.add(f);
    }

    /** A flow through this link was fixed at {@code rate}. */
    void carry(double rate) {
      used += rate;
      open--;
    }
  }

  private void tick(double dt) {
    List<Flow> finished = new ArrayList<>();
    synchronized (lock) {
      for (Iterator<Flow> it = flows.iterator(); it.hasNext(); ) {
        Flow f = it.next();
        f.cap = Double.POSITIVE_INFINITY;
        if (!f.src.holds.contains(f.objectId)) {
          Flow feeding = f.src.incoming.get(f.objectId);
          if (feeding == null) {
            it.remove();
            ended(f);
            f.dst.incoming.remove(f.objectId, f);
            f.done.completeExceptionally(
                new ChunkTransferException(
                    ChunkTransferException.Kind.CONNECTION,
                    f.src.key + " stopped receiving " + f.objectId));
            continue;
          }
          f.cap = Math.max(0, feeding.offset + feeding.got - f.offset - f.got) / dt;
        }
        f.feed = f.cap;
      }
      if (maxMin) {
        fillMaxMin();
      } else {
        for (Flow f : flows) {
          f.src.up = 0;
          f.dst.down = 0;
        }
        for (Flow f : flows) {
          f.src.up++;
          f.dst.down++;
        }
        for (Flow f : flows) {
          f.cap = Math.min(f.cap, rate / Math.max(f.src.up, f.dst.down));
        }
      }
      report();
      for (Iterator<Flow> it = flows.iterator(); it.hasNext(); ) {
        Flow f = it.next();
        double before = f.got;
        f.got = Math.min(f.length, before + f.cap * dt);
        f.src.served += (long) (f.got - before);
        if (f.got >= f.length) {
          it.remove();
          ended(f);
          f.dst.incoming.remove(f.objectId, f);
          f.dst.holds.add(f.objectId);
          finished.add(f);
        }
      }
    }
    for (Flow f : flows.isEmpty() ? List.<Flow>of() : snapshot()) {
      f.progress.accept((long) f.got);
    }
    for (Flow f : finished) {
      f.progress.accept(f.length);
      f.done.complete(null);
    }
  }

  /**
   * Progressive filling: every flow's rate rises together until a link saturates (its remaining
   * capacity shared by its open flows) or a flow reaches its own cap; those flows keep that rate and
   * the rest rise on. Links are taken in order of the level at which they saturate (a priority queue;
   * a link's level only rises as flows through it are fixed below it), capped flows in order of cap.
   * On return every flow's {@code cap} is its rate for this tick.
   */
  private void fillMaxMin() {
    List<Link> links = new ArrayList<>();
    for (Flow f : flows) {
      f.fixed = false;
      f.src.upLink.join(f, links);
      f.dst.downLink.join(f, links);
    }
    PriorityQueue<Link> queue =
        new PriorityQueue<>(Math.max(1, links.size()), (a, b) -> Double.compare(a.key, b.key));
    for (Link l : links) {
      l.open = l.flows.size();
      l.key = l.level(rate);
      queue.add(l);
    }
    List<Flow> capped = new ArrayList<>();
    for (Flow f : flows) {
      if (f.cap != Double.POSITIVE_INFINITY) {
        capped.add(f);
      }
    }
    capped.sort((a, b) -> Double.compare(a.cap, b.cap));
    int nextCapped = 0;
    while (true) {
      Link l = queue.peek();
      while (l != null && (l.open == 0 || l.key != l.level(rate))) {
        queue.poll();
        if (l.open > 0) {
          l.key = l.level(rate);
          queue.add(l);
        }
        l = queue.peek();
      }
      while (nextCapped < capped.size() && capped.get(nextCapped).fixed) {
        nextCapped++;
      }
      Flow c = nextCapped < capped.size() ? capped.get(nextCapped) : null;
      if (l == null && c == null) {
        break;
      }
      if (c != null && (l == null || c.cap <= l.key)) {
        fix(c, c.cap);
        continue;
      }
      queue.poll();
      double level = l.key;
      for (Flow f : l.flows) {
        if (!f.fixed) {
          fix(f, level);
        }
      }
    }
    for (Link l : links) {
      l.flows.clear();
    }
  }

  private long nextReport = System.nanoTime() + 30_000_000_000L;
  // Written and read by the ticker thread only (report() runs inside tick()).
  private long tickNanos;
  private long ticks;

  /** Every 30 s (under the lock): how full the links are, and what holds the flows back. */
  private void report() {
    if (System.nanoTime() < nextReport || flows.isEmpty()) {
      return;
    }
    nextReport = System.nanoTime() + 30_000_000_000L;
    Map<Node, Double> upUse = new HashMap<>();
    Map<Node, Double> downUse = new HashMap<>();
    Map<Node, Integer> ins = new HashMap<>();
    double total = 0;
    int feedBound = 0;
    double feedBoundRate = 0;
    for (Flow f : flows) {
      total += f.cap;
      upUse.merge(f.src, f.cap, Double::sum);
      downUse.merge(f.dst, f.cap, Double::sum);
      ins.merge(f.dst, 1, Integer::sum);
      if (f.feed != Double.POSITIVE_INFINITY && f.cap >= f.feed * 0.999) {
        feedBound++;
        feedBoundRate += f.cap;
      }
    }
    long upFull = upUse.values().stream().filter(u -> u >= rate * 0.99).count();
    long downFull = downUse.values().stream().filter(d -> d >= rate * 0.99).count();
    int[] inHist = new int[12];
    for (int n : ins.values()) {
      inHist[Math.min(11, n)]++;
    }
    System.err.printf(
        "sim-links: flows=%d total=%.0f%% of %d nodes' downlinks; senders=%d up_full=%d;"
            + " receivers=%d down_full=%d; feed_bound flows=%d (%.0f%% of bytes); flows_in hist=%s;"
            + " ticks=%d (%.2f ms each)%n",
        flows.size(),
        100 * total / (rate * nodes.size()),
        nodes.size(),
        upUse.size(),
        upFull,
        downUse.size(),
        downFull,
        feedBound,
        total == 0 ? 0 : 100 * feedBoundRate / total,
        java.util.Arrays.toString(inHist),
        ticks,
        ticks == 0 ? 0 : tickNanos / 1e6 / ticks);
    tickNanos = 0;
    ticks = 0;
  }

  private static void fix(Flow f, double rate) {
    f.fixed = true;
    f.cap = Math.max(0, rate);
    f.src.upLink.carry(f.cap);
    f.dst.downLink.carry(f.cap);
  }

  private List<Flow> snapshot() {
    synchronized (lock) {
      return new ArrayList<>(flows);
    }
  }

  @Override
  public void close() {
    running = false;
    ticker.interrupt();
  }
}
