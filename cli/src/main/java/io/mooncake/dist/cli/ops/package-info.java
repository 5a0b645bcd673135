/**
 * {@code mooncake ops}: the ops-sql reports ({@link io.mooncake.dist.ops.Reports}) run straight
 * against the database and printed as aligned tables. The only subcommand that needs the database.
 */
package io.mooncake.dist.cli.ops;
