#!/usr/bin/env bash
# Single-node Apache Kafka (KRaft: broker and controller in one JVM) for
# engram's tests.
#
#   kafka.sh start   fetch the jars (cached), write the config, format, start, wait
#   kafka.sh stop    stop the broker started by this script
#   kafka.sh env     print the export lines the tests read
#   kafka.sh status  exit 0 if a Kafka broker answers on the port
#
# The jars come from Maven Central: org.apache.kafka:kafka_2.13 with its
# runtime dependencies, copied into one folder by maven-dependency-plugin
# from a throw-away POM, plus log4j-slf4j-impl (the POM carries no SLF4J
# binding: without one the broker logs nothing). The folder is cached in
# $KAFKA_CACHE_DIR (~/.cache/engram/kafka-VERSION), the downloads in the
# local Maven repository, so a second run fetches nothing.
# The broker listens on 127.0.0.1:$KAFKA_PORT (9092, PLAINTEXT), its
# controller on 127.0.0.1:$KAFKA_CONTROLLER_PORT (9093); topics are never
# auto-created. Two more listeners of the same broker, for the client's
# security tests: SASL_PLAINTEXT on $KAFKA_SASL_PORT (9094: PLAIN,
# SCRAM-SHA-256, SCRAM-SHA-512, user $KAFKA_SASL_USER) and SSL with
# client certificates required on $KAFKA_TLS_PORT (9095: the shared test CA
# in $ENGRAM_SERVICES_DIR/tls, a client certificate signed by it).
set -euo pipefail
SVC_NAME=kafka
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

KAFKA_VERSION="${KAFKA_VERSION:-4.1.2}"
KAFKA_SCALA="${KAFKA_SCALA:-2.13}"
# Must equal the log4j-core version kafka_2.13 pulls in (checked after the fetch).
KAFKA_LOG4J_VERSION="${KAFKA_LOG4J_VERSION:-2.25.3}"
KAFKA_PORT="${KAFKA_PORT:-9092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
KAFKA_SASL_PORT="${KAFKA_SASL_PORT:-9094}"
KAFKA_TLS_PORT="${KAFKA_TLS_PORT:-9095}"
KAFKA_SASL_USER="${KAFKA_SASL_USER:-engram}"
KAFKA_SASL_PASSWORD="${KAFKA_SASL_PASSWORD:-engram-test-password}"
KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xms512m -Xmx512m}"
# C1 only: the broker starts in about half the time, which is what tests
# want; it then spends more CPU per message than with the full JIT a real
# deployment runs. KAFKA_JIT_OPTS= (empty) gives the JVM's default, for
# benchmarks that measure the broker beside engram.
KAFKA_JIT_OPTS="${KAFKA_JIT_OPTS--XX:TieredStopAtLevel=1}"
KAFKA_START_TIMEOUT="${KAFKA_START_TIMEOUT:-120}"
KAFKA_DIR="$ENGRAM_SERVICES_DIR/kafka"
KAFKA_CACHE_DIR="${KAFKA_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/engram/kafka-$KAFKA_VERSION}"
KAFKA_LIBS="$KAFKA_CACHE_DIR/libs"
KAFKA_PIDFILE="$KAFKA_DIR/kafka.pid"
KAFKA_LOG="$KAFKA_DIR/logs/kafka.log"
KAFKA_PROPS="$KAFKA_DIR/server.properties"
KAFKA_CLIENT_CERT="$SVC_TLS_DIR/kafka-client.pem"
KAFKA_CLIENT_KEY="$SVC_TLS_DIR/kafka-client.key"
M2_REPO="${MAVEN_REPO_LOCAL:-${HOME:-/root}/.m2/repository}"

pick_java_home() {
  local j
  if [[ -n "${KAFKA_JAVA_HOME:-}" ]]; then echo "$KAFKA_JAVA_HOME"; return; fi
  for j in /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/java-17-openjdk-*; do
    [[ -x "$j/bin/java" ]] && { echo "$j"; return; }
  done
  [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]] && { echo "$JAVA_HOME"; return; }
  command -v java >/dev/null && { dirname "$(dirname "$(readlink -f "$(command -v java)")")"; return; }
  die "no Java 17+ found (apt-get install openjdk-17-jre-headless)"
}

libs_marker() { echo "kafka_$KAFKA_SCALA=$KAFKA_VERSION log4j-slf4j-impl=$KAFKA_LOG4J_VERSION layout=1"; }

