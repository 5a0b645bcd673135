#!/usr/bin/env bash
# Hugging Face hub benchmark (issue 21): a SIZE_GIB generated model, published by a local stand-in
# for the hub (bench/hub_server.py: revision and paged tree APIs, resolve answering 302 to a signed
# "CDN" URL that serves Range requests, the repo gated behind a bearer token), staged on a seed and
# two followers exactly as an operator would, with the documented launchers:
#   bin/mooncake manifest build hf://bench-org/bench-model@main --hf-endpoint ... --hf-token-file ...
#   bin/mooncake_master --allowed-sources <hub origin>,<cdn origin>   (API tokens on)
#   bin/mooncake_client x 3, the seed with --source-credentials holding the line the build printed
#   bin/mooncake submit --seed <seed> --targets <f1>,<f2>             (one POST)
# then polls the job until it ends and checks the sha256 of every staged file on all three nodes
# against the generated files. Also counts the bytes the hub and its CDN served during the job
# (≈ 1.0 × the model: only the seed downloads) and that the token never reached the CDN.
#
# Usage: bench/hub.sh                  (SIZE_GIB=4 SHARDS=2 by default)
#        SIZE_GIB=1 bench/hub.sh       (a quick run)
# Env: SHARDS (safetensors shards, ≥ 2), CHUNK_SIZE (manifest chunk size, default 64MiB),
# MOONCAKE_BENCH_DB_URL (admin JDBC URL, default the local postgres), BENCH_DIR (work dir, default
# /var/tmp/mooncake-hub-<pid>), KEEP_WORK=1 or KEEP=1 (keep the work dir: model, data dirs, logs),
# PORT_BASE (default 26080: master, +1 hub, +2 cdn, +21..23 the nodes), PROGRESS_S (seconds
# between progress lines, default 15), RESTART_SEED_AT_PCT=n (kill -9 the seed once it holds n% of
# the model and start it again with the same flags: its download must resume with a Range request). The last line is the summary; exits non-zero when the job
# fails, a file differs or the token leaks. Leaves nothing running and drops its database.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# A Java 21+ for the build and the launchers, found as they find it, or one line saying what to install.
. "$ROOT/bin/_java.sh"
SIZE_GIB=${SIZE_GIB:-4}
SHARDS=${SHARDS:-2}
CHUNK_SIZE=${CHUNK_SIZE:-64MiB}
WORK=${BENCH_DIR:-/var/tmp/mooncake-hub-$$}
ADMIN_URL=${MOONCAKE_BENCH_DB_URL:-jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres}
PORT_BASE=${PORT_BASE:-26080}
HTTP_PORT=$PORT_BASE
HUB_PORT=$((PORT_BASE + 1))
CDN_PORT=$((PORT_BASE + 2))
SEED=127.0.0.1:$((PORT_BASE + 21))
F1=127.0.0.1:$((PORT_BASE + 22))
F2=127.0.0.1:$((PORT_BASE + 23))
REPO=bench-org/bench-model
DB=mooncake_hub_bench_$$
[ "$SHARDS" -ge 2 ] || { echo "hub: SHARDS must be at least 2" >&2; exit 2; }

need() { command -v "$1" >/dev/null 2>&1; }
for t in curl psql python3 sha256sum openssl; do need "$t" || { echo "hub: needs $t" >&2; exit 1; }; done
for m in cli node-worker master-api; do
  if [ ! -f "$ROOT/$m/target/$m-0.1.0-SNAPSHOT.jar" ]; then
    echo "building (./mvnw -q -DskipTests package)" >&2
    "$ROOT/mvnw" -B -q -DskipTests package
    break
  fi
