#!/usr/bin/env bash
# Jaeger (all-in-one, in-memory storage) for engram's tracing tests.
#
#   jaeger.sh start   build if needed, start it, wait until it answers
#   jaeger.sh stop    stop the instance started by this script
#   jaeger.sh env     print the export lines the tests read
#   jaeger.sh status  exit 0 if it answers
#
# OTLP gRPC on 127.0.0.1:$JAEGER_OTLP_GRPC_PORT (4317), OTLP HTTP on
# 127.0.0.1:$JAEGER_OTLP_HTTP_PORT (4318), the query API on
# 127.0.0.1:$JAEGER_QUERY_PORT (16686); health on $JAEGER_HEALTH_PORT (13133).
#
# Jaeger v2 (module github.com/jaegertracing/jaeger v1.76.0) cannot be
# built with `go install pkg@version`: its go.mod has a replace directive.
# It is built the way a tool dependency is, in a throw-away module that
# repeats that replace (`go get -tool`, then `go build`). The binary is
# built without the web UI's assets (the query API is complete; the UI at
# /search shows a placeholder).
set -euo pipefail
SVC_NAME=jaeger
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

JAEGER_VERSION="${JAEGER_VERSION:-v1.76.0}"
JAEGER_OTLP_GRPC_PORT="${JAEGER_OTLP_GRPC_PORT:-4317}"
JAEGER_OTLP_HTTP_PORT="${JAEGER_OTLP_HTTP_PORT:-4318}"
JAEGER_QUERY_PORT="${JAEGER_QUERY_PORT:-16686}"
JAEGER_QUERY_GRPC_PORT="${JAEGER_QUERY_GRPC_PORT:-16685}"
JAEGER_HEALTH_PORT="${JAEGER_HEALTH_PORT:-13133}"
JAEGER_DIR="$ENGRAM_SERVICES_DIR/jaeger"
JAEGER_PID="$JAEGER_DIR/jaeger.pid"
JAEGER_LOG="$JAEGER_DIR/jaeger.log"

jaeger_bin() {
  local gobin
  gobin="$(go env GOBIN 2>/dev/null || true)"
  [[ -n "$gobin" ]] || gobin="$(go env GOPATH)/bin"
  echo "$gobin/jaeger"
}

have_version() {
  [[ -x "$BIN" ]] && go version -m "$BIN" 2>/dev/null |
    awk '$1 == "mod" && $2 == "github.com/jaegertracing/jaeger" {print $3}' |
    grep -qx "$JAEGER_VERSION"
}

# ensure_binary: build the pinned version unless that exact version is
# already built (checked through the module version embedded in the binary).
ensure_binary() {
  command -v go >/dev/null || die "go is not on PATH"
  BIN="$(jaeger_bin)"
  have_version && return 0
  # Another process (e.g. a background build) may be building it right now.
  local i
  for ((i = 0; i < 1200; i++)); do
    pgrep -f "go build -o $BIN github.com/jaegertracing/jaeger/cmd/jaeger" >/dev/null || break
    ((i % 30 == 0)) && log "waiting for a running build of jaeger to finish"
    sleep 1
  done
  have_version && return 0
  local t0 mod="$JAEGER_DIR/build" blog="$JAEGER_DIR/build.log"
  t0=$(date +%s)
  log "building jaeger $JAEGER_VERSION (about 9 minutes on 2 busy cores the first time, under a minute with a warm build cache)"
  rm -rf "$mod"
  mkdir -p "$mod" "$(dirname "$BIN")"
  # The replace is jaeger's own (its go.mod); without it the build fails.
  cat >"$mod/go.mod" <<'EOF'
module engram-ci/jaeger

go 1.26

replace github.com/Shopify/sarama => github.com/Shopify/sarama v1.33.0
EOF
  if ! (cd "$mod" && GOFLAGS='-mod=mod -buildvcs=false' go get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_VERSION" &&
    GOFLAGS='-mod=mod -buildvcs=false' go build -o "$BIN" github.com/jaegertracing/jaeger/cmd/jaeger) >"$blog" 2>&1; then
    die "building jaeger@$JAEGER_VERSION failed" "$blog"
  fi
  log "built $BIN in $(elapsed_since "$t0")s"
}

