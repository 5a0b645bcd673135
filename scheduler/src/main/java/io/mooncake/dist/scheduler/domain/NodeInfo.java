package io.mooncake.dist.scheduler.domain;



/** A registered node and whether it heartbeated recently enough to count as live. */
public record NodeInfo(
    String nodeId, String host, int port, String dataDir, String instanceId,
    String startedAt, String heartbeatAt, boolean live) {}
