package io.mooncake.dist.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.util.List;
import org.junit.jupiter.api.Test;

class MasterUrlsTest {
  @Test
  void baseUrlsAreAccepted() {
    assertEquals(
        List.of(URI.create("http://m1:8080"), URI.create("https://m2.example/")),
        ClientMain.masterUris(List.of("http://m1:8080", " https://m2.example/ ", "")));
  }

  @Test
  void anythingButABaseUrlIsRefusedNamingIt() {
    for (String bad :
        List.of(
            "m1:8080",
            "ftp://m1",
            "http://user:pw@m1:8080",
            "http://m1:8080/api",
            "http://m1:8080?x=1",
            "http:// m1")) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> ClientMain.masterUris(List.of(bad)));
      assertTrue(e.getMessage().contains(bad.strip()), e.getMessage());
    }
  }
}
