/** {@code mooncake nodes}: the registered {@code mooncake_client} nodes as the master sees them. */
package io.mooncake.dist.cli.nodes;
