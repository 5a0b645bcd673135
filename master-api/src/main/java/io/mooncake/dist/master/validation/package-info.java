/**
 * Parsing and validation of the create-job request body ({@code POST
 * /api/v1/model-distribution/jobs}).
 *
 * <p>{@link io.mooncake.dist.master.validation.JobRequestParser#parse(byte[])} turns untrusted
 * bytes into a {@link io.mooncake.dist.scheduler.domain.JobRequest}, or throws a {@link
 * io.mooncake.dist.master.validation.ValidationException} naming the offending field as a JSON
 * path. Nothing else escapes it, whatever the bytes: the HTTP layer maps that one exception to a
 * 400 and never has to guess whether a failure was the caller's or ours.
 */
package io.mooncake.dist.master.validation;
