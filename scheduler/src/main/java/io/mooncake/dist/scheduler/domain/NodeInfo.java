package io.mooncake.dist.scheduler.domain;

/** A registered node and whether it heartbeated recently enough to count as live. */
public record NodeInfo(
    String nodeId,
    String host,
    int port,
    String dataDir,
    String instanceId,
    String startedAt,
    String heartbeatAt,
    boolean live,
    /**
     * Consecutive copies that failed from this node as their source (0 after one it served well).
     */
    int serveFailures,
    /**
     * Whether source selection currently tries this node last (see {@code ReplicaCatalog.sources}).
     */
    boolean avoided,
    /** The last error a copy from this node ended with, or null. */
    String serveLastError,
    /** Size of the data directory's file system, as last reported; null before the first report. */
    Long capacityBytes,
    /**
     * Bytes free there (for this client's user), as last reported; null before the first report.
     */
    Long freeBytes,
    /**
     * Eviction starts above this share of the disk used (percent); null before the first report.
     */
    Integer highWatermarkPct,
    /** ... and stops at or below this one. */
    Integer lowWatermarkPct,
    /** Bytes of every model the node holds ({@link #models}). */
    long heldBytes,
    /** The models the node holds (and those pinned on it), most recently used first. */
    java.util.List<HeldModel> models) {}
