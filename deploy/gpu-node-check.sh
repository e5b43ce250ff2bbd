#!/usr/bin/env bash
# Checks a GPU node end to end with the real driver, as an operator would before giving the
# node work (docs/gpus.md, "Checking a GPU node"):
#   1. lh-gpucheck on every GPU (memory, burn, peer copies), then --quick on GPU 0, timed;
#   2. a coordinator and an agent on loopback (temp state dir, ports 0) that samples its GPUs
#      every second through NVML;
#   3. the GPU examples: gpu-smoke (a PyTorch stage: its GPU's telemetry is stored with the
#      attempt), gpu-preflight (lh-gpucheck as a stage) and gpu-idle (a stage that holds a GPU
#      and does nothing: stopped with the failure kind gpu_idle);
#   4. drain and undrain of GPU 0 through the CLI, with the agent's /metrics between.
# Prints what each step saw and exits non-zero when one did not do what it should.
#
#   deploy/gpu-node-check.sh [OUT_DIR]     # OUT_DIR keeps the logs and reports (default: temp)
#
# Env: LONGHAUL_BIN_DIR (default build/bin). Needs the NVIDIA driver, python3 with torch.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN=${LONGHAUL_BIN_DIR:-$ROOT/build/bin}
OUT=${1:-$(mktemp -d /tmp/longhaul-gpu-check.XXXXXX)}
STATE="$OUT/state"
mkdir -p "$STATE/logs"
export PATH="$BIN:$PATH"
failures=0
step() { printf '\n== %s\n' "$*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
now_ms() { date +%s%3N; }

step "the node"
nvidia-smi --query-gpu=index,name,uuid,driver_version,memory.total --format=csv,noheader ||
  { echo "no nvidia-smi: not a GPU node"; exit 3; }

step "lh-gpucheck on every GPU"
t0=$(now_ms)
lh-gpucheck --report "$OUT/gpucheck.json"
rc=$?
echo "exit $rc in $(( $(now_ms) - t0 )) ms"; [ "$rc" = 0 ] || fail "lh-gpucheck exit $rc"
step "lh-gpucheck --quick on GPU 0 (the return-to-service check)"
t0=$(now_ms)
CUDA_VISIBLE_DEVICES=0 lh-gpucheck --gpus 0 --quick --report "$OUT/gpucheck-quick.json"
rc=$?
echo "exit $rc in $(( $(now_ms) - t0 )) ms"; [ "$rc" = 0 ] || fail "lh-gpucheck --quick exit $rc"

step "coordinator and agent"
longhauld --config /dev/null --state-dir "$STATE" --listen 127.0.0.1:0 --http 127.0.0.1:0 \
  --log-file "$STATE/logs/longhauld.log" >"$STATE/logs/longhauld.out" 2>&1 </dev/null &
DPID=$!
for _ in $(seq 1 100); do [ -s "$STATE/coordinator.addr" ] && [ -s "$STATE/http.addr" ] && break; sleep 0.1; done
export LONGHAUL_COORDINATOR
LONGHAUL_COORDINATOR=$(cat "$STATE/coordinator.addr")
HTTP=$(cat "$STATE/http.addr")
longhaul-agent --config /dev/null --coordinator "$LONGHAUL_COORDINATOR" --state-dir "$STATE/agent" \
  --id gpu0 --gpu-sample 1s --metrics-listen 127.0.0.1:0 --log-file "$STATE/logs/agent.log" \
  >"$STATE/logs/agent.out" 2>&1 </dev/null &
APID=$!
trap 'kill $APID $DPID 2>/dev/null; wait 2>/dev/null' EXIT
for _ in $(seq 1 100); do longhaul agents --json 2>/dev/null | grep -q '"gpu0"' && break; sleep 0.1; done
longhaul agents || fail "no agent"
grep -hi "GPU [0-9]*:\|NVML\|metrics on\|XID\|kernel log" "$STATE/logs/agent.log" | head -10
METRICS=$(grep -o 'http://[0-9.:]*/metrics' "$STATE/logs/agent.log" | head -1)

# Submits a workflow, waits for its end, prints what longhaul keeps of it. $1 file, $2 expected
# run status.
run_example() {
  local file=$1 want=$2 run status rc
  step "$(basename "$file") (expected: $want)"
  run=$(longhaul submit "$ROOT/$file") || { fail "submit $file"; return; }
  longhaul watch "$run" >"$OUT/watch-$run.txt" 2>&1
  rc=$?
  case $rc in 0) status=succeeded ;; 1) status=failed ;; *) status="watch exit $rc" ;; esac
  longhaul show "$run"
  longhaul show "$run" --attempts | tail -n +1 | grep -i "attempt\|kind\|reason\|gpu" | head -20
  [ "$status" = "$want" ] || fail "$file: run $run is $status, not $want"
  LAST_RUN=$run
}

run_example workflows/examples/gpu-smoke.yaml succeeded
curl -sf "http://$HTTP/api/v1/runs/$LAST_RUN/stages/gpu/gpus" >"$OUT/gpu-series.json" ||
  fail "no GPU series for gpu-smoke"
python3 - "$OUT/gpu-series.json" <<'EOF' || fail "the gpu-smoke attempt's GPU series is empty"
import json, sys
doc = json.load(open(sys.argv[1]))
n = 0
for s in doc.get("series", []):
    pts = s.get("points", [])
    n += len(pts)
    busy = [p for p in pts if p.get("sm_util", -1) > 50]
    print("attempt", s.get("attempt"), "gpu", s.get("gpu_index"), s.get("uuid"), "points", len(pts),
          "busy points", len(busy), "peak mem", max((int(p.get("mem_used_max", -1)) for p in pts), default=-1))
print("summary", json.dumps(doc.get("summary", {})))
sys.exit(0 if n > 0 else 1)
EOF
run_example workflows/examples/gpu-preflight.yaml succeeded
longhaul logs "$LAST_RUN" preflight | tail -3
run_example workflows/examples/gpu-idle.yaml failed
longhaul show "$LAST_RUN" --attempts | grep -q "gpu_idle" || fail "gpu-idle: no gpu_idle failure"
grep -h "idle" "$STATE/logs/longhauld.log" | tail -3

step "drain and undrain GPU 0"
longhaul gpu drain gpu0:0 --reason "node check" || fail "drain"
curl -sf "http://$HTTP/metrics" | grep '^longhaul_gpus' || true
longhaul gpu undrain gpu0:0 --reason "node check done" || fail "undrain"
longhaul agents | tail -n +2

step "metrics"
[ -n "$METRICS" ] && curl -sf "$METRICS" | grep -E '^(DCGM_FI_DEV_(GPU_UTIL|FB_USED|POWER_USAGE|GPU_TEMP|SM_CLOCK|XID_ERRORS)|longhaul_agent_gpu_(backend|healthy))' | head -12
curl -sf "http://$HTTP/metrics" | grep -E '^longhaul_gpu' | head -12

echo
if [ "$failures" = 0 ]; then echo "gpu node check: passed (logs in $OUT)"; else echo "gpu node check: $failures failed (logs in $OUT)"; fi
[ "$failures" = 0 ]
