package io.mooncake.dist.master.validation;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.scheduler.domain.JobRequest;

/**
 * A validated create request.
 *
 * @param request the domain request built from the body
 * @param canonicalSha256 lower-case hex SHA-256 of the body's canonical form: two bodies with the
 *     same JSON content (whatever their key order or whitespace) share it, so a re-POST of the same
 *     job can be recognised as idempotent while a changed one cannot
 * @param json the parsed body, unknown fields included; treat it as read-only
 */
public record ParsedRequest(JobRequest request, String canonicalSha256, JsonNode json) {}
