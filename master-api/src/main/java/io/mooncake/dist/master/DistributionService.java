package io.mooncake.dist.master;

import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.mooncake.dist.master.validation.JobRequestParser;
import io.mooncake.dist.master.validation.ParsedRequest;
import io.mooncake.dist.master.validation.SourcePolicy;
import io.mooncake.dist.master.validation.ValidationException;
import io.mooncake.dist.scheduler.domain.JobSnapshot;
import io.mooncake.dist.scheduler.store.CancelOutcome;
import io.mooncake.dist.scheduler.store.CreateResult;
import io.mooncake.dist.scheduler.store.JobCancel;
import io.mooncake.dist.scheduler.store.JobListing;
import io.mooncake.dist.scheduler.store.JobStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * The endpoints under {@code /api/v1/model-distribution}: the RFC's create and snapshot, plus the
 * operators' job list and cancel. Handlers only parse, call the store and serialize.
 */
final class DistributionService implements HttpService {
  private final JobStore jobs;
  private final JobListing listing;
  private final JobCancel cancel;
  private final Runnable onJobCreated;
  private final SourcePolicy sources;

  DistributionService(
      JobStore jobs,
      JobListing listing,
      JobCancel cancel,
      Runnable onJobCreated,
      SourcePolicy sources) {
    this.sources = sources;
    this.jobs = jobs;
    this.listing = listing;
    this.cancel = cancel;
    this.onJobCreated = onJobCreated;
  }

  @Override
  public void routing(HttpRules rules) {
    rules.post("/jobs", this::create).get("/jobs", this::query).post("/jobs/cancel", this::cancel);
  }

  private void create(ServerRequest req, ServerResponse res) {
    byte[] body = readLimited(req, JobRequestParser.MAX_BODY_BYTES);
    ParsedRequest parsed = JobRequestParser.parse(body);
    sources.check(parsed.request());
    String jobId = parsed.request().jobId();
    CreateResult result =
        jobs.create(
            parsed.request(), parsed.canonicalSha256(), parsed.json().toString(), sources.rules());
    switch (result) {
      case CONFLICT ->
          throw new ApiError(
              409, "job_id", "job_id '" + jobId + "' already exists with a different request body");
      case CREATED -> {
        onJobCreated.run();
        Responses.json(res, 201, snapshot(jobId));
      }
      case ALREADY_EXISTS -> Responses.json(res, 200, snapshot(jobId));
    }
  }

  /** With {@code job_id}: that job's snapshot, as the RFC has it. Without: the job list. */
  private void query(ServerRequest req, ServerResponse res) {
    if (req.query().contains("job_id")) {
      Responses.json(res, 200, snapshot(requiredJobId(req)));
      return;
    }
    JobListQuery q = JobListQuery.parse(req.query());
    Responses.json(res, 200, listing.list(q.state(), q.limit(), q.after()));
  }

  private void cancel(ServerRequest req, ServerResponse res) {
    String jobId = requiredJobId(req);
    switch (cancel.cancel(jobId)) {
      case CancelOutcome.NotFound n -> throw notFound(jobId);
      case CancelOutcome.AlreadyTerminal t ->
          throw new ApiError(
              409,
              "job_id",
              "job '"
                  + jobId
                  + "' is already "
                  + t.status().wire()
                  + "; only planned, seeding or replicating jobs can be canceled");
      case CancelOutcome.Canceled c -> Responses.json(res, 200, snapshot(jobId));
    }
  }

  /** The {@code job_id} parameter, checked by the same rule as a created job's id. */
  private static String requiredJobId(ServerRequest req) {
    String jobId = req.query().first("job_id").orElse("");
    if (jobId.isEmpty()) {
      throw new ApiError(400, "job_id", "query parameter job_id is required");
    }
    return io.mooncake.dist.master.validation.Identifiers.jobId(jobId, "job_id");
  }

  private JobSnapshot snapshot(String jobId) {
    return jobs.snapshot(jobId).orElseThrow(() -> notFound(jobId));
  }

  private static ApiError notFound(String jobId) {
    return new ApiError(404, "job_id", "no distribution job with job_id '" + jobId + "'");
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
