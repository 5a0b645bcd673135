/**
 * {@code mooncake_master}: the Helidon SE HTTP API (create, query, list and cancel distribution
 * jobs, list nodes, health), the operators' surface (status page, OpenAPI document, Prometheus
 * metrics) and the scheduling loop it starts. Stateless: run as many as you like.
 */
package io.mooncake.dist.master;
