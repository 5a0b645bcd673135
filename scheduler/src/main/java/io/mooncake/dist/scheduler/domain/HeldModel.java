package io.mooncake.dist.scheduler.domain;

/**
 * A model a node holds on its disk, as its heartbeats reported it: bytes (partial files included),
 * when it was last used there (staged, served to a peer or asked for by a job; to the minute), and
 * whether an operator pinned it there. A pinned model the node does not hold has 0 bytes and no use
 * time.
 */
public record HeldModel(ModelRef model, long bytes, String lastUsedAt, boolean pinned) {}
