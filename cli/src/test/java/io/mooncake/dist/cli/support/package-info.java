/** Test fixtures: running the CLI in-process and a fake master over a real socket. */
package io.mooncake.dist.cli.support;