done

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
DB_CREATED=
cleanup() {
  local rc=$?
  [ -f "$WORK/seed.pid" ] && PIDS+=("$(cat "$WORK/seed.pid")")
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && wait "$p" 2>/dev/null || true; done
  [ -n "$DB_CREATED" ] && { psql -q "$PSQL_ADMIN" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true; }
  if [ -n "${KEEP_WORK:-}${KEEP:-}" ]; then echo "hub: work dir $WORK kept" >&2; else rm -rf "$WORK"; fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() { echo "hub: $*" >&2; exit 1; }
now() { date +%s.%N; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

rm -rf "$WORK" && mkdir -p "$WORK/model" "$WORK/logs"
(umask 077; mkdir -p "$WORK/secrets")
BYTES=$((SIZE_GIB * 1024 * 1024 * 1024))
echo "hub: generating a ${SIZE_GIB} GiB model ($SHARDS shards) in $WORK/model; load $(load)" >&2
M=$WORK/model
# The small files a transformers checkpoint has, in git (not LFS): config, tokenizer (~2 MB, so the
# manifest builder downloads and hashes a real file), the shard index; .gitattributes is hidden
# and left out of the manifest.
printf '*.safetensors filter=lfs diff=lfs merge=lfs -text\n' > "$M/.gitattributes"
cat > "$M/config.json" <<'JSON'
{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
 "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
 "torch_dtype": "bfloat16", "vocab_size": 128256, "model_type": "llama"}
JSON
printf '{"bos_token_id": 128000, "eos_token_id": 128001, "do_sample": true}\n' > "$M/generation_config.json"
python3 - "$M/tokenizer.json" <<'PY'
import json, random, sys
r = random.Random(21)
vocab = {"".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(2, 12))) + str(i): i
         for i in range(128000)}
json.dump({"version": "1.0", "model": {"type": "BPE", "vocab": vocab}}, open(sys.argv[1], "w"))
PY
printf '{"tokenizer_class": "PreTrainedTokenizerFast"}\n' > "$M/tokenizer_config.json"
# Shards of random bytes (AES-CTR of zeros: urandom-quality for this purpose and several times
# faster), sizes deliberately not multiples of the chunk size.
SHARD_FILES=()
left=$BYTES
for i in $(seq "$SHARDS"); do
  name=$(printf 'model-%05d-of-%05d.safetensors' "$i" "$SHARDS")
  if [ "$i" -lt "$SHARDS" ]; then size=$((BYTES / SHARDS + 12345 * i)); else size=$left; fi
  left=$((left - size))
  # (head closing the pipe ends openssl with SIGPIPE: not a failure here)
  (set +o pipefail; openssl enc -aes-128-ctr -nosalt -pass "pass:hub-bench-$$-$i" -pbkdf2 -in /dev/zero 2>/dev/null | head -c "$size" > "$M/$name")
  [ "$(stat -c %s "$M/$name")" = "$size" ] || fail "could not generate $name"
  SHARD_FILES+=("$name")
done
python3 - "$M" "${SHARD_FILES[@]}" <<'PY'
import json, os, sys
d, shards = sys.argv[1], sys.argv[2:]
json.dump({"metadata": {"total_size": sum(os.path.getsize(os.path.join(d, s)) for s in shards)},
           "weight_map": {f"model.layers.{i}.weight": shards[i % len(shards)] for i in range(32)}},
          open(os.path.join(d, "model.safetensors.index.json"), "w"), indent=1)
PY
(cd "$M" && sha256sum -- *.json *.safetensors > "$WORK/model.sha256")
FILES=$(wc -l < "$WORK/model.sha256")
MODEL_BYTES=$(cd "$M" && cat -- *.json *.safetensors | wc -c)
sync

# --- the hub -------------------------------------------------------------------------------------
HF_TOKEN_VALUE="hf_$(openssl rand -hex 20)"
COMMIT=$(openssl rand -hex 20)
(umask 077; echo "$HF_TOKEN_VALUE" > "$WORK/secrets/hf-token")
HUB="http://127.0.0.1:$HUB_PORT"
CDN="http://127.0.0.1:$CDN_PORT"
python3 "$ROOT/bench/hub_server.py" --model-dir "$M" --sums "$WORK/model.sha256" --repo "$REPO" \
  --commit "$COMMIT" --token-file "$WORK/secrets/hf-token" --hub-port "$HUB_PORT" --cdn-port "$CDN_PORT" \
  > "$WORK/logs/hub.log" 2>&1 & PIDS+=($!)
for _ in $(seq 100); do curl -sf "$HUB/_bench/stats" >/dev/null 2>&1 && break; sleep 0.1; done
curl -sf "$HUB/_bench/stats" >/dev/null || { tail -20 "$WORK/logs/hub.log" >&2; fail "hub did not come up"; }
stat_of() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[sys.argv[1]])' "$1" < "$2"; }

# --- the manifest, as a user builds it -----------------------------------------------------------
a=$(now)
"$ROOT/bin/mooncake" manifest build "hf://$REPO@main" --hf-endpoint "$HUB" \
  --hf-token-file "$WORK/secrets/hf-token" --chunk-size "$CHUNK_SIZE" -o "$WORK/manifest.json" \
  > "$WORK/logs/build.log" 2>&1 || { cat "$WORK/logs/build.log" >&2; fail "manifest build failed"; }
