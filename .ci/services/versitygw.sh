#!/usr/bin/env bash
# Versity S3 Gateway (S3 API over a plain directory) for engram's tests.
#
#   versitygw.sh start   build if needed, start plain + TLS instances, wait
#   versitygw.sh stop    stop both instances started by this script
#   versitygw.sh env     print the export lines the tests read
#   versitygw.sh status  exit 0 if both instances answer
#
# Plain HTTP on 127.0.0.1:$VGW_PORT (7070), HTTPS on 127.0.0.1:$VGW_TLS_PORT
# (7071) with a certificate signed by the CA in $ENGRAM_SERVICES_DIR/tls.
set -euo pipefail
SVC_NAME=versitygw
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

VGW_VERSION="${VGW_VERSION:-v1.8.0}"
VGW_PORT="${VGW_PORT:-7070}"
VGW_TLS_PORT="${VGW_TLS_PORT:-7071}"
VGW_ACCESS_KEY="${VGW_ACCESS_KEY:-engramtest}"
VGW_SECRET_KEY="${VGW_SECRET_KEY:-engramtestsecret}"
VGW_REGION="${VGW_REGION:-us-east-1}"
VGW_DIR="$ENGRAM_SERVICES_DIR/versitygw"
EMPTY_SHA256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855

vgw_bin() {
  local gobin
  gobin="$(go env GOBIN 2>/dev/null || true)"
  [[ -n "$gobin" ]] || gobin="$(go env GOPATH)/bin"
  echo "$gobin/versitygw"
}

# ensure_binary: go install the pinned version unless that exact version is
# already built (checked through the module version embedded in the binary).
ensure_binary() {
  command -v go >/dev/null || die "go is not on PATH"
  BIN="$(vgw_bin)"
  if [[ -x "$BIN" ]] && go version -m "$BIN" 2>/dev/null |
    awk '$1 == "mod" && $2 == "github.com/versity/versitygw" {print $3}' |
    grep -qx "$VGW_VERSION"; then
    return 0
  fi
  # Another process (e.g. a background build) may be installing it right now.
  local i
  for ((i = 0; i < 600; i++)); do
    pgrep -f "go install github.com/versity/versitygw/cmd/versitygw" >/dev/null || break
    ((i % 30 == 0)) && log "waiting for a running 'go install versitygw' to finish"
    sleep 1
  done
  if [[ -x "$BIN" ]] && go version -m "$BIN" 2>/dev/null | grep -q "github.com/versity/versitygw[[:space:]]*$VGW_VERSION"; then
    return 0
  fi
  local t0 blog="$VGW_DIR/build.log"
  t0=$(date +%s)
  log "building versitygw $VGW_VERSION with go install (about 3 minutes on 2 cores the first time)"
  # Outside any module, so the project's go.mod is neither read nor touched.
  if ! (cd / && GOFLAGS='' GO111MODULE=on go install "github.com/versity/versitygw/cmd/versitygw@$VGW_VERSION") >"$blog" 2>&1; then
    die "go install versitygw@$VGW_VERSION failed" "$blog"
  fi
  log "built $BIN in $(elapsed_since "$t0")s"
}

# s3_ok SCHEME PORT: a signed ListBuckets with our keys answers 200 with a
# bucket list (so another server on the port is not mistaken for ours).
s3_ok() {
  local scheme="$1" port="$2" extra=()
  [[ "$scheme" == https ]] && extra=(--cacert "$SVC_CA_FILE")
  local out
  out="$(curl -s -w '\n%{http_code}' --max-time 5 "${extra[@]}" \
    -H "x-amz-content-sha256: $EMPTY_SHA256" --aws-sigv4 "aws:amz:$VGW_REGION:s3" --user "$VGW_ACCESS_KEY:$VGW_SECRET_KEY" \
    "$scheme://127.0.0.1:$port/" 2>/dev/null)" || true
  [[ "${out##*$'\n'}" == 200 && "$out" == *ListAllMyBucketsResult* ]]
}

# start_instance NAME SCHEME PORT [extra versitygw args...]
start_instance() {
  local name="$1" scheme="$2" port="$3"
  shift 3
  local pf="$VGW_DIR/$name-$port.pid" lf="$VGW_DIR/$name-$port.log" data="$VGW_DIR/data-$name"
  if s3_ok "$scheme" "$port"; then
    log "$name: already answering on $scheme://127.0.0.1:$port, reusing it"
    return 0
  fi
  if pid_alive "$pf" "$VGW_DIR"; then
    log "$name: our old instance (pid $(cat "$pf")) is not answering, restarting it"
    stop_pidfile "$pf" "$VGW_DIR"
  fi
  if port_open 127.0.0.1 "$port"; then
    die "$name: port $port is taken by something that does not answer S3 with our keys ($VGW_ACCESS_KEY); stop it or set VGW_PORT/VGW_TLS_PORT"
  fi
  mkdir -p "$data"
  log "$name: starting on $scheme://127.0.0.1:$port serving posix $data"
  # setsid: own session, so the caller's shell ending does not take it down.
  setsid "$BIN" --port "127.0.0.1:$port" --access "$VGW_ACCESS_KEY" \
    --secret "$VGW_SECRET_KEY" --region "$VGW_REGION" --quiet "$@" \
    posix "$data" </dev/null >>"$lf" 2>&1 &
  echo $! >"$pf"
  local i
  for ((i = 0; i < 300; i++)); do
    s3_ok "$scheme" "$port" && {
      log "$name: ready (pid $(cat "$pf"))"
      return 0
    }
    started_alive "$pf" || die "$name: versitygw exited during start-up" "$lf"
    sleep 0.1
  done
  die "$name: not answering on port $port after 30s" "$lf"
}

cmd_start() {
  local t0
  t0=$(date +%s)
  mkdir -p "$VGW_DIR"
  ensure_binary
  ensure_tls
  start_instance plain http "$VGW_PORT"
  start_instance tls https "$VGW_TLS_PORT" --cert "$SVC_CERT_FILE" --key "$SVC_KEY_FILE"
  log "up in $(elapsed_since "$t0")s"
}

cmd_stop() {
  stop_pidfile "$VGW_DIR/plain-$VGW_PORT.pid" "$VGW_DIR"
  stop_pidfile "$VGW_DIR/tls-$VGW_TLS_PORT.pid" "$VGW_DIR"
  log "stopped"
}

cmd_env() {
  cat <<EOF
export ENGRAM_TEST_S3_ENDPOINT=127.0.0.1:$VGW_PORT
export ENGRAM_TEST_S3_ACCESS_KEY=$VGW_ACCESS_KEY
export ENGRAM_TEST_S3_SECRET_KEY=$VGW_SECRET_KEY
export ENGRAM_TEST_S3_REGION=$VGW_REGION
export ENGRAM_TEST_S3_TLS_ENDPOINT=127.0.0.1:$VGW_TLS_PORT
export ENGRAM_TEST_S3_CA_FILE=$SVC_CA_FILE
EOF
}

cmd_status() {
  s3_ok http "$VGW_PORT" && s3_ok https "$VGW_TLS_PORT"
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
