/**
 * A node's disk: what its data directory holds per model ({@link
 * io.mooncake.dist.worker.disk.DiskLedger}), the pure decisions of what to evict and whether a
 * model fits ({@link io.mooncake.dist.worker.disk.EvictionPlan}), and the keeper that applies them
 * under the high and low watermarks and before a placement moves its first byte ({@link
 * io.mooncake.dist.worker.disk.DiskKeeper}).
 */
package io.mooncake.dist.worker.disk;
