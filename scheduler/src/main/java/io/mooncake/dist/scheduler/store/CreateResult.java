package io.mooncake.dist.scheduler.store;

/** The outcome of a create: a new job, a repeat of an identical request, or a conflicting one. */
public enum CreateResult {
  CREATED,
  ALREADY_EXISTS,
  CONFLICT
}
