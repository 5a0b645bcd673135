package io.mooncake.dist.master.validation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A corpus of well-formed JSON bodies that break one rule each: the RFC example with one value
 * replaced or removed. Each must be refused naming exactly the offending field.
 */
class MalformedRequestTest {
  private static final String REMOVED = null;
  private static final String FILE = "manifest.files[0].";
  private static final String SECOND = "manifest.files[1].";

  /** One edit of a base request, and the error it must produce. */
  record Case(Supplier<ObjectNode> base, String path, String value, String field, String fragment) {
    @Override
    public String toString() {
      String edit = value == REMOVED ? "without " + path : path + " = " + value;
      return edit + " is rejected at " + field + " saying '" + fragment + "'";
    }
  }

  static Case rfc(String path, String value, String field, String fragment) {
    return new Case(TestRequests::rfc, path, value, field, fragment);
  }

  static Case twoFiles(String path, String value, String field, String fragment) {
    return new Case(TestRequests::twoFiles, path, value, field, fragment);
  }

  /** Two files whose object ids share one prefix, so ids can collide across files. */
  static ObjectNode twoFilesSharingAPrefix() {
    return TestRequests.set(
        TestRequests.twoFiles(),
        SECOND + "chunk_layout.object_prefix",
        TestRequests.json("\"demo-model/r1\""));
  }

