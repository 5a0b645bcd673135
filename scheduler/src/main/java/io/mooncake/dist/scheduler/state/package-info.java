/**
 * Pure state evaluation: from the facts about a job's tasks to its status, its placements and the
 * tasks to enqueue next. No I/O; the scheduler loop feeds facts in and applies the result.
 */
package io.mooncake.dist.scheduler.state;