# ensure_libs: one mvn copy-dependencies run into the cache, unless the
# cache already holds this exact set (its marker is written last).
ensure_libs() {
  if [[ -f "$KAFKA_CACHE_DIR/.engram-libs" && "$(cat "$KAFKA_CACHE_DIR/.engram-libs")" == "$(libs_marker)" ]] &&
    compgen -G "$KAFKA_LIBS/kafka_$KAFKA_SCALA-$KAFKA_VERSION.jar" >/dev/null; then
    log "jars already in $KAFKA_LIBS"
    return 0
  fi
  command -v mvn >/dev/null || die "mvn is not on PATH (apt-get install maven)"
  mkdir -p "$KAFKA_CACHE_DIR"
  local t0 tmp flog="$KAFKA_DIR/fetch.log"
  t0=$(date +%s)
  tmp="$(mktemp -d "$KAFKA_CACHE_DIR/fetch.XXXXXX")"
  cat >"$tmp/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>engram.ci</groupId><artifactId>kafka-fetch</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_$KAFKA_SCALA</artifactId><version>$KAFKA_VERSION</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>$KAFKA_LOG4J_VERSION</version></dependency>
  </dependencies>
</project>
EOF
  log "fetching Kafka $KAFKA_VERSION and its runtime dependencies (Maven repo $M2_REPO)"
  if ! mvn -B -q -Dmaven.repo.local="$M2_REPO" -f "$tmp/pom.xml" \
    org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$tmp/libs" >"$flog" 2>&1; then
    rm -rf "$tmp"
    die "mvn could not fetch org.apache.kafka:kafka_$KAFKA_SCALA:$KAFKA_VERSION (is the version on Maven Central?)" "$flog"
  fi
  local core
  core="$(cd "$tmp/libs" && ls log4j-core-*.jar 2>/dev/null | sed 's/^log4j-core-//; s/\.jar$//')"
  if [[ -n "$core" && "$core" != "$KAFKA_LOG4J_VERSION" ]]; then
    rm -rf "$tmp"
    die "Kafka $KAFKA_VERSION pulls in log4j-core $core but the binding is $KAFKA_LOG4J_VERSION: set KAFKA_LOG4J_VERSION=$core"
  fi
  [[ -s "$tmp/libs/kafka_$KAFKA_SCALA-$KAFKA_VERSION.jar" ]] || die "mvn finished but kafka_$KAFKA_SCALA-$KAFKA_VERSION.jar is missing" "$flog"
  rm -rf "$KAFKA_LIBS"
  mv "$tmp/libs" "$KAFKA_LIBS"
  rm -rf "$tmp"
  libs_marker >"$KAFKA_CACHE_DIR/.engram-libs"
  log "fetched $(find "$KAFKA_LIBS" -name '*.jar' | wc -l) jars ($(du -sh "$KAFKA_LIBS" | cut -f1)) in $(elapsed_since "$t0")s"
}

# ensure_client_cert: a client certificate signed by the shared test CA,
# for the mutual-TLS listener. Made once per CA.
ensure_client_cert() {
  ensure_tls
  if [[ -s "$KAFKA_CLIENT_CERT" && -s "$KAFKA_CLIENT_KEY" ]] &&
    openssl verify -CAfile "$SVC_CA_FILE" "$KAFKA_CLIENT_CERT" >/dev/null 2>&1; then
    return 0
  fi
  [[ -s "$SVC_TLS_DIR/ca.key" ]] || die "no CA key in $SVC_TLS_DIR to sign the Kafka client certificate"
  log "generating the Kafka client certificate in $SVC_TLS_DIR"
  local tmp
  tmp="$(mktemp -d "$SVC_TLS_DIR/kgen.XXXXXX")"
  openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=engram-kafka-client" \
    -keyout "$tmp/client.key" -out "$tmp/client.csr" >/dev/null 2>&1 ||
    die "openssl could not create the Kafka client key"
  printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' >"$tmp/ext.cnf"
  openssl x509 -req -in "$tmp/client.csr" -CA "$SVC_CA_FILE" -CAkey "$SVC_TLS_DIR/ca.key" \
    -CAcreateserial -CAserial "$tmp/ca.srl" -days 3650 -sha256 -extfile "$tmp/ext.cnf" \
    -out "$tmp/client.pem" >/dev/null 2>&1 || die "openssl could not sign the Kafka client certificate"
  chmod 644 "$tmp/client.pem" "$tmp/client.key"
  mv -f "$tmp/client.key" "$KAFKA_CLIENT_KEY"
  mv -f "$tmp/client.pem" "$KAFKA_CLIENT_CERT"
  rm -rf "$tmp"
}