  static Stream<Case> corpus() {
    String long129 = "\"" + "j".repeat(129) + "\"";
    return Stream.of(
        // job_id
        rfc("job_id", REMOVED, "job_id", "is required"),
        rfc("job_id", "42", "job_id", "must be a string, got an integer"),
        rfc("job_id", "null", "job_id", "must be a string, got null"),
        rfc("job_id", "\"\"", "job_id", "must not be empty"),
        rfc("job_id", long129, "job_id", "must be at most 128 characters"),
        rfc("job_id", "\"job 1\"", "job_id", "must contain only letters"),
        rfc("job_id", "\"job/1\"", "job_id", "must contain only letters"),
        // model
        rfc("model", REMOVED, "model", "is required"),
        rfc("model", "null", "model", "must be an object, got null"),
        rfc("model", "\"demo-model\"", "model", "must be an object, got a string"),
        rfc("model", "[]", "model", "must be an object, got an array"),
        rfc("model.model_id", REMOVED, "model.model_id", "is required"),
        rfc("model.model_id", "7", "model.model_id", "must be a string"),
        rfc("model.model_id", "\"\"", "model.model_id", "must not be empty"),
        rfc("model.model_id", "\"/x\"", "model.model_id", "non-empty segments"),
        rfc("model.model_id", "\"a//b\"", "model.model_id", "non-empty segments"),
        rfc("model.model_id", "\"a/\"", "model.model_id", "non-empty segments"),
        rfc("model.model_id", "\"../x\"", "model.model_id", "must not contain '.' or '..'"),
        rfc("model.model_id", "\"a/./b\"", "model.model_id", "must not contain '.' or '..'"),
        rfc("model.model_id", "\"a b\"", "model.model_id", "must contain only letters"),
        rfc("model.revision", "\"\"", "model.revision", "must not be empty"),
        rfc("model.revision", "\"r/1\"", "model.revision", "must contain only letters"),
        rfc("model.revision", "1", "model.revision", "must be a string, got an integer"),
        rfc("model.format", "\"..\"", "model.format", "must not contain '.' or '..'"),
        rfc("model.format", "true", "model.format", "must be a string, got a boolean"),
        rfc("model.provider", REMOVED, "model.provider", "is required"),
        rfc(
            "model.provider",
            "\"" + "p".repeat(129) + "\"",
            "model.provider",
            "must be at most 128"),
        // manifest identity and totals
        rfc("manifest", REMOVED, "manifest", "is required"),
        rfc("manifest", "null", "manifest", "must be an object, got null"),
        rfc("manifest", "[]", "manifest", "must be an object, got an array"),
        rfc("manifest.model_id", REMOVED, "manifest.model_id", "is required"),
        rfc(
            "manifest.model_id",
            "\"other\"",
            "manifest.model_id",
            "must equal model.model_id ('demo-model')"),
        rfc("manifest.revision", "\"r2\"", "manifest.revision", "must equal model.revision ('r1')"),
        rfc("manifest.format", "\"gguf\"", "manifest.format", "must equal model.format ('bin')"),
        rfc("manifest.provider", "1", "manifest.provider", "must be a string"),
        rfc("manifest.total_size_bytes", REMOVED, "manifest.total_size_bytes", "is required"),
        rfc(
            "manifest.total_size_bytes",
            "\"1048576\"",
            "manifest.total_size_bytes",
            "must be an integer, got a string"),
        rfc(
            "manifest.total_size_bytes",
            "1048576.0",
            "manifest.total_size_bytes",
            "must be an integer, got a fractional number"),
        rfc("manifest.total_size_bytes", "1e6", "manifest.total_size_bytes", "must be an integer"),
        rfc(
            "manifest.total_size_bytes",
            "-1",
            "manifest.total_size_bytes",
            "must be a non-negative integer"),
        rfc(
            "manifest.total_size_bytes",
            "99999999999999999999",
            "manifest.total_size_bytes",
            "within the signed 64-bit range"),
        rfc(
            "manifest.total_size_bytes",
            "1048577",
            "manifest.total_size_bytes",
            "must equal the sum of files' size_bytes (1048576), got 1048577"),
        twoFiles(
            "manifest.total_size_bytes",
            "1048576",
            "manifest.total_size_bytes",
            "must equal the sum of files' size_bytes (2097152)"),
        rfc(
            "manifest.file_manifest_version",
            REMOVED,
            "manifest.file_manifest_version",
            "is required"),
        rfc(
            "manifest.file_manifest_version",
            "\"v2\"",
            "manifest.file_manifest_version",
            "must be 'v1', got 'v2'"),
        rfc(
            "manifest.file_manifest_version",
            "1",
            "manifest.file_manifest_version",
            "must be a string"),
        rfc("manifest.files", REMOVED, "manifest.files", "is required"),
        rfc("manifest.files", "{}", "manifest.files", "must be an array, got an object"),
        rfc("manifest.files", "[]", "manifest.files", "must not be empty"),
        rfc("manifest.files[0]", "1", "manifest.files[0]", "must be an object, got an integer"),
        rfc("manifest.files[0]", "null", "manifest.files[0]", "must be an object, got null"),
        // file path
        rfc(FILE + "path", REMOVED, FILE + "path", "is required"),
        rfc(FILE + "path", "[\"model.bin\"]", FILE + "path", "must be a string, got an array"),
        rfc(FILE + "path", "\"\"", FILE + "path", "must not be empty"),
        rfc(
            FILE + "path",
            "\"../x\"",
            FILE + "path",
            "must not contain empty, '.' or '..' segments"),
        rfc(
            FILE + "path",
            "\"a/../../b\"",
            FILE + "path",
            "must not contain empty, '.' or '..' segments"),
        rfc(
            FILE + "path",
            "\"./model.bin\"",
            FILE + "path",
            "must not contain empty, '.' or '..' segments"),
        rfc(
            FILE + "path",
            "\"a//b\"",
            FILE + "path",
            "must not contain empty, '.' or '..' segments"),
        rfc(
            FILE + "path",
            "\"dir/\"",
            FILE + "path",
            "must not contain empty, '.' or '..' segments"),
        rfc(FILE + "path", "\"/etc/passwd\"", FILE + "path", "must be a relative path"),
        rfc(FILE + "path", "\"a\\\\b\"", FILE + "path", "must use '/' as separator"),
        rfc(FILE + "path", "\"C:/x\"", FILE + "path", "must not start with a drive letter"),
        rfc(
            FILE + "path",
            "\"a\\u0000b\"",
            FILE + "path",
            "must not contain control characters, found U+0000"),
        rfc(FILE + "path", "\"a\\nb\"", FILE + "path", "must not contain control characters"),
        rfc(
            FILE + "path",
            "\"" + "p".repeat(4097) + "\"",
            FILE + "path",
            "must be at most 4096 characters"),
        twoFiles(
            SECOND + "path",
            "\"model.bin\"",
            SECOND + "path",
            "duplicate path 'model.bin' (already used by manifest.files[0].path)"),
        twoFiles(
            SECOND + "path",
            "\"model.bin/part\"",
            SECOND + "path",
            "lies under 'model.bin', which is itself a file (manifest.files[0].path)"),
        // size and checksum
        rfc(FILE + "size_bytes", REMOVED, FILE + "size_bytes", "is required"),
        rfc(FILE + "size_bytes", "-1", FILE + "size_bytes", "must be a non-negative integer"),
        rfc(
            FILE + "size_bytes",
            "\"1048576\"",
            FILE + "size_bytes",
            "must be an integer, got a string"),
        rfc(
            FILE + "size_bytes",
            "1.5",
            FILE + "size_bytes",
            "must be an integer, got a fractional number"),
        rfc(
            FILE + "size_bytes",
            "1125899906842625",
            FILE + "size_bytes",
            "must be at most 1125899906842624"),
        rfc(
            FILE + "size_bytes",
            "18446744073709551616",
            FILE + "size_bytes",
            "within the signed 64-bit range"),
        rfc(FILE + "checksum", REMOVED, FILE + "checksum", "is required"),
        rfc(FILE + "checksum", "\"\"", FILE + "checksum", "must not be empty"),
        rfc(FILE + "checksum", "42", FILE + "checksum", "must be a string"),
        rfc(
            FILE + "checksum",
            "\"sha256:abc\"",
            FILE + "checksum",
            "followed by exactly 64 hex digits"),
        rfc(
            FILE + "checksum",
            "\"SHA256:" + "g".repeat(64) + "\"",
            FILE + "checksum",
            "followed by exactly 64 hex digits"),
        rfc(
            FILE + "checksum",
            "\"" + "c".repeat(257) + "\"",
            FILE + "checksum",
            "must be at most 256 characters"),
        // download_url
        rfc(FILE + "download_url", REMOVED, FILE + "download_url", "is required"),
        rfc(FILE + "download_url", "\"\"", FILE + "download_url", "must not be empty"),
        rfc(FILE + "download_url", "{}", FILE + "download_url", "must be a string, got an object"),
        rfc(
            FILE + "download_url",
            "\"ftp://host/model.bin\"",
            FILE + "download_url",
            "scheme 'ftp' is not supported"),
        rfc(
            FILE + "download_url",
            "\"s3://bucket/model.bin\"",
            FILE + "download_url",
            "scheme 's3' is not supported"),
        rfc(
            FILE + "download_url",
            "\"https://alice:s3cret@models.example/m.bin\"",
            FILE + "download_url",
            "must not carry credentials"),
        rfc(
            FILE + "download_url",
            "\"http://token@models.example/m.bin\"",
            FILE + "download_url",
            "must not carry credentials"),
        rfc(
            FILE + "download_url",
            "\"model.bin\"",
            FILE + "download_url",
            "must be a file:// or http(s):// URL or an absolute local path"),
        rfc(
            FILE + "download_url",
            "\"tmp/model.bin\"",
            FILE + "download_url",
            "must be a file:// or http(s):// URL or an absolute local path"),
        rfc(
            FILE + "download_url",
            "\"file://fileserver/tmp/model.bin\"",
            FILE + "download_url",
            "must not name a remote host"),
        rfc(
            FILE + "download_url",
            "\"file:/tmp/model.bin\"",
            FILE + "download_url",
            "must look like file:///absolute/path"),
        rfc(
            FILE + "download_url",
            "\"file:///\"",
            FILE + "download_url",
            "must name an absolute file path"),
        rfc(
            FILE + "download_url",
            "\"file:///tmp/a%00b\"",
            FILE + "download_url",
            "must not contain control characters"),
        rfc(
            FILE + "download_url",
            "\"http:///model.bin\"",
            FILE + "download_url",
            "must name a host"),
        rfc(
            FILE + "download_url",
            "\"https://exa mple.com/x\"",
            FILE + "download_url",
            "must be a valid URL"),
        // artifact
        rfc(FILE + "artifact", REMOVED, FILE + "artifact", "is required"),
        rfc(
            FILE + "artifact",
            "\"artifact\"",
            FILE + "artifact",
            "must be an object, got a string"),
        rfc(FILE + "artifact.artifact_key", REMOVED, FILE + "artifact.artifact_key", "is required"),
        rfc(
            FILE + "artifact.artifact_key",
            "\"\"",
            FILE + "artifact.artifact_key",
            "must not be empty"),
        rfc(
            FILE + "artifact.artifact_key",
            "1",
            FILE + "artifact.artifact_key",
            "must be a string"),
        rfc(FILE + "artifact.object_ids", REMOVED, FILE + "artifact.object_ids", "is required"),
        rfc(
            FILE + "artifact.object_ids",
            "\"demo-model/r1/chunk-000\"",
            FILE + "artifact.object_ids",
            "must be an array, got a string"),
        rfc(
            FILE + "artifact.object_ids[2]",
            "2",
            FILE + "artifact.object_ids[2]",
            "must be a string, got an integer"),
        rfc(
            FILE + "artifact.object_ids",
                "[\"demo-model/r1/chunk-000\",\"demo-model/r1/chunk-001\",\"demo-model/r1/chunk-002\"]",
            FILE + "artifact.object_ids", "must have chunk_layout.chunk_count = 4 entries, got 3"),
        rfc(
            FILE + "artifact.object_ids[1]",
            "\"demo-model/r1/chunk-000\"",
            FILE + "artifact.object_ids[1]",
            "duplicate object id 'demo-model/r1/chunk-000' (already used by manifest.files[0].artifact.object_ids[0])"),
        twoFiles(
            SECOND + "artifact.object_ids[2]",
            "\"demo-model/r1/b/chunk-000\"",
            SECOND + "artifact.object_ids[2]",
            "duplicate object id 'demo-model/r1/b/chunk-000' (already used by manifest.files[1].artifact.object_ids[0])"),
        new Case(
            MalformedRequestTest::twoFilesSharingAPrefix,
            SECOND + "artifact.object_ids[2]",
            "\"demo-model/r1/chunk-001\"",
            SECOND + "artifact.object_ids[2]",
            "duplicate object id 'demo-model/r1/chunk-001' (already used by manifest.files[0].artifact.object_ids[1])"),
        rfc(
            FILE + "artifact.object_ids[3]",
            "\"other/chunk-003\"",
            FILE + "artifact.object_ids[3]",
            "must start with chunk_layout.object_prefix 'demo-model/r1'"),
        rfc(
            FILE + "artifact.object_ids[0]",
            "\"\"",
            FILE + "artifact.object_ids[0]",
            "must not be empty"),
        rfc(
            FILE + "artifact.object_ids[0]",
            "\"demo-model/r1/\\t\"",
            FILE + "artifact.object_ids[0]",
            "must not contain control characters"),
        // chunk_layout
        rfc(FILE + "chunk_layout", REMOVED, FILE + "chunk_layout", "is required"),
        rfc(FILE + "chunk_layout", "null", FILE + "chunk_layout", "must be an object, got null"),
        rfc(
            FILE + "chunk_layout.chunk_size_bytes",
            REMOVED,
            FILE + "chunk_layout.chunk_size_bytes",
            "is required"),
        rfc(
            FILE + "chunk_layout.chunk_size_bytes",
            "0",
            FILE + "chunk_layout.chunk_size_bytes",
            "must be between 1 and 1099511627776, got 0"),
        rfc(
            FILE + "chunk_layout.chunk_size_bytes",
            "1099511627777",
            FILE + "chunk_layout.chunk_size_bytes",
            "must be between 1 and 1099511627776"),
        rfc(
            FILE + "chunk_layout.chunk_size_bytes",
            "\"262144\"",
            FILE + "chunk_layout.chunk_size_bytes",
            "must be an integer, got a string"),
        rfc(
            FILE + "chunk_layout.chunk_count",
            "5",
            FILE + "chunk_layout.chunk_count",
            "must be ceil(size_bytes / chunk_size_bytes) = 4, got 5"),
        rfc(
            FILE + "chunk_layout.chunk_count",
            "-4",
            FILE + "chunk_layout.chunk_count",
            "must be a non-negative integer"),
        rfc(
            FILE + "chunk_layout.chunk_count",
            "4.0",
            FILE + "chunk_layout.chunk_count",
            "must be an integer, got a fractional number"),
        rfc(
            FILE + "chunk_layout.chunk_size_bytes",
            "1",
            FILE + "chunk_layout.chunk_count",
            "must be ceil(size_bytes / chunk_size_bytes) = 1048576, got 4"),
        rfc(
            FILE + "chunk_layout.object_prefix",
            REMOVED,
            FILE + "chunk_layout.object_prefix",
            "is required"),
        rfc(
            FILE + "chunk_layout.object_prefix",
            "7",
            FILE + "chunk_layout.object_prefix",
            "must be a string, got an integer"),
        // seed and targets
        rfc("seed_node_id", REMOVED, "seed_node_id", "is required"),
        rfc("seed_node_id", "25001", "seed_node_id", "must be a string, got an integer"),
        rfc("seed_node_id", "\"node1\"", "seed_node_id", "must be a host:port node id"),
        rfc("seed_node_id", "\"1.2.3.4:0\"", "seed_node_id", "port must be 1-65535"),
        rfc("seed_node_id", "\"1.2.3.4:99999\"", "seed_node_id", "port must be 1-65535"),
        rfc("seed_node_id", "\":80\"", "seed_node_id", "must be a host:port node id"),
        rfc(
            "seed_node_id",
            "\"127.0.0.1:025001\"",
            "seed_node_id",
            "must be written canonically as '127.0.0.1:25001'"),
        rfc("seed_node_id", "\"127.0.0.1:25003\"", "seed_node_id", "must be one of target_nodes"),
        rfc("target_nodes", REMOVED, "target_nodes", "is required"),
        rfc("target_nodes", "[]", "target_nodes", "must not be empty"),
        rfc(
            "target_nodes",
            "\"127.0.0.1:25001\"",
            "target_nodes",
            "must be an array, got a string"),
        rfc(
            "target_nodes[1]",
            "\"127.0.0.1:25001\"",
            "target_nodes[1]",
            "duplicate node '127.0.0.1:25001' (same as target_nodes[0])"),
        rfc("target_nodes[1]", "25002", "target_nodes[1]", "must be a string, got an integer"),
        rfc("target_nodes[1]", "\"node1\"", "target_nodes[1]", "must be a host:port node id"),
        rfc("target_nodes[1]", "\"1.2.3.4:99999\"", "target_nodes[1]", "port must be 1-65535"),
        // replica_policy
        rfc("replica_policy", "\"all\"", "replica_policy", "must be an object, got a string"),
        rfc(
            "replica_policy.target_replica_count",
            "0",
            "replica_policy.target_replica_count",
            "must be between 1 and 2"),
        rfc(
            "replica_policy.target_replica_count",
            "3",
            "replica_policy.target_replica_count",
            "must be between 1 and 2 (the number of target_nodes), got 3"),
        rfc(
            "replica_policy.target_replica_count",
            "\"2\"",
            "replica_policy.target_replica_count",
            "must be an integer, got a string"),
        rfc(
            "replica_policy.target_replica_count",
            "2.5",
            "replica_policy.target_replica_count",
            "must be an integer"),
        // fallback_seeds (extension)
        rfc(
            "fallback_seeds",
            "\"127.0.0.1:25002\"",
            "fallback_seeds",
            "must be an array, got a string"),
        rfc(
            "fallback_seeds",
            "[\"127.0.0.1:25002\", \"127.0.0.1:25003\", \"127.0.0.1:25004\"]",
            "fallback_seeds",
            "must have at most 2 entries (the number of target_nodes), got 3"),
        rfc("fallback_seeds", "[25002]", "fallback_seeds[0]", "must be a string, got an integer"),
        rfc("fallback_seeds", "[\"node1\"]", "fallback_seeds[0]", "must be a host:port node id"),
        rfc(
            "fallback_seeds",
            "[\"127.0.0.1:25003\"]",
            "fallback_seeds[0]",
            "must be one of target_nodes, got '127.0.0.1:25003'"),
        rfc(
            "fallback_seeds",
            "[\"127.0.0.1:25001\"]",
            "fallback_seeds[0]",
            "must not be the seed_node_id '127.0.0.1:25001' itself"),
        rfc(
            "fallback_seeds",
            "[\"127.0.0.1:25002\", \"127.0.0.1:25002\"]",
            "fallback_seeds[1]",
            "duplicate node '127.0.0.1:25002' (same as fallback_seeds[0])"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("corpus")
  void each_malformed_request_is_rejected_naming_the_offending_field(Case c) {
    ObjectNode request = c.base().get();
    JsonNode value = c.value() == REMOVED ? null : TestRequests.json(c.value());
    TestRequests.set(request, c.path(), value);

    ValidationException e =
        assertThrows(
            ValidationException.class, () -> JobRequestParser.parse(TestRequests.bytes(request)));

    assertEquals(c.field(), e.field(), e::getMessage);
    assertTrue(e.getMessage().startsWith(c.field() + ": "), e::getMessage);
    assertTrue(
        e.getMessage().contains(c.fragment()),
        () -> "expected '" + c.fragment() + "' in: " + e.getMessage());
  }
}
