/**
 * Postgres access for the domain, through jOOQ: jobs and snapshots, the task queue with its leases,
 * the node registry and the replica catalogue. Each class owns one table family.
 */
package io.mooncake.dist.scheduler.store;
