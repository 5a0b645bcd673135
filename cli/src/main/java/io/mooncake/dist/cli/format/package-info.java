/**
 * Pure text formatting for the terminal: aligned tables, byte sizes, durations, progress bars,
 * transfer rates and ETAs. No I/O here, so every rule is unit-tested without a master or a clock.
 */
package io.mooncake.dist.cli.format;