write_config() {
  mkdir -p "$KAFKA_DIR/logs"
  # Kafka's PEM key store: the (PKCS#8, unencrypted) key and the certificate
  # in one file.
  cat "$SVC_KEY_FILE" "$SVC_CERT_FILE" >"$KAFKA_DIR/server-keystore.pem"
  chmod 600 "$KAFKA_DIR/server-keystore.pem"
  cat >"$KAFKA_PROPS" <<EOF
# Written by .ci/services/kafka.sh; overwritten on every start.
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT,SASL_PLAINTEXT://127.0.0.1:$KAFKA_SASL_PORT,SSL://127.0.0.1:$KAFKA_TLS_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT,SASL_PLAINTEXT://127.0.0.1:$KAFKA_SASL_PORT,SSL://127.0.0.1:$KAFKA_TLS_PORT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
# SASL listener: PLAIN users from the JAAS line, SCRAM users from the
# metadata log (added by the format step).
listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$KAFKA_SASL_USER="$KAFKA_SASL_PASSWORD";
listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
# TLS listener: certificate from the shared test CA, client certificates required.
listener.name.ssl.ssl.keystore.type=PEM
listener.name.ssl.ssl.keystore.location=$KAFKA_DIR/server-keystore.pem
listener.name.ssl.ssl.truststore.type=PEM
listener.name.ssl.ssl.truststore.location=$SVC_CA_FILE
listener.name.ssl.ssl.client.auth=required
log.dirs=$KAFKA_DIR/data
# Like production: a topic that was not created is an error, never a surprise.
auto.create.topics.enable=false
delete.topic.enable=true
num.partitions=1
# One node: without replication factor 1 for the internal topics consumer
# groups never work.
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
# A first group join at once, not after 3 s.
group.initial.rebalance.delay.ms=0
# After a kill -9 the old registration must expire before the new broker is
# ready: 4 s instead of 9 s.
broker.heartbeat.interval.ms=1000
broker.session.timeout.ms=4000
EOF
  # XML: log4j-core parses it with the JDK alone (Kafka's own config/log4j2.yaml
  # needs jackson-dataformat-yaml, which kafka_2.13 happens to pull in too).
  cat >"$KAFKA_DIR/log4j2.xml" <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="WARN">
  <Appenders>
    <Console name="STDOUT" target="SYSTEM_OUT"><PatternLayout pattern="[%d] %p %m (%c)%n"/></Console>
  </Appenders>
  <Loggers>
    <Logger name="kafka.request.logger" level="WARN"/>
    <Logger name="state.change.logger" level="WARN"/>
    <Logger name="org.apache.kafka.storage.internals.log" level="WARN"/>
    <Root level="INFO"><AppenderRef ref="STDOUT"/></Root>
  </Loggers>
</Configuration>
EOF
}

# format_storage: a fresh start gets an empty cluster (tests create their own
# topics), formatted as a new single-node KRaft quorum. KAFKA_KEEP_DATA=1
# keeps the data (formatting then only happens when there is none).
format_storage() {
  local java="$1"
  if [[ "${KAFKA_KEEP_DATA:-0}" != 1 ]]; then rm -rf "$KAFKA_DIR/data"; fi
  [[ -f "$KAFKA_DIR/data/meta.properties" ]] && return 0
  local id
  # 16 random bytes, URL-safe base64 without padding: a KRaft cluster id.
  # One that starts with "-" is taken by the tool's parser for an option
  # ("argument --cluster-id: expected one argument"): draw again.
  id=-
  while [[ "$id" == -* ]]; do
    id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
  done
  if ! "$java" -Xmx256m -XX:TieredStopAtLevel=1 -Dlog4j2.configurationFile="$KAFKA_DIR/log4j2.xml" \
    -cp "$KAFKA_LIBS/*" kafka.tools.StorageTool format --standalone -t "$id" -c "$KAFKA_PROPS" \
    --add-scram "SCRAM-SHA-256=[name=$KAFKA_SASL_USER,password=$KAFKA_SASL_PASSWORD]" \
    --add-scram "SCRAM-SHA-512=[name=$KAFKA_SASL_USER,password=$KAFKA_SASL_PASSWORD]" \
    >"$KAFKA_DIR/logs/format.log" 2>&1; then
    die "kafka-storage format failed" "$KAFKA_DIR/logs/format.log"
  fi
}

# kafka_ok: something on the port answers a Kafka ApiVersions v0 request with
# our correlation id (so another server on the port is not taken for ours).
kafka_ok() {
  local out
  out="$(timeout 3 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    # size 16 | api_key 18 ApiVersions | version 0 | correlation id "ENGR" | client id "engram"
    printf "\x00\x00\x00\x10\x00\x12\x00\x00ENGR\x00\x06engram" >&3
    head -c 8 <&3' _ "$KAFKA_PORT" 2>/dev/null | tail -c 4)" || return 1
  [[ "$out" == ENGR ]]
}

