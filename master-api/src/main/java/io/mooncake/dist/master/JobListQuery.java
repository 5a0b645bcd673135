package io.mooncake.dist.master;

import io.helidon.common.uri.UriQuery;
import io.mooncake.dist.master.validation.ValidationException;
import io.mooncake.dist.scheduler.domain.JobStatus;
import io.mooncake.dist.scheduler.store.JobCursor;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The query of the job list, {@code ?state=&limit=&after=}, validated: an unknown state, a limit
 * outside 1..{@value #MAX_LIMIT} or a cursor this API did not hand out is a 400 naming the
 * parameter.
 */
record JobListQuery(JobStatus state, int limit, JobCursor after) {
  static final int DEFAULT_LIMIT = 50;
  static final int MAX_LIMIT = 500;
  private static final String STATES =
      Arrays.stream(JobStatus.values()).map(JobStatus::wire).collect(Collectors.joining(", "));

  static JobListQuery parse(UriQuery query) {
    return new JobListQuery(state(query), limit(query), after(query));
  }

  private static JobStatus state(UriQuery query) {
    String value = query.first("state").orElse(null);
    if (value == null) {
      return null;
    }
    for (JobStatus s : JobStatus.values()) {
      if (s.wire().equals(value)) {
        return s;
      }
    }
    throw new ValidationException("state", "must be one of " + STATES + ", got '" + value + "'");
  }

  private static int limit(UriQuery query) {
    String value = query.first("limit").orElse(null);
    if (value == null) {
      return DEFAULT_LIMIT;
    }
    try {
      int limit = Integer.parseInt(value);
      if (limit >= 1 && limit <= MAX_LIMIT) {
        return limit;
      }
    } catch (NumberFormatException e) {
      // reported below with the same message as an out-of-range number
    }
    throw new ValidationException(
        "limit", "must be an integer from 1 to " + MAX_LIMIT + ", got '" + value + "'");
  }

  private static JobCursor after(UriQuery query) {
    String value = query.first("after").orElse(null);
    if (value == null) {
      return null;
    }
    try {
      JobCursor cursor = JobCursor.decode(value);
      // A cursor is opaque but decodable: its job id must be one this API could have handed out.
      io.mooncake.dist.master.validation.Identifiers.jobId(cursor.jobId(), "after");
      return cursor;
    } catch (ValidationException e) {
      throw new ValidationException("after", "not a cursor returned by this API (bad job id)");
    } catch (IllegalArgumentException e) {
      throw new ValidationException(
          "after", e.getMessage() + "; pass the \"next\" value of the previous page");
    }
  }
}
