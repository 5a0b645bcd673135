/**
 * The distribution-job subcommands: {@code submit}, {@code status}, {@code watch}, {@code cancel}
 * and {@code jobs}. Commands only parse flags, call the master and print; what they print is built
 * by pure views ({@link io.mooncake.dist.cli.jobs.StatusView}, {@link
 * io.mooncake.dist.cli.jobs.WatchView}) so the output is tested without a master.
 */
package io.mooncake.dist.cli.jobs;
