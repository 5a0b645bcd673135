/**
 * The database room: connection pooling, Flyway migrations (the only source of the schema) and the
 * jOOQ model generated from them. Every other module reaches Postgres through {@link Database}.
 */
package io.mooncake.dist.db;
