#!/usr/bin/env bash
# Chunk transfer benchmark: one seed -> one follower over loopback, a SIZE_MIB model in CHUNK_MIB
# chunks, measured end to end (job POSTed -> follower placement staged: digests verified, file
# materialized and fsynced, Postgres bookkeeping included), against baselines measured in the
# same run on the same disk:
#   nginx (sendfile) -> curl -o /dev/null      (loopback limit)
#   nginx (sendfile) -> curl -o <file> && sync (what a user would do by hand)
#   dd of the same size with conv=fsync        (disk limit)
# The seed already holds the model (staged by an untimed first job, as nginx already holds its
# file), so the timed job is seed reuse: MODEL_VERIFY on the seed, copies and MATERIALIZE on the
# follower. One untimed follower round runs first (the clients are long-running daemons). Prints every figure and the ratios; the last line is the summary.
#
# Usage: bench/transfer.sh            (SIZE_MIB=2048 CHUNK_MIB=64 RUNS=3 by default)
#        SIZE_MIB=8192 bench/transfer.sh   (memory ceiling check)
# Env: OBJECT_DIGEST (the clients' --object-digest, default crc32c-crc32), MOONCAKE_BENCH_DB_URL (admin JDBC URL, default the local postgres), BENCH_DIR (work dir on
# the disk to measure, default /var/tmp/mooncake-bench). Installs nginx-light from Debian's
# packages when missing (needs root). Leaves nothing running.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# A Java 21+ for the build and the launchers, found as they find it, or one line saying what to install.
. "$ROOT/bin/_java.sh"
SIZE_MIB=${SIZE_MIB:-2048}
CHUNK_MIB=${CHUNK_MIB:-64}
RUNS=${RUNS:-3}
OBJECT_DIGEST=${OBJECT_DIGEST:-crc32c-crc32}
WORK=${BENCH_DIR:-/var/tmp/mooncake-bench}
ADMIN_URL=${MOONCAKE_BENCH_DB_URL:-jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres}
NGINX_PORT=${NGINX_PORT:-18080}
HTTP_PORT=${HTTP_PORT:-18081}
SEED_PORT=${SEED_PORT:-25101}
FOLLOWER_PORT=${FOLLOWER_PORT:-25102}
DB=mooncake_bench_$$

need() { command -v "$1" >/dev/null 2>&1; }
if ! need nginx; then
  echo "installing nginx-light (Debian) for the baseline" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx-light >/dev/null
fi
for t in curl psql python3; do need "$t" || { echo "bench: needs $t" >&2; exit 1; }; done
if [ ! -f "$ROOT/node-worker/target/node-worker-0.1.0-SNAPSHOT.jar" ] || [ ! -f "$ROOT/master-api/target/master-api-0.1.0-SNAPSHOT.jar" ]; then
  echo "building (./mvnw -q -DskipTests package)" >&2
  "$ROOT/mvnw" -B -q -DskipTests package
fi

# libpq form of the admin URL for psql: jdbc:postgresql://host:port/db?user=u -> postgresql://u@host:port/db
PSQL_ADMIN=$(python3 - "$ADMIN_URL" <<'PY'
import sys, urllib.parse as u
url = sys.argv[1][len("jdbc:"):]
p = u.urlparse(url); q = dict(u.parse_qsl(p.query))
user = q.get("user", "postgres"); pw = (":" + q["password"]) if "password" in q else ""
print(f"postgresql://{user}{pw}@{p.hostname}:{p.port or 5432}{p.path}")
PY
)
DB_URL=$(python3 - "$ADMIN_URL" "$DB" <<'PY'
import sys, urllib.parse as u
url = sys.argv[1][len("jdbc:"):]; p = u.urlparse(url)
print("jdbc:" + u.urlunparse(p._replace(path="/" + sys.argv[2])))
PY
)

PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && wait "$p" 2>/dev/null || true; done
  [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
  psql -q "$PSQL_ADMIN" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

rm -rf "$WORK" && mkdir -p "$WORK/www" "$WORK/logs"
SRC="$WORK/www/model.bin"
BYTES=$((SIZE_MIB * 1024 * 1024))
echo "generating a ${SIZE_MIB} MiB model in $WORK" >&2
head -c "$BYTES" /dev/urandom > "$SRC"
sync

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
gibps() { python3 -c "print(f'{$BYTES/($1)/2**30:.3f}')"; }

# --- baselines -----------------------------------------------------------------------------------
cat > "$WORK/nginx.conf" <<NGINX
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/logs/nginx-error.log;
events { worker_connections 64; }
http {
  access_log off; sendfile on; tcp_nopush on;
  server { listen 127.0.0.1:$NGINX_PORT; root $WORK/www; }
}
NGINX
nginx -c "$WORK/nginx.conf"
cat "$SRC" > /dev/null   # page cache, as our seed's file will be

t_null=(); t_file=(); t_dd=()
for i in $(seq "$RUNS"); do
  a=$(now); curl -sf -o /dev/null "http://127.0.0.1:$NGINX_PORT/model.bin"; b=$(now)
  t_null+=("$(python3 -c "print($b-$a)")")
  rm -f "$WORK/curl.out"; sync
  a=$(now); curl -sf -o "$WORK/curl.out" "http://127.0.0.1:$NGINX_PORT/model.bin"; sync; b=$(now)
  t_file+=("$(python3 -c "print($b-$a)")")
  rm -f "$WORK/curl.out" "$WORK/dd.out"; sync
  a=$(now); dd if="$SRC" of="$WORK/dd.out" bs=64M conv=fsync status=none; b=$(now)
  t_dd+=("$(python3 -c "print($b-$a)")")
  rm -f "$WORK/dd.out"; sync
done
kill "$(cat "$WORK/nginx.pid")"; rm -f "$WORK/nginx.pid"
T_NULL=$(printf '%s\n' "${t_null[@]}" | median)
T_FILE=$(printf '%s\n' "${t_file[@]}" | median)
T_DD=$(printf '%s\n' "${t_dd[@]}" | median)

# --- ours ----------------------------------------------------------------------------------------
psql -q "$PSQL_ADMIN" -c "CREATE DATABASE $DB" >/dev/null
"$ROOT/bin/mooncake_master" --http-port "$HTTP_PORT" --no-auth --allow-any-source --db-url "$DB_URL" --scheduler-tick-ms 200 \
  > "$WORK/logs/master.log" 2>&1 & PIDS+=($!)
API="http://127.0.0.1:$HTTP_PORT"
for _ in $(seq 600); do curl -sf "$API/health" >/dev/null 2>&1 && break; sleep 0.1; done
curl -sf "$API/health" >/dev/null || { echo "bench: master did not come up; log:" >&2; tail -20 "$WORK/logs/master.log" >&2; exit 1; }
"$ROOT/bin/mooncake_client" --node-id "127.0.0.1:$SEED_PORT" --data-dir "$WORK/seed" --db-url "$DB_URL" --object-digest "$OBJECT_DIGEST" \
  > "$WORK/logs/seed.log" 2>&1 & PIDS+=($!); SEED_PID=$!
"$ROOT/bin/mooncake_client" --node-id "127.0.0.1:$FOLLOWER_PORT" --data-dir "$WORK/follower" --db-url "$DB_URL" --object-digest "$OBJECT_DIGEST" \
  > "$WORK/logs/follower.log" 2>&1 & PIDS+=($!); FOLLOWER_PID=$!
live_nodes() { curl -sf "$API/api/v1/nodes" | python3 -c 'import sys,json; print(sum(n["live"] for n in json.load(sys.stdin)["nodes"]))' 2>/dev/null; }
for _ in $(seq 600); do [ "$(live_nodes)" = 2 ] && break; sleep 0.1; done
[ "$(live_nodes)" = 2 ] || { echo "bench: clients did not come up; logs:" >&2; tail -5 "$WORK"/logs/seed.log "$WORK"/logs/follower.log >&2; exit 1; }

request() { # job_id targets...
  python3 - "$@" <<PY
import json, sys
job, targets = sys.argv[1], sys.argv[2:]
size, chunk = $BYTES, $CHUNK_MIB * 1024 * 1024
n = (size + chunk - 1) // chunk
print(json.dumps({"job_id": job,
  "model": {"model_id": "bench", "revision": "r1", "format": "bin", "provider": "local"},
  "manifest": {"model_id": "bench", "revision": "r1", "format": "bin", "provider": "local",
    "total_size_bytes": size, "file_manifest_version": "v1",
    "files": [{"path": "model.bin", "size_bytes": size, "checksum": "${CHECKSUM:-dummy}",
      "download_url": "file://$SRC",
      "artifact": {"artifact_key": "bench-r1", "object_ids": [f"bench/r1/chunk-{i:04d}" for i in range(n)]},
      "chunk_layout": {"chunk_size_bytes": chunk, "chunk_count": n, "object_prefix": "bench/r1"}}]},
  "seed_node_id": targets[0], "target_nodes": targets}))
PY
}
# One python process POSTs the job, polls its status every 20 ms and samples the clients' RSS,
# printing "<seconds> <follower KiB> <seed KiB>" (a probe of curl + python each would cost the
# machine under test a good part of a core).
stage() { # job_id targets...
  request "$@" > "$WORK/job.json"
  python3 "$ROOT/bench/stage_job.py" "$API" "$WORK/job.json" "$FOLLOWER_PID" "$SEED_PID"
}
follower_round() { # job_id: the follower starts empty; prints stage's line
  rm -rf "$WORK/follower/models"; psql -q "${PSQL_ADMIN%/*}/$DB" -c "DELETE FROM object_replicas WHERE node_id = '127.0.0.1:$FOLLOWER_PORT'" >/dev/null
  sync
  stage "$1" "127.0.0.1:$SEED_PORT" "127.0.0.1:$FOLLOWER_PORT"
  cmp -s "$SRC" "$WORK/follower/models/local/bench/r1/bin/model.bin" || { echo "bench: staged bytes differ!" >&2; exit 1; }
}

echo "staging the model on the seed (untimed)" >&2
stage prep "127.0.0.1:$SEED_PORT" >/dev/null
sync
# The clients are long-running daemons: one untimed round first, so the timed rounds meet
# JIT-compiled code as a node in service does (nginx and curl are native code from the start).
echo "warm-up round (untimed)" >&2
RSS_F=0; RSS_S=0
rss() { [ "$2" -gt "$RSS_F" ] && RSS_F=$2; [ "$3" -gt "$RSS_S" ] && RSS_S=$3; return 0; }
out=$(follower_round warm); rss $out

t_ours=()
for i in $(seq "$RUNS"); do
  out=$(follower_round "run-$i"); rss $out
  t_ours+=("${out%% *}")
done
T_OURS=$(printf '%s\n' "${t_ours[@]}" | median)

G_NULL=$(gibps "$T_NULL"); G_FILE=$(gibps "$T_FILE"); G_DD=$(gibps "$T_DD"); G_OURS=$(gibps "$T_OURS")
LIMIT=$(python3 -c "print(min($G_NULL, $G_DD))")
R_CURL=$(python3 -c "print(f'{$G_OURS/$G_FILE:.2f}')")
R_LIMIT=$(python3 -c "print(f'{$G_OURS/$LIMIT:.2f}')")
echo "model ${SIZE_MIB} MiB in ${CHUNK_MIB} MiB chunks, median of $RUNS runs, $(nproc) cores, object digest $OBJECT_DIGEST"
secs() { printf '%.2f' "$1"; }
RUNS_TXT=$(for t in "${t_ours[@]}"; do secs "$t"; echo -n " "; done)
echo "  nginx -> curl -o /dev/null       $(secs "$T_NULL") s  $G_NULL GiB/s"
echo "  nginx -> curl -o file && sync    $(secs "$T_FILE") s  $G_FILE GiB/s"
echo "  dd conv=fsync                    $(secs "$T_DD") s  $G_DD GiB/s"
echo "  mooncake seed -> follower staged $(secs "$T_OURS") s  $G_OURS GiB/s (runs: ${RUNS_TXT% })"
echo "  max RSS: follower $((RSS_F / 1024)) MiB, seed $((RSS_S / 1024)) MiB"
echo "transfer ours/curl_file=$R_CURL (target >= 1.5) ours/limit=$R_LIMIT (target >= 0.7) ours_GiBps=$G_OURS rss_follower_MiB=$((RSS_F / 1024)) rss_seed_MiB=$((RSS_S / 1024))"
