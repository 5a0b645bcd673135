/**
 * The nouns of model distribution: manifests, jobs, placements, tasks and their states. Plain
 * immutable records shared by the master, the scheduler and the node workers; no I/O here.
 */
package io.mooncake.dist.scheduler.domain;
