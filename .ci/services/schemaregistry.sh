#!/usr/bin/env bash
# Apicurio Registry (Apache-2.0, Java/Quarkus) for engram's Avro tests: a
# real schema registry with a Confluent-compatible API.
#
#   schemaregistry.sh start   fetch the distribution (cached), start it, wait
#   schemaregistry.sh stop    stop the registry started by this script
#   schemaregistry.sh env     print the export lines the tests read
#   schemaregistry.sh status  exit 0 if the registry answers
#
# The distribution is the Quarkus fast-jar Apicurio publishes on Maven
# Central as io.apicurio:apicurio-registry-app:VERSION:tar.gz:all (about
# 160 MB; quarkus-run.jar with its lib/ folder), fetched by
# maven-dependency-plugin into the local Maven repository and unpacked into
# $SCHEMA_REGISTRY_CACHE_DIR (~/.cache/engram/apicurio-registry-VERSION), so
# a second run fetches nothing. 3.x needs Java 21 or later: the Temurin 25
# JDK under /usr/lib/jvm (or $SCHEMA_REGISTRY_JAVA_HOME).
# Storage is the in-memory H2 database: every start is an empty registry.
# It listens on 127.0.0.1:$SCHEMA_REGISTRY_PORT (8085, http) and
# $SCHEMA_REGISTRY_TLS_PORT (8087, https with the shared test CA's server
# certificate); the Confluent Schema Registry API is under /apis/ccompat/v7. It needs nothing else (not
# the Kafka broker), so up.sh starts it beside the others.
# Measured here: fetch 14 s, unpack 1.5 s, ready 7-8 s after the JVM
# starts (RSS ~260 MB).
set -euo pipefail
SVC_NAME=schema-registry
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

APICURIO_VERSION="${APICURIO_VERSION:-3.3.3}"
SCHEMA_REGISTRY_PORT="${SCHEMA_REGISTRY_PORT:-8085}"
# Quarkus's management interface (health, metrics) cannot be turned off at
# run time: it listens here, on loopback, instead of 0.0.0.0:9000.
SCHEMA_REGISTRY_MGMT_PORT="${SCHEMA_REGISTRY_MGMT_PORT:-8086}"
SCHEMA_REGISTRY_TLS_PORT="${SCHEMA_REGISTRY_TLS_PORT:-8087}"
SCHEMA_REGISTRY_HEAP_OPTS="${SCHEMA_REGISTRY_HEAP_OPTS:--Xms64m -Xmx384m}"
# C1 only: about half the start-up time; plenty for tests.
SCHEMA_REGISTRY_JIT_OPTS="${SCHEMA_REGISTRY_JIT_OPTS--XX:TieredStopAtLevel=1}"
SCHEMA_REGISTRY_START_TIMEOUT="${SCHEMA_REGISTRY_START_TIMEOUT:-120}"
SR_DIR="$ENGRAM_SERVICES_DIR/schema-registry"
SCHEMA_REGISTRY_CACHE_DIR="${SCHEMA_REGISTRY_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/engram/apicurio-registry-$APICURIO_VERSION}"
SR_APP="$SCHEMA_REGISTRY_CACHE_DIR/app"
SR_PIDFILE="$SR_DIR/registry.pid"
SR_LOG="$SR_DIR/registry.log"
SR_API="/apis/ccompat/v7"
M2_REPO="${MAVEN_REPO_LOCAL:-${HOME:-/root}/.m2/repository}"

# java_major JAVA: the major version of that java binary.
java_major() {
  "$1" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2; exit}' | cut -d. -f1
}