b=$(now)
BUILD_S=$(python3 -c "print(f'{$b-$a:.2f}')")
sed 's/^/hub: build: /' "$WORK/logs/build.log" >&2
grep -q "is commit $COMMIT" "$WORK/logs/build.log" || fail "the build did not pin main to $COMMIT"
CRED_LINE=$(sed -n "s#^ *\($HUB/ Authorization: Bearer <HF token>\) *\$#\1#p" "$WORK/logs/build.log" | head -1)
[ -n "$CRED_LINE" ] || fail "the build printed no --source-credentials line for the gated repo"
# The operator's step: the printed line with the token in place of the placeholder.
(umask 077; echo "${CRED_LINE/<HF token>/$HF_TOKEN_VALUE}" > "$WORK/secrets/seed-credentials")
curl -sf "$HUB/_bench/stats" > "$WORK/stats-build.json"
python3 - "$WORK/manifest.json" "$WORK/model.sha256" "$COMMIT" <<'PY' || fail "the manifest does not match the generated model"
import json, sys
m = json.load(open(sys.argv[1]))
sums = dict(reversed(l.split(None, 1)) for l in open(sys.argv[2]).read().split("\n") if l)
sums = {k.strip().lstrip("*"): v for k, v in sums.items()}
assert m["revision"] == sys.argv[3], m["revision"]
got = {f["path"]: f["checksum"] for f in m["files"]}
assert set(got) == set(sums), (sorted(got), sorted(sums))
for p, c in got.items():
    assert c == "sha256:" + sums[p], (p, c)
PY

# --- master and nodes ----------------------------------------------------------------------------
psql -q "$PSQL_ADMIN" -c "CREATE DATABASE $DB" >/dev/null
DB_CREATED=1
(umask 077; echo "$(openssl rand -hex 32)" > "$WORK/secrets/api-token"
 echo "write $(cat "$WORK/secrets/api-token") bench" > "$WORK/secrets/api-tokens")
API="http://127.0.0.1:$HTTP_PORT"
"$ROOT/bin/mooncake_master" --http-port "$HTTP_PORT" --bind-host 127.0.0.1 --db-url "$DB_URL" \
  --api-tokens-file "$WORK/secrets/api-tokens" --allowed-sources "$HUB,$CDN" \
  > "$WORK/logs/master.log" 2>&1 & PIDS+=($!)
for _ in $(seq 600); do curl -sf "$API/health" >/dev/null 2>&1 && break; sleep 0.1; done
curl -sf "$API/health" >/dev/null || { tail -20 "$WORK/logs/master.log" >&2; fail "master did not come up"; }
NODE_PIDS=()
for n in "$SEED" "$F1" "$F2"; do
  cmd=("$ROOT/bin/mooncake_client" --node-id "$n" --bind-host 127.0.0.1 --data-dir "$WORK/node-${n##*:}" --db-url "$DB_URL")
  if [ "$n" = "$SEED" ]; then
    cmd+=(--source-credentials "$WORK/secrets/seed-credentials")
    printf '%s\0' "${cmd[@]}" > "$WORK/seed.argv"   # for RESTART_SEED_AT_PCT
  fi
  "${cmd[@]}" > "$WORK/logs/node-${n##*:}.log" 2>&1 & PIDS+=($!); NODE_PIDS+=($!)
done
export MOONCAKE_MASTER=$API MOONCAKE_API_TOKEN_FILE=$WORK/secrets/api-token
live_json() { curl -sf -H "Authorization: Bearer $(cat "$WORK/secrets/api-token")" "$API/api/v1/nodes" \
  | python3 -c 'import sys,json; print(sum(n["live"] for n in json.load(sys.stdin)["nodes"]))' 2>/dev/null || echo 0; }
for _ in $(seq 600); do [ "$(live_json)" = 3 ] && break; sleep 0.1; done
[ "$(live_json)" = 3 ] || { tail -5 "$WORK"/logs/node-*.log >&2; fail "the nodes did not come up"; }

# --- one POST -------------------------------------------------------------------------------------
LOAD_BEFORE=$(load)
echo "hub: submitting: seed $SEED, followers $F1 $F2; load $LOAD_BEFORE" >&2
JOB=$("$ROOT/bin/mooncake" submit --manifest "$WORK/manifest.json" --seed "$SEED" --targets "$F1,$F2" 2> "$WORK/logs/submit.log") \
  || { cat "$WORK/logs/submit.log" >&2; fail "submit failed"; }
