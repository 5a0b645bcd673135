package io.mooncake.dist.master;

import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.mooncake.dist.master.validation.JobRequestParser;
import io.mooncake.dist.master.validation.ParsedRequest;
import io.mooncake.dist.master.validation.ValidationException;
import io.mooncake.dist.scheduler.domain.JobSnapshot;
import io.mooncake.dist.scheduler.store.CreateResult;
import io.mooncake.dist.scheduler.store.JobStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * The RFC's endpoints under {@code /api/v1/model-distribution}: create a job, query its snapshot.
 * Handlers only parse, call the store and serialize.
 */
final class DistributionService implements HttpService {
  private final JobStore jobs;
  private final Runnable onJobCreated;

  DistributionService(JobStore jobs, Runnable onJobCreated) {
    this.jobs = jobs;
    this.onJobCreated = onJobCreated;
  }

  @Override
  public void routing(HttpRules rules) {
    rules.post("/jobs", this::create)
        .get("/jobs", this::query);
  }

  private void create(ServerRequest req, ServerResponse res) {
    byte[] body = readLimited(req, JobRequestParser.MAX_BODY_BYTES);
    ParsedRequest parsed = JobRequestParser.parse(body);
    String jobId = parsed.request().jobId();
    CreateResult result = jobs.create(parsed.request(), parsed.canonicalSha256(), parsed.json().toString());
    switch (result) {
      case CONFLICT -> throw new ApiError(409, "job_id",
          "job_id '" + jobId + "' already exists with a different request body");
      case CREATED -> {
        onJobCreated.run();
        Responses.json(res, 201, snapshot(jobId));
      }
      case ALREADY_EXISTS -> Responses.json(res, 200, snapshot(jobId));
    }
  }

  private void query(ServerRequest req, ServerResponse res) {
    String jobId = req.query().first("job_id").orElse("");
    if (jobId.isEmpty()) {
      throw new ApiError(400, "job_id", "query parameter job_id is required");
    }
    Responses.json(res, 200, snapshot(jobId));
  }

  private JobSnapshot snapshot(String jobId) {
    return jobs.snapshot(jobId)
        .orElseThrow(() -> new ApiError(404, "job_id", "no distribution job with job_id '" + jobId + "'"));
  }

  /** Reads at most {@code limit} bytes; a larger body is refused without reading all of it. */
  private static byte[] readLimited(ServerRequest req, int limit) {
    if (!req.content().hasEntity()) {
      throw new ValidationException("body", "request body is required");
    }
    try (InputStream in = req.content().inputStream()) {
      byte[] bytes = in.readNBytes(limit + 1);
      if (bytes.length > limit) {
        throw new ApiError(413, "body", "request body exceeds " + limit + " bytes");
      }
      return bytes;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
