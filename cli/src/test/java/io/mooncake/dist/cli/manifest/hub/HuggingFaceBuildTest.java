package io.mooncake.dist.cli.manifest.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.mooncake.dist.cli.support.CliRun;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code mooncake manifest build hf://...} against a local hub ({@link FakeHub}) over real HTTP:
 * pinning, paging, checksums, download URLs that resolve to the bytes, and each refusal's message.
 */
class HuggingFaceBuildTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String COMMIT = "0123456789abcdef0123456789abcdef01234567";
  private static final String OTHER_COMMIT = "fedcba9876543210fedcba9876543210fedcba98";

  @TempDir Path dir;
  FakeHub hub;
  Path tokenFile;
  Path wrongTokenFile;
  byte[] config;
  byte[] shard1;
  byte[] shard2;
  byte[] notes;

  @BeforeEach
  void aHubWithAPublicAGatedAndABusyRepo() throws Exception {
    hub = new FakeHub();
    Random random = new Random(21);
    config = "{\"architectures\": [\"LlamaForCausalLM\"]}\n".getBytes();
    shard1 = bytes(random, 3000);
    shard2 = bytes(random, 1500);
    notes = bytes(random, 700);
    FakeHub.Repo model =
        hub.repo("org/model", COMMIT)
            .file(".gitattributes", "*.safetensors filter=lfs\n".getBytes(), false)
            .file("config.json", config, false)
            .file("shards/model-00001-of-00002.safetensors", shard1, true)
            .file("shards/model-00002-of-00002.safetensors", shard2, true)
            .file("docs/read me+notes.txt", notes, false);
    model.revisions.put("v1.0", COMMIT);
    model.revisions.put("refs/pr/1", COMMIT);
    hub.repo("org/gated", OTHER_COMMIT)
            .file("config.json", config, false)
            .file("model.safetensors", shard2, true)
            .gated =
        true;
    hub.repo("org/busy", OTHER_COMMIT).file("model.safetensors", shard2, true).busy = true;
    tokenFile = Files.writeString(dir.resolve("token"), FakeHub.TOKEN + "\n");
    wrongTokenFile = Files.writeString(dir.resolve("wrong-token"), "hf_notTheRightOne\n");
  }

  @AfterEach
  void stop() {
    hub.close();
  }

  private static byte[] bytes(Random random, int size) {
    byte[] b = new byte[size];
    random.nextBytes(b);
    return b;
  }

  private CliRun build(String source, Path token, String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "manifest",
                "build",
                source,
                "--hf-endpoint",
                hub.endpoint(),
                "--chunk-size",
                "1000"));
    if (token != null) {
      args.add("--hf-token-file");
      args.add(token.toString());
    }
    args.addAll(List.of(more));
    return CliRun.of(args.toArray(String[]::new));
  }

  @Test
  void aPublicRepoIsPinnedToItsCommitAndListedOverEveryPageWithASha256ForEachFile()
      throws Exception {
    CliRun run = build("hf://org/model", tokenFile);
    assertEquals(0, run.exitCode(), run.transcript());
    JsonNode m = JSON.readTree(run.out());

    assertEquals("org/model", m.get("model_id").asText());
    assertEquals(COMMIT, m.get("revision").asText(), "the revision is pinned to the commit");
    assertEquals("huggingface", m.get("provider").asText());
    assertEquals("safetensors", m.get("format").asText());
    assertEquals(
        config.length + shard1.length + shard2.length + notes.length,
        m.get("total_size_bytes").asLong());

    List<String> paths = new ArrayList<>();
    m.get("files").forEach(f -> paths.add(f.get("path").asText()));
    assertEquals(
        List.of(
            "config.json",
            "docs/read me+notes.txt",
            "shards/model-00001-of-00002.safetensors",
            "shards/model-00002-of-00002.safetensors"),
        paths,
        "sorted, .gitattributes skipped as hidden");
    assertTrue(run.err().contains("skipped .gitattributes (hidden)"), run.transcript());

    byte[][] contents = {config, notes, shard1, shard2};
    for (int i = 0; i < contents.length; i++) {
      JsonNode f = m.get("files").get(i);
      assertEquals(contents[i].length, f.get("size_bytes").asLong());
      assertEquals("sha256:" + FakeHub.sha256(contents[i]), f.get("checksum").asText());
      assertEquals(
          "org/model/" + COMMIT + "/" + paths.get(i) + "/chunk-00000",
          f.get("artifact").get("object_ids").get(0).asText());
    }
    assertEquals(
        hub.endpoint() + "/org/model/resolve/" + COMMIT + "/docs/read%20me%2Bnotes.txt",
        m.get("files").get(1).get("download_url").asText());
    assertEquals(3, m.get("files").get(2).get("chunk_layout").get("chunk_count").asInt());

    // Seven tree entries (two folders, five files) two a page: four pages, each asked for once.
    long treePages = hub.seen("hub").stream().filter(s -> s.path().contains("/tree/")).count();
    assertEquals(4, treePages);
    assertTrue(
        hub.seen("hub").stream()
            .filter(s -> s.path().contains("/tree/"))
            .allMatch(s -> s.path().contains("/tree/" + COMMIT)),
        "the listing is of the pinned commit, not of the moving branch");
    assertTrue(hub.seen("cdn").isEmpty(), "LFS files are not downloaded to build the manifest");
    assertFalse(run.err().contains("source-credentials"), "a public repo needs no credential");

    // Every download_url, followed as the hub redirects, yields bytes matching the checksum.
    HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NORMAL).build();
    for (JsonNode f : m.get("files")) {
      HttpResponse<byte[]> r =
          http.send(
              HttpRequest.newBuilder(URI.create(f.get("download_url").asText())).build(),
              HttpResponse.BodyHandlers.ofByteArray());
      assertEquals(200, r.statusCode(), f.toString());
      assertEquals(f.get("checksum").asText(), "sha256:" + FakeHub.sha256(r.body()));
    }
    assertEquals(2, hub.seen("cdn").size(), "both shards came through the CDN redirect");
  }

  @Test
  void aTagOrARefWithSlashesIsPinnedToTheCommitItNames() throws Exception {
    for (String rev : List.of("v1.0", "refs/pr/1", COMMIT)) {
      CliRun run = build("hf://org/model@" + rev, null, "--model-id", "mine/llama");
      assertEquals(0, run.exitCode(), run.transcript());
      JsonNode m = JSON.readTree(run.out());
      assertEquals(COMMIT, m.get("revision").asText());
      assertEquals("mine/llama", m.get("model_id").asText());
      assertTrue(
          m.get("files").get(0).get("download_url").asText().contains("/resolve/" + COMMIT + "/"));
      assertTrue(
          run.err().contains("hf://org/model@" + rev + " is commit " + COMMIT), run.transcript());
    }
    assertTrue(
        hub.seen("hub").stream().anyMatch(s -> s.path().endsWith("/revision/refs%2Fpr%2F1")),
        "a revision is one path segment, its '/' encoded");
  }

  @Test
  void aGatedRepoWithTheTokenBuildsAndPrintsTheSeedsCredentialLineWithoutTheToken()
      throws Exception {
    CliRun run = build("hf://org/gated", tokenFile);
    assertEquals(0, run.exitCode(), run.transcript());
    JsonNode m = JSON.readTree(run.out());
    assertEquals(OTHER_COMMIT, m.get("revision").asText());
    assertTrue(
        run.err().contains(hub.endpoint() + "/ Authorization: Bearer <HF token>"),
        run.transcript());
    assertTrue(run.err().contains("--source-credentials"), run.transcript());
    assertFalse(run.transcript().contains(FakeHub.TOKEN), "the token is never printed");
    assertTrue(
        hub.seen("hub").stream()
            .allMatch(s -> ("Bearer " + FakeHub.TOKEN).equals(s.authorization())),
        "every hub request carried the token");
  }

  @Test
  void aRedirectedSmallFileIsHashedFromTheCdnWhichNeverSeesTheToken() throws Exception {
    hub.repos.get("org/gated").smallFilesViaCdn = true;
    CliRun run = build("hf://org/gated", tokenFile);
    assertEquals(0, run.exitCode(), run.transcript());
    JsonNode config = JSON.readTree(run.out()).get("files").get(0);
    assertEquals("config.json", config.get("path").asText());
    assertEquals("sha256:" + FakeHub.sha256(this.config), config.get("checksum").asText());
    assertEquals(1, hub.seen("cdn").size(), "config.json came through the CDN");
    assertTrue(hub.seen("cdn").get(0).authorization() == null, "the token reached the CDN");
  }

  @Test
  void aGatedRepoWithATokenNotGrantedAccessNamesTheRepoAndTheTokensSource() {
    CliRun run = build("hf://org/gated", wrongTokenFile);
    assertEquals(3, run.exitCode(), run.transcript());
    assertTrue(
        run.err().contains("hf://org/gated@main")
            && run.err().contains("gated repo")
            && run.err().contains("the token from " + wrongTokenFile),
        run.transcript());
  }

  @Test
  void aGatedRepoWithoutAnyTokenSaysHowToGiveOne() {
    assumeTrue(
        System.getenv("HF_TOKEN") == null
            && System.getenv("HF_TOKEN_PATH") == null
            && System.getenv("HF_HOME") == null
            && !Files.exists(Path.of(System.getProperty("user.home"), ".cache/huggingface/token")),
        "this machine has a Hugging Face token configured");
    CliRun run = build("hf://org/gated", null);
    assertEquals(3, run.exitCode(), run.transcript());
    assertTrue(
        run.err().contains("hf://org/gated@main")
            && run.err().contains("gated repo")
            && run.err().contains("set HF_TOKEN"),
        run.transcript());
  }

  @Test
  void aMissingRepoIsNamedWithTheEndpoint() {
    CliRun run = build("hf://org/nope@v2", tokenFile);
    assertEquals(3, run.exitCode(), run.transcript());
    assertTrue(
        run.err().contains("hf://org/nope@v2: repo org/nope not found on " + hub.endpoint()),
        run.transcript());
  }

  @Test
  void aMissingRevisionIsNamedWithTheRepo() {
    CliRun run = build("hf://org/model@no-such-branch", null);
    assertEquals(3, run.exitCode(), run.transcript());
    assertTrue(
        run.err().contains("revision 'no-such-branch' not found in org/model"), run.transcript());
  }

  @Test
  void rateLimitingIsReportedWithTheHubsRetryAfter() {
    CliRun run = build("hf://org/busy@main", null);
    assertEquals(4, run.exitCode(), run.transcript());
    assertTrue(
        run.err().contains("hf://org/busy@main")
            && run.err().contains("HTTP 429")
            && run.err().contains("retry after 7 s"),
        run.transcript());
  }

  @Test
  void aSmallFileWhoseBytesDoNotMatchTheCommitsBlobIdFailsTheBuild() {
    hub.repos.get("org/model").corrupt = "config.json";
    CliRun run = build("hf://org/model", null);
    assertEquals(1, run.exitCode(), run.transcript());
    assertTrue(
        run.err().contains("config.json") && run.err().contains("git blob id"), run.transcript());
    assertEquals("", run.out(), "no manifest is written");
  }

  @Test
  void anUnreachableHubIsExitFour() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    CliRun run =
        CliRun.of(
            "manifest", "build", "hf://org/model", "--hf-endpoint", "http://127.0.0.1:" + port);
    assertEquals(4, run.exitCode(), run.transcript());
    assertTrue(run.err().contains("cannot reach"), run.transcript());
  }

  @Test
  void flagsThatDoNotApplyToTheHubAndBadReferencesAreUsageErrors() {
    CliRun revision = build("hf://org/model", null, "--revision", "main");
    assertEquals(2, revision.exitCode(), revision.transcript());
    assertTrue(revision.err().contains("--revision"), revision.transcript());

    CliRun urlBase = build("hf://org/model", null, "--url-base", "https://x.example/");
    assertEquals(2, urlBase.exitCode(), urlBase.transcript());
    assertTrue(urlBase.err().contains("--url-base"), urlBase.transcript());

    for (String bad : List.of("hf://", "hf://org/na me", "hf://org/model@", "hf://a/b/c")) {
      CliRun run = build(bad, null);
      assertEquals(2, run.exitCode(), bad + "\n" + run.transcript());
      assertTrue(run.err().contains("hf://<org>/<name>") || run.err().contains("revision"));
    }

    CliRun endpoint =
        CliRun.of("manifest", "build", "hf://org/model", "--hf-endpoint", "ftp://mirror");
    assertEquals(2, endpoint.exitCode(), endpoint.transcript());
    assertTrue(endpoint.err().contains("--hf-endpoint"), endpoint.transcript());

    CliRun missing = build("hf://org/model", dir.resolve("no-token-here"));
    assertEquals(2, missing.exitCode(), missing.transcript());
    assertTrue(missing.err().contains("--hf-token-file"), missing.transcript());
  }
}
