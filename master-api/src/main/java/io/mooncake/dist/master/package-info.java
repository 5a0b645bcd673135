/**
 * {@code mooncake_master}: the Helidon SE HTTP API (create and query distribution jobs, list
 * nodes, health) and the scheduling loop it starts. Stateless: run as many as you like.
 */
package io.mooncake.dist.master;
