/**
 * {@code bin/mooncake_demo}: a real local model distribution in one command. It picks a PostgreSQL
 * database, starts {@code bin/mooncake_master} and two {@code bin/mooncake_client}s as separate OS
 * processes, generates a model file, submits an RFC-shaped job over HTTP, prints progress until the
 * job is terminal, checks the staged bytes on both nodes, and stops everything it started.
 *
 * <p>It uses only the public interfaces (the launchers, the HTTP API, the files on disk), so what
 * it shows a newcomer is exactly what a control plane would see.
 */
package io.mooncake.dist.demo;
