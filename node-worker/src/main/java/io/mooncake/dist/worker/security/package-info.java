/**
 * Who may talk to this node's chunk port: where the cluster secret comes from (Postgres, or a file
 * that overrides it) and the TLS files the flags name, turned into the {@link
 * io.mooncake.dist.transfer.ChunkSecurity} that the chunk server and client share.
 */
package io.mooncake.dist.worker.security;
