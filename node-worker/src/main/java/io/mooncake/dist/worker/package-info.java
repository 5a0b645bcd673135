/**
 * {@code mooncake_client}: a stateless node worker. It registers its node, heartbeats, claims its
 * own task rows under a lease, executes them against its local model store and the chunk transfer
 * client, serves its objects to peers, and writes outcomes back.
 */
package io.mooncake.dist.worker;
