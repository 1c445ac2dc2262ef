#!/usr/bin/env bash
# HTTPS + basic-auth front for the test OpenSearch: nginx on
# 127.0.0.1:$PROXY_PORT (9443) proxies to http://127.0.0.1:$OS_PORT (9200),
# with the certificate signed by the CA in $ENGRAM_SERVICES_DIR/tls (the same
# CA as the versitygw TLS instance). Kept apart from opensearch.sh so that a
# failure here does not block the plain services.
#
#   tlsproxy.sh start   install nginx if needed (apt), start it, check it
#   tlsproxy.sh stop    stop the nginx started by this script
#   tlsproxy.sh env     print the export lines the tests read
#   tlsproxy.sh status  exit 0 if the proxy answers as expected
set -euo pipefail
SVC_NAME=tlsproxy
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

PROXY_PORT="${PROXY_PORT:-9443}"
OS_PORT="${OS_PORT:-9200}"
PROXY_USER="${PROXY_USER:-engram}"
PROXY_PASSWORD="${PROXY_PASSWORD:-engram-test-password}"
PROXY_DIR="$ENGRAM_SERVICES_DIR/tlsproxy"
PROXY_CONF="$PROXY_DIR/nginx.conf"
PROXY_PIDFILE="$PROXY_DIR/nginx.pid"
PROXY_ERRLOG="$PROXY_DIR/error.log"
PROXY_URL="https://127.0.0.1:$PROXY_PORT"

ensure_nginx() {
  command -v nginx >/dev/null && return 0
  local t0 ilog="$PROXY_DIR/apt.log"
  t0=$(date +%s)
  log "installing nginx with apt-get"
  # apt-get update first: on a new machine the package lists may be empty.
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx; } >"$ilog" 2>&1; then
    die "apt-get install nginx failed" "$ilog"
  fi
  command -v nginx >/dev/null || die "nginx installed but not on PATH" "$ilog"
  log "installed nginx in $(elapsed_since "$t0")s"
}

# http_code [curl args...] URL: prints the HTTP status (000 if no answer).
http_code() {
  curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" 2>/dev/null || true
}

# proxy_ok: TLS verifies against our CA, our credentials get 200 from
# OpenSearch, no credentials get 401.
proxy_ok() {
  [[ "$(http_code --cacert "$SVC_CA_FILE" -u "$PROXY_USER:$PROXY_PASSWORD" "$PROXY_URL/")" == 200 ]] &&
    [[ "$(http_code --cacert "$SVC_CA_FILE" "$PROXY_URL/")" == 401 ]]
}

write_config() {
  mkdir -p "$PROXY_DIR/tmp"
  chown nobody:nogroup "$PROXY_DIR/tmp"
  printf '%s:%s\n' "$PROXY_USER" "$(openssl passwd -apr1 "$PROXY_PASSWORD")" >"$PROXY_DIR/htpasswd"
  chmod 644 "$PROXY_DIR/htpasswd"
  cat >"$PROXY_CONF" <<EOF
# Written by .ci/services/tlsproxy.sh; overwritten on every start.
user nobody nogroup;
worker_processes 1;
pid $PROXY_PIDFILE;
error_log $PROXY_ERRLOG warn;
events { worker_connections 512; }
http {
  access_log $PROXY_DIR/access.log;
  client_body_temp_path $PROXY_DIR/tmp/body;
  proxy_temp_path $PROXY_DIR/tmp/proxy;
  fastcgi_temp_path $PROXY_DIR/tmp/fastcgi;
  uwsgi_temp_path $PROXY_DIR/tmp/uwsgi;
  scgi_temp_path $PROXY_DIR/tmp/scgi;
  client_max_body_size 200m;
  upstream opensearch {
    server 127.0.0.1:$OS_PORT;
    keepalive 16;
  }
  server {
    listen 127.0.0.1:$PROXY_PORT ssl;
    ssl_certificate $SVC_CERT_FILE;
    ssl_certificate_key $SVC_KEY_FILE;
    ssl_protocols TLSv1.2 TLSv1.3;
    auth_basic "engram test OpenSearch";
    auth_basic_user_file $PROXY_DIR/htpasswd;
    location / {
      proxy_pass http://opensearch;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Authorization "";
      proxy_set_header Host \$host;
      proxy_read_timeout 300s;
    }
  }
}
EOF
}

cmd_start() {
  local t0
  t0=$(date +%s)
  mkdir -p "$PROXY_DIR"
  ensure_tls
  if proxy_ok; then
    log "already answering on $PROXY_URL, reusing it"
    return 0
  fi
  if pid_alive "$PROXY_PIDFILE" "$PROXY_CONF"; then
    log "our nginx (pid $(cat "$PROXY_PIDFILE")) does not answer as expected, restarting it"
    stop_pidfile "$PROXY_PIDFILE" "$PROXY_CONF"
  fi
  if port_open 127.0.0.1 "$PROXY_PORT"; then
    die "port $PROXY_PORT is taken by something else; stop it or set PROXY_PORT"
  fi
  ensure_nginx
  write_config
  nginx -t -q -e "$PROXY_ERRLOG" -c "$PROXY_CONF" -p "$PROXY_DIR" >>"$PROXY_DIR/nginx-cli.log" 2>&1 ||
    die "nginx rejected $PROXY_CONF" "$PROXY_DIR/nginx-cli.log" "$PROXY_ERRLOG"
  log "starting nginx on $PROXY_URL -> http://127.0.0.1:$OS_PORT"
  # nginx daemonizes itself and writes $PROXY_PIDFILE.
  nginx -e "$PROXY_ERRLOG" -c "$PROXY_CONF" -p "$PROXY_DIR" </dev/null >>"$PROXY_DIR/nginx-cli.log" 2>&1 ||
    die "nginx did not start" "$PROXY_DIR/nginx-cli.log" "$PROXY_ERRLOG"
  local i code
  for ((i = 0; i < 100; i++)); do
    proxy_ok && {
      log "ready: TLS verified with $SVC_CA_FILE, basic auth enforced (up in $(elapsed_since "$t0")s)"
      return 0
    }
    sleep 0.1
  done
  code="$(http_code --cacert "$SVC_CA_FILE" -u "$PROXY_USER:$PROXY_PASSWORD" "$PROXY_URL/")"
  if [[ "$code" == 502 || "$code" == 504 ]]; then
    die "nginx is up but OpenSearch on 127.0.0.1:$OS_PORT does not answer (HTTP $code); start opensearch.sh first" "$PROXY_ERRLOG"
  fi
  die "proxy check failed on $PROXY_URL (with credentials: HTTP $code)" "$PROXY_ERRLOG"
}

cmd_stop() {
  stop_pidfile "$PROXY_PIDFILE" "$PROXY_CONF"
  log "stopped"
}

cmd_env() {
  cat <<EOF
export ENGRAM_TEST_OPENSEARCH_TLS_URL=$PROXY_URL
export ENGRAM_TEST_OPENSEARCH_CA_FILE=$SVC_CA_FILE
export ENGRAM_TEST_OPENSEARCH_USERNAME=$PROXY_USER
export ENGRAM_TEST_OPENSEARCH_PASSWORD=$PROXY_PASSWORD
EOF
}

cmd_status() { proxy_ok; }

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
