/**
 * {@code GET /metrics}: Prometheus text exposition (format 0.0.4) written by hand, with gauges and
 * counters computed from Postgres at scrape time and HTTP request counts kept in memory by a
 * filter. No client library: the format is a few lines of text and the values live in the database.
 */
package io.mooncake.dist.master.metrics;
