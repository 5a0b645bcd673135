/**
 * The scheduling loop that runs inside every master: rescue expired leases, then evaluate each
 * active job under its row lock (so exactly one master drives a job at a time) and enqueue tasks.
 */
package io.mooncake.dist.scheduler.loop;
