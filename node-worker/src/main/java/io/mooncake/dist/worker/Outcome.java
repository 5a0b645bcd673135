package io.mooncake.dist.worker;

import io.mooncake.dist.scheduler.store.Replica;
import java.util.List;

/** What a successful task reports: bytes handled, a small JSON result, replicas to publish. */
record Outcome(long bytes, String resultJson, List<Replica> publish) {}
