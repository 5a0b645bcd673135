#!/usr/bin/env bash
# Builds PgBouncer 1.24.1 from Debian 13's source package (deb.debian.org, checksum pinned) into
# $PGB_PREFIX (default /var/tmp/mooncake-pgbouncer-1.24.1) and prints the binary's path.
# Debian 12 ships PgBouncer 1.18, which keeps no prepared statement in transaction mode (so every
# statement a node sends through it is parsed and planned again) and sends `SET DateStyle` before
# most transactions of a JDBC client (pgjdbc asks for "ISO", Postgres reports "ISO, MDY", and
# Postgres 14+ sends no report when a SET leaves a value unchanged, so 1.18 never learns they agree).
# 1.21+ tracks protocol-level prepared statements (max_prepared_statements). For bench/fleet.sh:
#   POOLER=pgbouncer PGBOUNCER=$(bench/pgbouncer-newer.sh) bench/fleet.sh
# Needs gcc, make, pkg-config, libevent-dev and libssl-dev (libevent-dev is installed from Debian
# when missing). Builds once; later runs print the path at once.
set -euo pipefail
VERSION=1.24.1
SHA256=da72a3aba13072876d055a3e58dd4aba4a5de4ed6148e73033185245598fd3e0
PREFIX=${PGB_PREFIX:-/var/tmp/mooncake-pgbouncer-$VERSION}
BIN="$PREFIX/bin/pgbouncer"
if [ -x "$BIN" ]; then echo "$BIN"; exit 0; fi
if ! dpkg -s libevent-dev >/dev/null 2>&1; then
  echo "installing libevent-dev (Debian)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q libevent-dev >/dev/null
fi
SRC=$(mktemp -d /tmp/mooncake-pgbouncer-src.XXXXXX)
trap 'rm -rf "$SRC"' EXIT
TARBALL="pgbouncer_$VERSION.orig.tar.gz"
echo "fetching $TARBALL (Debian 13's source package)" >&2
curl -fsS -o "$SRC/$TARBALL" "http://deb.debian.org/debian/pool/main/p/pgbouncer/$TARBALL"
echo "$SHA256  $SRC/$TARBALL" | sha256sum -c --quiet - >&2
tar -xzf "$SRC/$TARBALL" -C "$SRC"
echo "building PgBouncer $VERSION into $PREFIX" >&2
(cd "$SRC/pgbouncer-$VERSION" \
  && ./configure --prefix="$PREFIX" --without-cares --without-systemd >"$SRC/configure.log" 2>&1 \
  && make -j"$(nproc)" >"$SRC/make.log" 2>&1 && make install >"$SRC/install.log" 2>&1) \
  || { echo "pgbouncer build failed; logs:" >&2; tail -20 "$SRC"/*.log >&2; exit 1; }
echo "$BIN"