write_config() {
  cat >"$JAEGER_DIR/config.yaml" <<EOF
# Written by jaeger.sh: all-in-one on loopback, traces in memory.
service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    resource:
      service.name: jaeger
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:$JAEGER_QUERY_PORT
    grpc:
      endpoint: 127.0.0.1:$JAEGER_QUERY_GRPC_PORT
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:$JAEGER_HEALTH_PORT
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:$JAEGER_OTLP_GRPC_PORT
      http:
        endpoint: 127.0.0.1:$JAEGER_OTLP_HTTP_PORT
processors:
  batch:
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
EOF
}

# jaeger_ok: healthy, and the query API answers with its JSON envelope (so
# another server on the port is not mistaken for ours), and OTLP HTTP
# accepts connections.
jaeger_ok() {
  curl -sf --max-time 3 "http://127.0.0.1:$JAEGER_HEALTH_PORT/status" 2>/dev/null | grep -q '"healthy":true' &&
    curl -sf --max-time 3 "http://127.0.0.1:$JAEGER_QUERY_PORT/api/services" 2>/dev/null | grep -q '"data"' &&
    port_open 127.0.0.1 "$JAEGER_OTLP_HTTP_PORT"
}

cmd_start() {
  local t0
  t0=$(date +%s)
  mkdir -p "$JAEGER_DIR"
  ensure_binary
  if jaeger_ok; then
    log "already answering on 127.0.0.1:$JAEGER_QUERY_PORT, reusing it"
    return 0
  fi
  if pid_alive "$JAEGER_PID" "$JAEGER_DIR"; then
    log "our old instance (pid $(cat "$JAEGER_PID")) is not answering, restarting it"
    stop_pidfile "$JAEGER_PID" "$JAEGER_DIR"
  fi
  local p
  for p in "$JAEGER_OTLP_GRPC_PORT" "$JAEGER_OTLP_HTTP_PORT" "$JAEGER_QUERY_PORT" "$JAEGER_QUERY_GRPC_PORT" "$JAEGER_HEALTH_PORT"; do
    if port_open 127.0.0.1 "$p"; then
      die "port $p is taken by something that is not our Jaeger; stop it or set the JAEGER_*_PORT variables"
    fi
  done
  write_config
  # A second try if the process is gone right after start-up (a safety
  # net: the one failure seen was the start-up check's race, now fixed in
  # started_alive); a second failure is an error.
  local attempt rc
  for attempt in 1 2; do
    launch_jaeger && rc=0 || rc=$?
    if [[ $rc == 0 ]]; then
      log "ready (pid $(cat "$JAEGER_PID")) in $(elapsed_since "$t0")s"
      return 0
    fi
    [[ $attempt == 1 && $rc == 1 ]] && log "jaeger exited during start-up; starting it once more" && sleep 1
  done
  if [[ $rc == 1 ]]; then die "jaeger exited during start-up" "$JAEGER_LOG"; fi
  die "not answering after 30s" "$JAEGER_LOG"
}

# launch_jaeger starts it and waits: 0 ready, 1 exited, 2 not answering.
launch_jaeger() {
  log "starting on 127.0.0.1 (OTLP $JAEGER_OTLP_GRPC_PORT/$JAEGER_OTLP_HTTP_PORT, query $JAEGER_QUERY_PORT), traces in memory"
  # setsid: own session, so the caller's shell ending does not take it down.
  setsid "$BIN" --config "file:$JAEGER_DIR/config.yaml" </dev/null >>"$JAEGER_LOG" 2>&1 &
  echo $! >"$JAEGER_PID"
  local i
  for ((i = 0; i < 300; i++)); do
    jaeger_ok && return 0
    started_alive "$JAEGER_PID" || return 1
    sleep 0.1
  done
  return 2
}

cmd_stop() {
  stop_pidfile "$JAEGER_PID" "$JAEGER_DIR"
  log "stopped"
}

cmd_env() {
  cat <<EOF
export ENGRAM_TEST_OTLP_ENDPOINT=http://127.0.0.1:$JAEGER_OTLP_HTTP_PORT
export ENGRAM_TEST_OTLP_GRPC_ENDPOINT=http://127.0.0.1:$JAEGER_OTLP_GRPC_PORT
export ENGRAM_TEST_JAEGER_URL=http://127.0.0.1:$JAEGER_QUERY_PORT
EOF
}

cmd_status() {
  jaeger_ok
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  env) cmd_env ;;
  status) cmd_status ;;
  *)
    echo "usage: $0 start|stop|env|status" >&2
    exit 2
    ;;
esac
