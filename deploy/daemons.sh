#!/usr/bin/env bash
# Starts or stops the embedded default: one longhauld and one local longhaul-agent, all state
# under $LONGHAUL_STATE_DIR (default ./.longhaul). Sourced by quickstart.sh; usable alone:
#   deploy/daemons.sh start | stop | status
# The UI and HTTP API listen on $LONGHAUL_HTTP (default 127.0.0.1:8080; 127.0.0.1:0 picks a
# free port; empty turns it off); the address is printed and written to STATE/http.addr.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE=${LONGHAUL_STATE_DIR:-$ROOT/.longhaul}
BIN=${LONGHAUL_BIN_DIR:-$ROOT/${LONGHAUL_BUILD_DIR:-build}/bin}
ADDR=${LONGHAUL_LISTEN:-127.0.0.1:7070}
HTTP=${LONGHAUL_HTTP-127.0.0.1:8080}

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

start() {
  mkdir -p "$STATE/logs"
  if alive "$STATE/longhauld.pid"; then
    echo "longhauld already running (pid $(cat "$STATE/longhauld.pid"))"
  else
    rm -f "$STATE/coordinator.addr" "$STATE/http.addr"
    # --config /dev/null: these daemons keep to $STATE; a machine's /etc/longhaul files (an
    # installed coordinator's, deploy/install.sh) do not apply to them.
    setsid "$BIN/longhauld" --config /dev/null --state-dir "$STATE" --listen "$ADDR" --http "$HTTP" \
      --log-file "$STATE/logs/longhauld.log" >>"$STATE/logs/longhauld.out" 2>&1 </dev/null &
    echo $! >"$STATE/longhauld.pid"
    for _ in $(seq 1 100); do
      [ -s "$STATE/coordinator.addr" ] && break
      alive "$STATE/longhauld.pid" || { echo "longhauld failed to start:"; tail -20 "$STATE/logs/longhauld.out"; exit 1; }
      sleep 0.1
    done
    [ -s "$STATE/coordinator.addr" ] || { echo "longhauld did not come up; see $STATE/logs"; exit 1; }
    echo "longhauld listening on $(cat "$STATE/coordinator.addr") (pid $(cat "$STATE/longhauld.pid"))"
  fi
  if [ -s "$STATE/http.addr" ]; then
    echo "status UI: http://$(cat "$STATE/http.addr")/"
  fi
  if alive "$STATE/agent.pid"; then
    echo "longhaul-agent already running (pid $(cat "$STATE/agent.pid"))"
  else
    setsid "$BIN/longhaul-agent" --config /dev/null --coordinator "$(cat "$STATE/coordinator.addr")" \
      --state-dir "$STATE/agent" --id local \
      --log-file "$STATE/logs/agent.log" >>"$STATE/logs/agent.out" 2>&1 </dev/null &
    echo $! >"$STATE/agent.pid"
    echo "longhaul-agent 'local' started (pid $(cat "$STATE/agent.pid"))"
  fi
  # Wait until the agent has said hello, so the first run has somewhere to go.
  for _ in $(seq 1 100); do
    if "$BIN/longhaul" --coordinator "$(cat "$STATE/coordinator.addr")" agents --json 2>/dev/null |
        grep -q '"id": *"local"'; then
      return 0
    fi
    sleep 0.1
  done
  echo "the agent did not connect; see $STATE/logs/agent.log"
  exit 1
}

stop() {
  for name in agent longhauld; do
    if alive "$STATE/$name.pid"; then
      kill -TERM "$(cat "$STATE/$name.pid")"
      for _ in $(seq 1 50); do alive "$STATE/$name.pid" || break; sleep 0.1; done
      alive "$STATE/$name.pid" && kill -KILL "$(cat "$STATE/$name.pid")"
      echo "stopped $name"
    fi
    rm -f "$STATE/$name.pid"
  done
}

status() {
  for name in longhauld agent; do
    if alive "$STATE/$name.pid"; then echo "$name: running (pid $(cat "$STATE/$name.pid"))";
    else echo "$name: stopped"; fi
  done
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status"; exit 2 ;;
esac
