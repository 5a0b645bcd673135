/**
 * Talking to {@code mooncake_master} over its HTTP API: one small client around {@link
 * java.net.http.HttpClient} that turns "cannot connect", 5xx and Mooncake's JSON error bodies into
 * the CLI's exit codes, and read-only views of the job snapshot the commands print.
 */
package io.mooncake.dist.cli.master;
