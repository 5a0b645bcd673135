/**
 * {@code bin/mooncake}: the operators' command line. {@link io.mooncake.dist.cli.MooncakeCli} is
 * the root command with the global options; each subcommand lives in the room named after what it
 * works on ({@code manifest}, {@code jobs}, {@code nodes}, {@code ops}); {@code master} is the HTTP
 * client they share and {@code format} the pure text formatting. Exit codes are in {@link
 * io.mooncake.dist.cli.ExitCode}.
 */
package io.mooncake.dist.cli;
