# shellcheck shell=bash
# Shared helpers for the .ci/services/*.sh scripts. Source it; do not run it.
#
# Everything a service writes at run time (data, logs, pid files, generated
# config and TLS material) lives under $ENGRAM_SERVICES_DIR
# (default /tmp/engram-services). Downloads are cached elsewhere (Go build
# cache / GOPATH, the Maven repository ~/.m2) so they survive a wipe of it.

ENGRAM_SERVICES_DIR="${ENGRAM_SERVICES_DIR:-/tmp/engram-services}"
export ENGRAM_SERVICES_DIR
mkdir -p "$ENGRAM_SERVICES_DIR"
chmod 755 "$ENGRAM_SERVICES_DIR"

SVC_TLS_DIR="$ENGRAM_SERVICES_DIR/tls"
SVC_CA_FILE="$SVC_TLS_DIR/ca.pem"
SVC_CERT_FILE="$SVC_TLS_DIR/server.pem"
SVC_KEY_FILE="$SVC_TLS_DIR/server.key"

log() { printf '[%s %s] %s\n' "$(date +%H:%M:%S)" "${SVC_NAME:-services}" "$*" >&2; }

# die MESSAGE [LOGFILE...]: print the error and the tail of each log, exit 1.
die() {
  local msg="$1"; shift
  printf '[%s %s] ERROR: %s\n' "$(date +%H:%M:%S)" "${SVC_NAME:-services}" "$msg" >&2
  local f
  for f in "$@"; do
    if [[ -f "$f" ]]; then
      printf -- '----- last 40 lines of %s -----\n' "$f" >&2
      tail -n 40 "$f" >&2 || true
      printf -- '----- end of %s -----\n' "$f" >&2
    fi
  done
  exit 1
}

# port_open HOST PORT: true if something accepts TCP connections there.
port_open() {
  (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

# pid_alive PIDFILE [WORD]: true if the pid in PIDFILE is a live process
# (whose command line contains WORD, when given: a pid file left over from
# an earlier boot or run may name a pid that now belongs to someone else).
pid_alive() {
  local pf="$1" word="${2:-}" pid
  [[ -s "$pf" ]] || return 1
  pid="$(cat "$pf" 2>/dev/null)" || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  [[ -z "$word" ]] || tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$word"
}

# started_alive PIDFILE: true while the process just started (its pid in
# PIDFILE) exists. For the start-up wait, not pid_alive: between the fork
# and the exec of the server its command line is still the script's, which
# does not hold the word pid_alive looks for (that raced under load, and a
# server starting fine was reported as "exited during start-up").
started_alive() {
  local pid
  pid="$(cat "$1" 2>/dev/null)" || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null
}

# stop_pidfile PIDFILE WORD [TIMEOUT_SECONDS]: TERM the process, KILL it after
# the timeout, remove the pid file. Only ever signals the pid recorded by us,
# and only while its command line still contains WORD.
stop_pidfile() {
  local pf="$1" word="$2" timeout="${3:-20}" pid i
  if ! pid_alive "$pf" "$word"; then
    rm -f "$pf"
    return 0
  fi
  pid="$(cat "$pf")"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < timeout * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "pid $pid did not stop after ${timeout}s, sending KILL"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.5
  fi
  rm -f "$pf"
}

# ensure_tls: a self-signed CA and a server certificate for 127.0.0.1,
# ::1 and localhost, shared by every TLS endpoint. Generated once.
ensure_tls() {
  mkdir -p "$SVC_TLS_DIR"
  if [[ -s "$SVC_CA_FILE" && -s "$SVC_CERT_FILE" && -s "$SVC_KEY_FILE" ]] &&
    openssl verify -CAfile "$SVC_CA_FILE" "$SVC_CERT_FILE" >/dev/null 2>&1; then
    return 0
  fi
  log "generating self-signed CA and server certificate in $SVC_TLS_DIR"
  local tmp
  tmp="$(mktemp -d "$SVC_TLS_DIR/gen.XXXXXX")"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -sha256 \
    -subj "/CN=engram test CA" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$tmp/ca.key" -out "$tmp/ca.pem" >/dev/null 2>&1 ||
    die "openssl could not create the CA"
  openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=localhost" \
    -keyout "$tmp/server.key" -out "$tmp/server.csr" >/dev/null 2>&1 ||
    die "openssl could not create the server key"
  cat >"$tmp/ext.cnf" <<'EOF'
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost
EOF
  openssl x509 -req -in "$tmp/server.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca.key" \
    -CAcreateserial -days 3650 -sha256 -extfile "$tmp/ext.cnf" \
    -out "$tmp/server.pem" >/dev/null 2>&1 ||
    die "openssl could not sign the server certificate"
  chmod 644 "$tmp"/*.pem "$tmp/server.key"
  chmod 600 "$tmp/ca.key"
  mv -f "$tmp/ca.key" "$SVC_TLS_DIR/ca.key"
  mv -f "$tmp/ca.pem" "$SVC_CA_FILE"
  mv -f "$tmp/server.key" "$SVC_KEY_FILE"
  mv -f "$tmp/server.pem" "$SVC_CERT_FILE"
  rm -rf "$tmp"
}

# elapsed_since START_EPOCH: seconds since START_EPOCH.
elapsed_since() { echo $(($(date +%s) - $1)); }