JOB=$(echo "$JOB" | tail -1 | tr -d '[:space:]')
read -r JOB_S SEED_S STATUS RSS_SEED RSS_F1 RSS_F2 < <(SEED_ARGV_FILE=$WORK/seed.argv SEED_LOG=$WORK/logs/node-${SEED##*:}.log \
  SEED_PID_FILE=$WORK/seed.pid python3 "$ROOT/bench/hub_job.py" "$API" \
  "$WORK/secrets/api-token" "$JOB" "$WORK/snapshot.json" "${NODE_PIDS[@]}")
[ -n "${STATUS:-}" ] || fail "lost track of job $JOB"
LOAD_AFTER=$(load)
curl -sf "$HUB/_bench/stats" > "$WORK/stats.json"
"$ROOT/bin/mooncake" status "$JOB" >&2 || true

# --- verification ---------------------------------------------------------------------------------
VERIFIED=0
while read -r node dir; do
  if (cd "$dir" && sha256sum --quiet -c "$WORK/model.sha256") >&2; then
    VERIFIED=$((VERIFIED + 1))
  else
    echo "hub: $node: files under $dir differ from the generated model" >&2
  fi
done < <(python3 -c '
import json, sys
for p in json.load(open(sys.argv[1]))["placements"]:
    if p["state"] == "staged": print(p["node_id"], p["local_path"])' "$WORK/snapshot.json")

HUB_B=$(( $(stat_of hub_bytes "$WORK/stats.json") - $(stat_of hub_bytes "$WORK/stats-build.json") ))
CDN_B=$(( $(stat_of cdn_bytes "$WORK/stats.json") - $(stat_of cdn_bytes "$WORK/stats-build.json") ))
BUILD_B=$(( $(stat_of hub_bytes "$WORK/stats-build.json") + $(stat_of cdn_bytes "$WORK/stats-build.json") ))
LEAKS=$(stat_of cdn_token_leaks "$WORK/stats.json")
RANGES=$(stat_of cdn_range_requests "$WORK/stats.json")
UNAUTH=$(stat_of hub_unauthorized "$WORK/stats.json")
SERVED_X=$(python3 -c "print(f'{($HUB_B+$CDN_B)/$MODEL_BYTES:.3f}')")
MIBS=$(python3 -c "print(f'{$MODEL_BYTES/2**20/$JOB_S:.1f}')")
SEED_MIBS=$(python3 -c "s=$SEED_S; print(f'{$MODEL_BYTES/2**20/s:.1f}' if s > 0 else 'n/a')")
GiB=$(python3 -c "print(f'{$MODEL_BYTES/2**30:.2f}')")
echo "hub: model $GiB GiB in $FILES files ($SHARDS shards, chunks $CHUNK_SIZE), $(nproc) cores"
echo "  manifest build (hub APIs, small files hashed)  ${BUILD_S} s, $BUILD_B bytes downloaded"
echo "  job: POST -> seed staged (hub download)       ${SEED_S} s  $SEED_MIBS MiB/s"
echo "  job: POST -> completed on 3 nodes             ${JOB_S} s  $MIBS MiB/s per node"
echo "  served during the job: hub $HUB_B + cdn $CDN_B bytes = ${SERVED_X} x model; cdn range requests $RANGES; token at cdn $LEAKS; unauthorized hub requests $UNAUTH"
echo "  max RSS: seed $((RSS_SEED / 1024)) MiB, followers $((RSS_F1 / 1024)) / $((RSS_F2 / 1024)) MiB; load before $LOAD_BEFORE, after $LOAD_AFTER"
echo "hub size_gib=$SIZE_GIB files=$FILES build_s=$BUILD_S seed_download_s=$SEED_S job_s=$JOB_S mib_s_per_node=$MIBS served_x_model=$SERVED_X token_leaks=$LEAKS range_requests=$RANGES seed_restarts=$([ -f "$WORK/seed.pid" ] && echo 1 || echo 0) status=$STATUS verified=$VERIFIED/3"
[ "$STATUS" = completed ] || { python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s.get("last_error")); [print(p["node_id"], p["state"], p.get("last_error")) for p in s["placements"]]' "$WORK/snapshot.json" >&2; tail -20 "$WORK"/logs/node-*.log >&2; exit 1; }
[ "$VERIFIED" = 3 ] || exit 1
[ "$LEAKS" = 0 ] || fail "the hub token reached the CDN"
