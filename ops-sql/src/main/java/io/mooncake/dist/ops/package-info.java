/**
 * Operator reports: named, read-only SQL queries over the distribution schema (queue depth, stuck
 * tasks, node throughput, failure reasons, job durations, seed reuse, in-flight jobs).
 *
 * <p>Each report is one file in {@code ops-sql/reports/}, runnable as is with {@code psql "$URL" -f
 * ops-sql/reports/<name>.sql}, and packaged as a classpath resource under the same path so {@link
 * io.mooncake.dist.ops.Reports} runs the very same text from Java. The files are the single source:
 * there is no Java copy of any query to drift from what operators run.
 */
package io.mooncake.dist.ops;
