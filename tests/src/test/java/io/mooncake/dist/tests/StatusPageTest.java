package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.helidon.webserver.WebServer;
import io.mooncake.dist.master.MasterRouting;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.InProcessCluster;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Processes;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.Requests.FileSpec;
import io.mooncake.dist.tests.support.TestFiles;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The status page at {@code /} in a real headless Chromium against an in-process cluster: one job
 * completed on two nodes (placements staged at 100%) and an older one stuck seeding on a node with
 * no worker. The screenshot lands in {@code tests/target/status-page.png} for a human to look at.
 */
class StatusPageTest {
  private static final long SIZE = 3 * 1024 * 1024 + 4321;
  private static final String DONE = "status-page-done";
  private static final String STUCK = "status-page-stuck";

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir static Path tmp;

  static InProcessCluster cluster;
  static Api api;
  static WebServer pageServer;
  static String base;
  static String seed;
  static String follower;
  static HeadlessChromium chromium;

  @BeforeAll
  static void start() throws Exception {
    cluster = new InProcessCluster(pg.database());
    api = cluster.api();
    seed = cluster.addNode(tmp.resolve("seed"));
    follower = cluster.addNode(tmp.resolve("follower"));
    String ghost = "127.0.0.1:" + TestFiles.freePort();
    Path src = TestFiles.random(tmp.resolve("src/weights.bin"), SIZE, 11);
    submit(
        Requests.job(
            STUCK,
            "stuck-model",
            "r1",
            List.of(new FileSpec("w.bin", 4096, 1024, "dummy", "/srv/none/w.bin")),
            ghost,
            List.of(ghost, follower)));
    submit(
        Requests.job(
            DONE,
            "demo-model",
            "r7",
            List.of(
                new FileSpec(
                    "weights.bin",
                    SIZE,
                    1024 * 1024,
                    "sha256:" + TestFiles.sha256(src),
                    src.toUri().toString())),
            seed,
            List.of(seed, follower)));
    assertEquals("completed", api.awaitTerminal(DONE).get("status").asText());
    // The cluster does not expose its port, so the browser talks to a second master over the
    // same database (masters are stateless; any of them serves the same page and API).
    pageServer =
        WebServer.builder()
            .host("127.0.0.1")
            .port(0)
            .routing(r -> MasterRouting.routing(r, pg.database(), () -> {}))
            .build()
            .start();
    base = "http://127.0.0.1:" + pageServer.port();
    chromium = HeadlessChromium.locateOrInstall(Files.createDirectories(tmp.resolve("chromium")));
  }

  @AfterAll
  static void stop() {
    if (pageServer != null) {
      pageServer.stop();
    }
    cluster.close();
  }

  private static void submit(String body) {
    Api.Reply r = api.post("/api/v1/model-distribution/jobs", body);
    assertEquals(201, r.status(), String.valueOf(r.json()));
  }

  private static HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create(base + path)).build(),
            HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void thePageIsOneSelfContainedHtmlDocumentAtSlashAndSlashStatus() throws Exception {
    HttpResponse<String> root = get("/");
    assertEquals(200, root.statusCode());
    assertTrue(root.headers().firstValue("content-type").orElse("").startsWith("text/html"));
    HttpResponse<String> status = get("/status");
    assertEquals(200, status.statusCode());
    assertEquals(root.body(), status.body());
    String html = root.body();
    for (String external : List.of("http://", "https://", "<link", " src=", "@import", "url(")) {
      assertFalse(
          html.contains(external),
          "the page must not load anything from elsewhere: found " + external);
    }
    assertTrue(html.contains("<style>") && html.contains("<script>"), "CSS and JS are inline");
  }

  @Test
  void inChromiumThePageShowsJobsStagedPlacementsAtFullProgressAndLiveNodes() {
    String dom = chromium.dumpDom(base + "/", 5000);
    assertTrue(
        dom.contains("<span id=\"refreshed\" class=\"meta\">updated "),
        "the page polled the API:\n" + dom);
    assertTrue(
        dom.contains("data-job-id=\"" + DONE + "\""), "the completed job is listed:\n" + dom);
    assertTrue(
        dom.contains("data-job-id=\"" + STUCK + "\""), "the older job is listed too:\n" + dom);
    assertTrue(dom.contains(DONE + " · completed"), "the newest job is selected:\n" + dom);
    for (String node : List.of(seed, follower)) {
      assertTrue(
          dom.contains(
              "<tr class=\"placement\" data-node-id=\"" + node + "\" data-state=\"staged\">"),
          "placement of " + node + " shown staged:\n" + dom);
      Matcher bar =
          Pattern.compile(
                  "<progress class=\"placement-progress done\" max=\"(\\d+)\" value=\"(\\d+)\" data-node-id=\""
                      + Pattern.quote(node)
                      + "\">")
              .matcher(dom);
      assertTrue(bar.find(), "a progress bar for " + node + ":\n" + dom);
      assertEquals(SIZE, Long.parseLong(bar.group(1)));
      assertEquals(SIZE, Long.parseLong(bar.group(2)), "staged_bytes = total_bytes");
      assertTrue(
          dom.contains(
              "<tr data-node-id=\""
                  + node
                  + "\"><td><code>"
                  + node
                  + "</code></td><td><span class=\"badge live\">"),
          "node " + node + " shown live:\n" + dom);
    }
    assertTrue(dom.contains("(100%) · verified"), dom);
    // Staged placements move no bytes: no rate and no ETA, rather than a stale one.
    assertTrue(
        dom.contains(
            "<td class=\"num placement-rate\">–</td><td class=\"num placement-eta\">–</td>"),
        "rate and ETA columns, empty for staged placements:\n" + dom);
  }

  @Test
  void longJobIdsAndModelsAreCutToTheirColumnWithTheFullTextInTheTitle() {
    String dom = chromium.dumpDom(base + "/#job=" + STUCK, 5000);
    assertTrue(
        dom.contains("<table class=\"fixed\">"), "the jobs table keeps to its card:\n" + dom);
    assertTrue(
        dom.contains("<code class=\"clip job-id mono\" title=\"" + DONE + "\">" + DONE + "</code>"),
        "job id clipped, full id in the title:\n" + dom);
    assertTrue(
        dom.contains("<span class=\"clip model mono\" title=\"stuck-model@r1\">"),
        "model clipped, full name in the title:\n" + dom);
    assertTrue(
        dom.contains(STUCK + " · "), "the job named in the address is the one shown:\n" + dom);
  }

  @Test
  void aScreenshotOfThePageIsWrittenToTestsTarget() throws Exception {
    Path png = Processes.root().resolve("tests/target/status-page.png");
    Files.createDirectories(png.getParent());
    Files.deleteIfExists(png);
    chromium.screenshot(base + "/", png, 5000);
    assertTrue(Files.isRegularFile(png), "no screenshot at " + png);
    byte[] head = Files.readAllBytes(png);
    assertEquals((byte) 0x89, head[0]);
    assertEquals("PNG", new String(head, 1, 3, StandardCharsets.US_ASCII));
    assertTrue(
        head.length > 10 * 1024, "a rendered page, not a blank one: " + head.length + " bytes");
  }
}
