package io.mooncake.dist.cli.jobs;

/** Canned job snapshots in the master's wire shape, for the views and the fake master. */
final class Snapshots {
  static final long MIB = 1 << 20;

  private Snapshots() {}

  static String placement(
      String node,
      String role,
      String state,
      long staged,
      long total,
      boolean verified,
      String lastError) {
    return """
        {"node_id": "%s", "role": "%s", "state": "%s", "local_path": null, "staged_bytes": %d,
         "total_bytes": %d, "checksum_verified": %s, "last_error": %s}"""
        .formatted(
            node,
            role,
            state,
            staged,
            total,
            verified,
            lastError == null ? "null" : "\"" + lastError + "\"");
  }

  static String job(String id, String status, String lastError, long total, String... placements) {
    return """
        {"job_id": "%s", "status": "%s", "last_error": %s, "placements": [%s],
         "model": {"model_id": "demo-model", "revision": "r1", "format": "bin", "provider": "local"},
         "seed_node_id": "127.0.0.1:25001", "total_size_bytes": %d, "integrity": "manifest_sha256",
         "created_at": "2025-12-01T05:00:00Z", "updated_at": "2025-12-01T05:00:03Z"}"""
        .formatted(
            id,
            status,
            lastError == null ? "null" : "\"" + lastError + "\"",
            String.join(",", placements),
            total);
  }
}
