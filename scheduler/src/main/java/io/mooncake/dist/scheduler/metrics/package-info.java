/**
 * The Prometheus text exposition writer shared by the master's and the clients' {@code /metrics}
 * (both depend on this module; neither on the other).
 */
package io.mooncake.dist.scheduler.metrics;
