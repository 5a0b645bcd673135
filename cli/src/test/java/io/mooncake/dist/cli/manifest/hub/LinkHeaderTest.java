package io.mooncake.dist.cli.manifest.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class LinkHeaderTest {
  @Test
  void theNextLinkIsFoundAmongOthersAndAcrossHeaders() {
    assertEquals(
        Optional.of("https://hub/api/models/o/n/tree/c?recursive=true&cursor=abc"),
        LinkHeader.next(
            List.of(
                "<https://hub/api/models/o/n/tree/c?recursive=true&cursor=abc>; rel=\"next\"")));
    assertEquals(
        Optional.of("/p2"),
        LinkHeader.next(List.of("</p0>; rel=\"prev\", </p2>; rel=next", "</p3>; rel=\"next\"")));
    assertEquals(
        Optional.of("/p2"), LinkHeader.next(List.of("</p2>; title=\"x\"; rel=\"prev next\"")));
  }

  @Test
  void noNextLinkMeansTheLastPage() {
    assertEquals(Optional.empty(), LinkHeader.next(List.of()));
    assertEquals(Optional.empty(), LinkHeader.next(List.of("</p0>; rel=\"prev\"")));
  }
}