# pick_java: a java binary of version 21 or later.
pick_java() {
  local j
  if [[ -n "${SCHEMA_REGISTRY_JAVA_HOME:-}" ]]; then echo "$SCHEMA_REGISTRY_JAVA_HOME/bin/java"; return; fi
  for j in /usr/lib/jvm/temurin-*-jdk* /usr/lib/jvm/java-2[1-9]-openjdk* /usr/lib/jvm/*; do
    [[ -x "$j/bin/java" ]] || continue
    local v
    v="$(java_major "$j/bin/java")"
    [[ "$v" =~ ^[0-9]+$ && "$v" -ge 21 ]] && { echo "$j/bin/java"; return; }
  done
  if command -v java >/dev/null; then
    local v
    v="$(java_major java)"
    [[ "$v" =~ ^[0-9]+$ && "$v" -ge 21 ]] && { command -v java; return; }
  fi
  die "Apicurio Registry $APICURIO_VERSION needs Java 21 or later: none under /usr/lib/jvm (apt-get install openjdk-21-jre-headless, or set SCHEMA_REGISTRY_JAVA_HOME)"
}

# ensure_app: one mvn copy of the distribution, unpacked into the cache,
# unless the cache already holds this version (its marker is written last).
ensure_app() {
  local marker="apicurio-registry-app=$APICURIO_VERSION layout=1"
  if [[ -f "$SCHEMA_REGISTRY_CACHE_DIR/.engram-app" && "$(cat "$SCHEMA_REGISTRY_CACHE_DIR/.engram-app")" == "$marker" && -s "$SR_APP/quarkus-run.jar" ]]; then
    log "distribution already in $SR_APP"
    return 0
  fi
  command -v mvn >/dev/null || die "mvn is not on PATH (apt-get install maven)"
  mkdir -p "$SCHEMA_REGISTRY_CACHE_DIR" "$SR_DIR"
  local t0 tmp flog="$SR_DIR/fetch.log"
  t0=$(date +%s)
  tmp="$(mktemp -d "$SCHEMA_REGISTRY_CACHE_DIR/fetch.XXXXXX")"
  log "fetching io.apicurio:apicurio-registry-app:$APICURIO_VERSION:tar.gz:all (Maven repo $M2_REPO)"
  if ! mvn -B -q -Dmaven.repo.local="$M2_REPO" \
    org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
    -Dartifact="io.apicurio:apicurio-registry-app:$APICURIO_VERSION:tar.gz:all" \
    -DoutputDirectory="$tmp" >"$flog" 2>&1; then
    rm -rf "$tmp"
    die "mvn could not fetch io.apicurio:apicurio-registry-app:$APICURIO_VERSION:tar.gz:all (is the version on Maven Central?)" "$flog"
  fi
  mkdir -p "$tmp/app"
  tar -xzf "$tmp/apicurio-registry-app-$APICURIO_VERSION-all.tar.gz" -C "$tmp/app" ||
    { rm -rf "$tmp"; die "could not unpack the Apicurio Registry distribution"; }
  [[ -s "$tmp/app/quarkus-run.jar" ]] || { rm -rf "$tmp"; die "the distribution holds no quarkus-run.jar"; }
  rm -rf "$SR_APP"
  mv "$tmp/app" "$SR_APP"
  rm -rf "$tmp"
  echo "$marker" >"$SCHEMA_REGISTRY_CACHE_DIR/.engram-app"
  log "fetched and unpacked ($(du -sh "$SR_APP" | cut -f1)) in $(elapsed_since "$t0")s"
}

# registry_ok: the Confluent API answers GET /subjects with a JSON array.
registry_ok() {
  local out
  if command -v curl >/dev/null; then
    out="$(curl -fsS -m 2 "http://127.0.0.1:$SCHEMA_REGISTRY_PORT$SR_API/subjects" 2>/dev/null)" || return 1
  else
    out="$(timeout 3 bash -c '
      exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
      printf "GET %s/subjects HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" "$2" >&3
      cat <&3' _ "$SCHEMA_REGISTRY_PORT" "$SR_API" 2>/dev/null | tail -n 1)" || return 1
  fi
  [[ "$out" == \[* ]]
}

cmd_start() {
  local t0
  t0=$(date +%s)
  mkdir -p "$SR_DIR"
  if registry_ok; then
    log "already answering on 127.0.0.1:$SCHEMA_REGISTRY_PORT, reusing it"
    return 0
  fi
  if pid_alive "$SR_PIDFILE" quarkus-run.jar; then
    log "our registry (pid $(cat "$SR_PIDFILE")) is running but not answering yet; waiting"
  else
    local p
    for p in "$SCHEMA_REGISTRY_PORT" "$SCHEMA_REGISTRY_MGMT_PORT" "$SCHEMA_REGISTRY_TLS_PORT"; do
      port_open 127.0.0.1 "$p" &&
        die "port $p is taken by something that is not our schema registry; stop it or set SCHEMA_REGISTRY_PORT/SCHEMA_REGISTRY_MGMT_PORT/SCHEMA_REGISTRY_TLS_PORT"
    done
    ensure_app
    ensure_tls
    local java
    java="$(pick_java)"
    log "starting Apicurio Registry $APICURIO_VERSION (Java: $java) on http://127.0.0.1:$SCHEMA_REGISTRY_PORT$SR_API"
    : >"$SR_LOG"
    # setsid: its own session; exec: $! is the JVM's pid.
    # shellcheck disable=SC2086
    (cd "$SR_DIR" && exec setsid "$java" $SCHEMA_REGISTRY_HEAP_OPTS $SCHEMA_REGISTRY_JIT_OPTS \
      -XX:-HeapDumpOnOutOfMemoryError -Djava.awt.headless=true \
      -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$SCHEMA_REGISTRY_PORT" \
      -Dquarkus.management.host=127.0.0.1 -Dquarkus.management.port="$SCHEMA_REGISTRY_MGMT_PORT" \
      -Dquarkus.http.ssl-port="$SCHEMA_REGISTRY_TLS_PORT" \
      -Dquarkus.http.ssl.certificate.files="$SVC_CERT_FILE" \
      -Dquarkus.http.ssl.certificate.key-files="$SVC_KEY_FILE" \
      -jar "$SR_APP/quarkus-run.jar" </dev/null >>"$SR_LOG" 2>&1) &
    echo $! >"$SR_PIDFILE"
  fi
  local i
  for ((i = 0; i < SCHEMA_REGISTRY_START_TIMEOUT * 5; i++)); do
    if registry_ok; then
      log "up in $(elapsed_since "$t0")s (pid $(cat "$SR_PIDFILE"))"
      return 0
    fi
    started_alive "$SR_PIDFILE" || die "the schema registry exited during start-up" "$SR_LOG"
    sleep 0.2
  done
  die "the schema registry is not answering on port $SCHEMA_REGISTRY_PORT after ${SCHEMA_REGISTRY_START_TIMEOUT}s (still running as pid $(cat "$SR_PIDFILE"); stop it with $0 stop)" "$SR_LOG"
}

cmd_stop() {
  stop_pidfile "$SR_PIDFILE" quarkus-run.jar 20
  log "stopped"
}

# cmd_env: the TLS lines only while that port is open (a registry started
# by an older version of this script has none).
cmd_env() {
  echo "export ENGRAM_TEST_SCHEMA_REGISTRY_URL=http://127.0.0.1:$SCHEMA_REGISTRY_PORT$SR_API"
  if port_open 127.0.0.1 "$SCHEMA_REGISTRY_TLS_PORT"; then
    echo "export ENGRAM_TEST_SCHEMA_REGISTRY_TLS_URL=https://127.0.0.1:$SCHEMA_REGISTRY_TLS_PORT$SR_API"
    echo "export ENGRAM_TEST_SCHEMA_REGISTRY_CA_FILE=$SVC_CA_FILE"
  fi
}

cmd_status() { registry_ok; }

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
