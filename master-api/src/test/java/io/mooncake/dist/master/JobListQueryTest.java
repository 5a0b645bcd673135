package io.mooncake.dist.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.helidon.common.uri.UriQuery;
import io.mooncake.dist.master.validation.ValidationException;
import io.mooncake.dist.scheduler.domain.JobStatus;
import io.mooncake.dist.scheduler.store.JobCursor;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class JobListQueryTest {
  private static JobListQuery parse(String query) {
    return JobListQuery.parse(UriQuery.create(query));
  }

  private static ValidationException rejected(String query) {
    return assertThrows(ValidationException.class, () -> parse(query));
  }

  @Test
  void noParametersMeanEveryStateTheFirstPageAnd50Jobs() {
    JobListQuery q = parse("");
    assertNull(q.state());
    assertNull(q.after());
    assertEquals(50, q.limit());
  }

  @Test
  void everyJobStateIsAcceptedInItsWireForm() {
    for (JobStatus s : JobStatus.values()) {
      assertEquals(s, parse("state=" + s.wire()).state());
    }
  }

  @Test
  void anUnknownStateIsRejectedNamingStateAndListingTheValidOnes() {
    ValidationException e = rejected("state=Completed");
    assertEquals("state", e.field());
    assertTrue(e.getMessage().startsWith("state: must be one of planned, seeding"), e.getMessage());
    assertTrue(e.getMessage().contains("'Completed'"));
  }

  @Test
  void theLimitMustBeAnIntegerFrom1To500() {
    assertEquals(1, parse("limit=1").limit());
    assertEquals(500, parse("limit=500").limit());
    for (String bad : new String[] {"0", "-1", "501", "2147483648", "1.5", "", "ten"}) {
      assertEquals("limit", rejected("limit=" + bad).field(), bad);
    }
  }

  @Test
  void aCursorRoundTripsAndAnythingElseIsRejectedNamingAfter() {
    JobCursor c =
        new JobCursor(Instant.parse("2026-01-02T03:04:05.123456Z"), "job.with:odd-chars_1");
    assertEquals(c, parse("after=" + c.encode()).after());
    assertTrue(c.encode().matches("[A-Za-z0-9_-]+"), "URL-safe without escaping: " + c.encode());
    for (String bad :
        new String[] {"!!", "dGVzdA", "djF8bm90LWEtdGltZXxq", "djF8MjAyNi0wMS0wMlQwMzowNDowNVp8"}) {
      assertEquals("after", rejected("after=" + bad).field(), bad);
    }
  }
}