cmd_start() {
  local t0
  t0=$(date +%s)
  mkdir -p "$KAFKA_DIR/logs"
  if kafka_ok; then
    log "already answering on 127.0.0.1:$KAFKA_PORT, reusing it"
    port_open 127.0.0.1 "$KAFKA_SASL_PORT" && port_open 127.0.0.1 "$KAFKA_TLS_PORT" ||
      log "WARNING: no SASL/TLS listeners on $KAFKA_SASL_PORT/$KAFKA_TLS_PORT (an older broker?): their tests skip; $0 stop && $0 start to get them"
    return 0
  fi
  if pid_alive "$KAFKA_PIDFILE" "$KAFKA_DIR"; then
    log "our broker (pid $(cat "$KAFKA_PIDFILE")) is running but not answering yet; waiting"
  else
    local p
    for p in "$KAFKA_PORT" "$KAFKA_CONTROLLER_PORT" "$KAFKA_SASL_PORT" "$KAFKA_TLS_PORT"; do
      port_open 127.0.0.1 "$p" && die "port $p is taken by something that is not our Kafka broker; stop it or set KAFKA_PORT/KAFKA_CONTROLLER_PORT/KAFKA_SASL_PORT/KAFKA_TLS_PORT"
    done
    ensure_libs
    ensure_client_cert
    local java_home
    java_home="$(pick_java_home)"
    write_config
    format_storage "$java_home/bin/java"
    log "starting Kafka $KAFKA_VERSION (Java: $java_home) on 127.0.0.1:$KAFKA_PORT, controller $KAFKA_CONTROLLER_PORT, SASL $KAFKA_SASL_PORT, TLS $KAFKA_TLS_PORT"
    : >"$KAFKA_LOG"
    # setsid: own session, so the caller's shell ending does not take it
    # down; exec, so $! is the JVM's pid.
    # shellcheck disable=SC2086
    (cd "$KAFKA_DIR" && exec setsid "$java_home/bin/java" $KAFKA_HEAP_OPTS $KAFKA_JIT_OPTS \
      -XX:-HeapDumpOnOutOfMemoryError -Djava.awt.headless=true \
      -Dlog4j2.configurationFile="$KAFKA_DIR/log4j2.xml" \
      -cp "$KAFKA_LIBS/*" kafka.Kafka "$KAFKA_PROPS" </dev/null >>"$KAFKA_LOG" 2>&1) &
    echo $! >"$KAFKA_PIDFILE"
  fi
  local i
  # The broker opens its port only once it is ready.
  for ((i = 0; i < KAFKA_START_TIMEOUT * 5; i++)); do
    if kafka_ok; then
      log "up in $(elapsed_since "$t0")s (pid $(cat "$KAFKA_PIDFILE"))"
      return 0
    fi
    started_alive "$KAFKA_PIDFILE" || die "Kafka exited during start-up" "$KAFKA_LOG"
    sleep 0.2
  done
  die "Kafka not answering on port $KAFKA_PORT after ${KAFKA_START_TIMEOUT}s (still running as pid $(cat "$KAFKA_PIDFILE"); stop it with $0 stop)" "$KAFKA_LOG"
}

cmd_stop() {
  stop_pidfile "$KAFKA_PIDFILE" "$KAFKA_DIR" 30
  log "stopped"
}

# cmd_env: the SASL and TLS lines only while those listeners are open (a
# broker started by an older version of this script has none).
cmd_env() {
  echo "export ENGRAM_TEST_KAFKA_BROKERS=127.0.0.1:$KAFKA_PORT"
  if port_open 127.0.0.1 "$KAFKA_SASL_PORT"; then
    cat <<EOF
export ENGRAM_TEST_KAFKA_SASL_BROKERS=127.0.0.1:$KAFKA_SASL_PORT
export ENGRAM_TEST_KAFKA_SASL_USERNAME=$KAFKA_SASL_USER
export ENGRAM_TEST_KAFKA_SASL_PASSWORD=$KAFKA_SASL_PASSWORD
EOF
  fi
  if port_open 127.0.0.1 "$KAFKA_TLS_PORT" && [[ -s "$KAFKA_CLIENT_CERT" ]]; then
    cat <<EOF
export ENGRAM_TEST_KAFKA_TLS_BROKERS=127.0.0.1:$KAFKA_TLS_PORT
export ENGRAM_TEST_KAFKA_CA_FILE=$SVC_CA_FILE
export ENGRAM_TEST_KAFKA_CLIENT_CERT_FILE=$KAFKA_CLIENT_CERT
export ENGRAM_TEST_KAFKA_CLIENT_KEY_FILE=$KAFKA_CLIENT_KEY
EOF
  fi
}

cmd_status() { kafka_ok; }

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
