package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Processes;
import io.mooncake.dist.tests.support.TestFiles;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A gated Hugging Face model, end to end on real processes: {@code bin/mooncake manifest build
 * hf://...} reads a local hub (revision API, paged tree API) with {@code HF_TOKEN}, pins the commit
 * and prints the seed's credential line; the operator puts the token in the seed's {@code
 * --source-credentials} file; the master, allowing only the hub's and its CDN's origins, takes the
 * job {@code bin/mooncake submit} sends; the seed downloads each file from {@code
 * /<repo>/resolve/<commit>/<path>}, following the hub's 302 to the CDN for LFS files, and a
 * follower copies from it. The token reaches the hub only, never the CDN, a job, a table or a log.
 */
class HuggingFaceSourceEndToEndTest {
  private static final String TOKEN = "hf_endToEndToken4f3e2d1c0b";
  private static final String REPO = "org/gated-model";
  private static final String COMMIT = "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d";
  private static final ObjectMapper JSON = new ObjectMapper();

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir Path tmp;

  /** A file of the repo and whether the hub keeps it in LFS (and so redirects it to the CDN). */
  private record HubFile(byte[] bytes, boolean lfs) {}

  /** A request one of the two servers saw, and whether it carried a credential. */
  private record Seen(String server, String path, boolean authorized, boolean anyAuthorization) {}

  private final Map<String, HubFile> files = new LinkedHashMap<>();
  private final List<Seen> seen = new CopyOnWriteArrayList<>();
  private HttpServer hub;
  private HttpServer cdn;

  @Test
  void aGatedHubModelIsPinnedListedAndStagedWithTheTokenReachingOnlyTheHub() throws Exception {
    files.put("config.json", new HubFile(bytes(tmp.resolve("g/config.json"), 321, 1), false));
    files.put(
        "tokenizer.json", new HubFile(bytes(tmp.resolve("g/tokenizer.json"), 40_000, 2), false));
    files.put(
        "model-00001-of-00002.safetensors",
        new HubFile(bytes(tmp.resolve("g/s1"), 2 * 1024 * 1024 + 4321, 3), true));
    files.put(
        "model-00002-of-00002.safetensors",
        new HubFile(bytes(tmp.resolve("g/s2"), 1024 * 1024 + 17, 4), true));
    startHubAndCdn();
    String endpoint = "http://127.0.0.1:" + hub.getAddress().getPort();
    String cdnOrigin = "http://127.0.0.1:" + cdn.getAddress().getPort();
    try {
      // 1. The manifest, by the CLI, with the token from HF_TOKEN as huggingface_hub takes it.
      Path manifest = tmp.resolve("manifest.json");
      Run build =
          mooncake(
              Map.of("HF_TOKEN", TOKEN, "HF_ENDPOINT", endpoint),
              "manifest",
              "build",
              "hf://" + REPO,
              "--chunk-size",
              "1MiB",
              "-o",
              manifest.toString());
      assertEquals(0, build.exitCode(), build.output());
      assertFalse(build.output().contains(TOKEN), build.output());
      String credentialLine =
          build
              .output()
              .lines()
              .map(String::strip)
              .filter(l -> l.startsWith(endpoint + "/ Authorization: Bearer "))
              .findFirst()
              .orElseThrow(() -> new AssertionError("no credential line:\n" + build.output()));
      JsonNode m = JSON.readTree(Files.readString(manifest));
      assertEquals(COMMIT, m.get("revision").asText());
      assertEquals(files.size(), m.get("files").size());
      for (JsonNode f : m.get("files")) {
        HubFile hf = files.get(f.get("path").asText());
        assertEquals("sha256:" + sha256(hf.bytes()), f.get("checksum").asText());
        assertEquals(
            endpoint + "/" + REPO + "/resolve/" + COMMIT + "/" + f.get("path").asText(),
            f.get("download_url").asText());
      }
      assertTrue(
          seen.stream().anyMatch(s -> s.path().contains("cursor=")), "the tree came in pages");
      assertTrue(
          seen.stream().noneMatch(s -> s.server().equals("cdn")),
          "building the manifest downloads no LFS file");
      seen.clear();

      // 2. The operator's step: the printed line, the token in place of the placeholder.
      Path creds =
          TestFiles.privateFile(
              tmp.resolve("seed-credentials"), credentialLine.replace("<HF token>", TOKEN) + "\n");

      // 3. A master allowing the hub and its CDN only, a seed with the credentials, a follower.
      int httpPort = TestFiles.freePort();
      String seed = "127.0.0.1:" + TestFiles.freePort();
      String follower = "127.0.0.1:" + TestFiles.freePort();
      try (Processes procs = new Processes(tmp.resolve("logs"))) {
        procs.start(
            "master",
            "mooncake_master",
            "--http-port",
            String.valueOf(httpPort),
            "--allowed-sources",
            endpoint + "," + cdnOrigin,
            "--db-url",
            pg.url(),
            "--scheduler-tick-ms",
            "200",
            "--no-auth");
        String master = "http://127.0.0.1:" + httpPort;
        Api api = new Api(master);
        Processes.await(
            "master /health", Duration.ofSeconds(60), () -> api.get("/health").status() == 200);
        procs.start(
            "seed",
            "mooncake_client",
            "--node-id",
            seed,
            "--data-dir",
            tmp.resolve("n1").toString(),
            "--db-url",
            pg.url(),
            "--poll-ms",
            "200",
            "--source-credentials",
            creds.toString());
        procs.start(
            "follower",
            "mooncake_client",
            "--node-id",
            follower,
            "--data-dir",
            tmp.resolve("n2").toString(),
            "--db-url",
            pg.url(),
            "--poll-ms",
            "200");

        Run submit =
            mooncake(
                Map.of(),
                "submit",
                "--master",
                master,
                "--manifest",
                manifest.toString(),
                "--seed",
                seed,
                "--targets",
                follower);
        assertEquals(0, submit.exitCode(), submit.output());
        String jobId = submit.output().strip().lines().reduce((a, b) -> b).orElseThrow().strip();
        JsonNode job =
            api.awaitJob(
                jobId,
                j -> j.get("status").asText().matches("completed|failed"),
                Duration.ofSeconds(90));
        String logs = procs.log("master") + procs.log("seed") + procs.log("follower");
        assertEquals("completed", job.get("status").asText(), job + "\n" + logs);
        assertEquals(2, job.get("placements").size());
        for (JsonNode p : job.get("placements")) {
          Path dir = Path.of(p.get("local_path").asText());
          for (Map.Entry<String, HubFile> f : files.entrySet()) {
            assertTrue(
                java.util.Arrays.equals(
                    f.getValue().bytes(), Files.readAllBytes(dir.resolve(f.getKey()))),
                f.getKey() + " on " + p.get("node_id"));
          }
        }

        // The seed asked the hub with the token, followed two redirects to the CDN without it.
        List<Seen> resolves = seen.stream().filter(s -> s.server().equals("hub")).toList();
        assertEquals(
            files.size(),
            resolves.stream().map(Seen::path).distinct().count(),
            resolves.toString());
        assertTrue(resolves.stream().allMatch(Seen::authorized), resolves.toString());
        List<Seen> cdnHits = seen.stream().filter(s -> s.server().equals("cdn")).toList();
        assertEquals(2, cdnHits.size(), cdnHits.toString());
        assertTrue(cdnHits.stream().noneMatch(Seen::anyAuthorization), "the token reached the CDN");
        assertFalse(job.toString().contains(TOKEN), job.toString());
        assertFalse(logs.contains(TOKEN), logs);
      }
    } finally {
      hub.stop(0);
      cdn.stop(0);
    }
  }

  private static byte[] bytes(Path file, long size, long seed) throws IOException {
    return Files.readAllBytes(TestFiles.random(file, size, seed));
  }

  // ---- the local hub: revision and paged tree APIs, resolve with 302 to the CDN, gated ----

  private void startHubAndCdn() throws IOException {
    hub = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    cdn = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    hub.createContext("/", this::hub);
    cdn.createContext("/", this::cdn);
    hub.start();
    cdn.start();
  }

  private void hub(HttpExchange ex) throws IOException {
    try (ex) {
      String path = ex.getRequestURI().getRawPath();
      String query = ex.getRequestURI().getRawQuery();
      boolean authorized =
          ("Bearer " + TOKEN).equals(ex.getRequestHeaders().getFirst("Authorization"));
      if (!path.startsWith("/api/")) {
        seen.add(new Seen("hub", path, authorized, authorized));
      } else {
        seen.add(new Seen("api", path + "?" + query, authorized, authorized));
      }
      if (!authorized) {
        ex.getResponseHeaders().add("X-Error-Code", "GatedRepo");
        send(
            ex,
            401,
            ("{\"error\":\"Access to model " + REPO + " is restricted.\"}")
                .getBytes(StandardCharsets.UTF_8));
        return;
      }
      String api = "/api/models/" + REPO;
      if (path.equals(api + "/revision/main")) {
        ObjectNode root = JSON.createObjectNode().put("id", REPO).put("sha", COMMIT);
        root.put("private", false).put("gated", "manual");
        ArrayNode siblings = root.putArray("siblings");
        files.keySet().forEach(p -> siblings.addObject().put("rfilename", p));
        send(ex, 200, JSON.writeValueAsBytes(root));
      } else if (path.equals(api + "/tree/" + COMMIT)) {
        int from =
            query != null && query.contains("cursor=")
                ? Integer.parseInt(query.replaceAll(".*cursor=", ""))
                : 0;
        List<String> paths = new ArrayList<>(files.keySet());
        int to = Math.min(paths.size(), from + 3);
        ArrayNode page = JSON.createArrayNode();
        for (String p : paths.subList(from, to)) {
          HubFile f = files.get(p);
          ObjectNode n =
              page.addObject().put("type", "file").put("size", f.bytes().length).put("path", p);
          if (f.lfs()) {
            n.put("oid", "b".repeat(40));
            n.putObject("lfs")
                .put("oid", sha256(f.bytes()))
                .put("size", f.bytes().length)
                .put("pointerSize", 134);
          } else {
            n.put("oid", gitBlobId(f.bytes()));
          }
        }
        if (to < paths.size()) {
          ex.getResponseHeaders()
              .add(
                  "Link",
                  "<http://127.0.0.1:"
                      + hub.getAddress().getPort()
                      + api
                      + "/tree/"
                      + COMMIT
                      + "?recursive=true&cursor="
                      + to
                      + ">; rel=\"next\"");
        }
        send(ex, 200, JSON.writeValueAsBytes(page));
      } else if (path.startsWith("/" + REPO + "/resolve/" + COMMIT + "/")) {
        HubFile f = files.get(path.substring(("/" + REPO + "/resolve/" + COMMIT + "/").length()));
        if (f == null) {
          ex.getResponseHeaders().add("X-Error-Code", "EntryNotFound");
          send(ex, 404, new byte[0]);
          return;
        }
        ex.getResponseHeaders().add("X-Repo-Commit", COMMIT);
        if (f.lfs()) {
          ex.getResponseHeaders().add("X-Linked-Etag", "\"" + sha256(f.bytes()) + "\"");
          ex.getResponseHeaders().add("X-Linked-Size", String.valueOf(f.bytes().length));
          ex.getResponseHeaders()
              .add(
                  "Location",
                  "http://127.0.0.1:"
                      + cdn.getAddress().getPort()
                      + "/repos/"
                      + sha256(f.bytes())
                      + "?Expires=1&Signature=abc");
          ex.sendResponseHeaders(302, -1);
        } else {
          send(ex, 200, f.bytes());
        }
      } else {
        ex.getResponseHeaders().add("X-Error-Code", "RevisionNotFound");
        send(ex, 404, new byte[0]);
      }
    }
  }

  private void cdn(HttpExchange ex) throws IOException {
    try (ex) {
      boolean anyAuth = ex.getRequestHeaders().containsKey("Authorization");
      seen.add(new Seen("cdn", ex.getRequestURI().getRawPath(), false, anyAuth));
      String sha = ex.getRequestURI().getRawPath().replaceFirst("^/repos/", "");
      for (HubFile f : files.values()) {
        if (f.lfs() && sha256(f.bytes()).equals(sha)) {
          send(ex, 200, f.bytes());
          return;
        }
      }
      send(ex, 404, new byte[0]);
    }
  }

  private static void send(HttpExchange ex, int status, byte[] body) throws IOException {
    ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    if (body.length > 0) {
      try (OutputStream out = ex.getResponseBody()) {
        out.write(body);
      }
    }
  }

  private static String sha256(byte[] bytes) {
    return digest("SHA-256", bytes);
  }

  private static String gitBlobId(byte[] bytes) {
    byte[] head = ("blob " + bytes.length + "\0").getBytes(StandardCharsets.US_ASCII);
    byte[] all = new byte[head.length + bytes.length];
    System.arraycopy(head, 0, all, 0, head.length);
    System.arraycopy(bytes, 0, all, head.length, bytes.length);
    return digest("SHA-1", all);
  }

  private static String digest(String algorithm, byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance(algorithm).digest(bytes));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  // ---- bin/mooncake with a chosen environment: no Hugging Face settings but the ones given ----

  private record Run(int exitCode, String output) {}

  private Run mooncake(Map<String, String> env, String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Processes.root().resolve("bin/mooncake").toString());
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().keySet().removeIf(k -> k.startsWith("HF_") || k.equals("XDG_CACHE_HOME"));
    pb.environment().put("HOME", Files.createDirectories(tmp.resolve("home")).toString());
    pb.environment().putAll(env);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("bin/mooncake " + String.join(" ", args) + " did not finish");
    }
    return new Run(p.exitValue(), out);
  }
}
