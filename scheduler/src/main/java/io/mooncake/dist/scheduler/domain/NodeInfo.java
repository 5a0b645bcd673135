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
    String serveLastError) {}
