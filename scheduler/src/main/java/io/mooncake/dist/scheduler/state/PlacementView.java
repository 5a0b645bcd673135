package io.mooncake.dist.scheduler.state;

import io.mooncake.dist.scheduler.domain.PlacementState;

/** The evaluated state of one placement. */
public record PlacementView(String nodeId, PlacementState state, String lastError) {}
