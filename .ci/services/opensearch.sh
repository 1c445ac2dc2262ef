#!/usr/bin/env bash
# Single-node OpenSearch with the k-NN plugin, for engram's tests.
#
#   opensearch.sh start   fetch (cached), assemble, start, wait, verify k-NN
#   opensearch.sh stop    stop the node started by this script
#   opensearch.sh env     print the export lines the tests read
#   opensearch.sh status  exit 0 if the node answers with health yellow/green
#
# Everything comes from Maven Central through mvn (cached in the local Maven
# repository, so a re-run fetches nothing):
#   - org.opensearch.distribution.integ-test-zip:opensearch:$OS_VERSION:zip
#     (the minimal distribution: server + transport-netty4 module only)
#   - org.opensearch.plugin:opensearch-knn:$OS_VERSION.0:zip
#   - the lang-painless module, which the k-NN plugin extends, assembled from
#     its published jars (modules are not published as zips), plus the
#     analysis-common and mapper-extras modules (common analyzers, scaled_float,
#     rank_feature, ...), so the node is close to a regular distribution.
# The assembled node lives in $ENGRAM_SERVICES_DIR/opensearch/home and is
# reused while its marker matches. It runs as the unprivileged user
# $OS_USER (OpenSearch refuses to run as root), on 127.0.0.1:$OS_PORT.
set -euo pipefail
SVC_NAME=opensearch
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

OS_VERSION="${OS_VERSION:-2.19.1}"
KNN_VERSION="${KNN_VERSION:-$OS_VERSION.0}"
OS_PORT="${OS_PORT:-9200}"
OS_TRANSPORT_PORT="${OS_TRANSPORT_PORT:-9300}"
OS_USER="${OS_USER:-engram-os}"
OS_HEAP_OPTS="${OS_HEAP_OPTS:--Xms512m -Xmx1g}"
OS_START_TIMEOUT="${OS_START_TIMEOUT:-240}"
OS_DIR="$ENGRAM_SERVICES_DIR/opensearch"
OS_HOME="$OS_DIR/home"
OS_LOG="$OS_DIR/logs/opensearch-stdout.log"
OS_SERVER_LOG="$OS_DIR/logs/engram-test.log"
OS_PIDFILE="$OS_DIR/opensearch.pid"
OS_STATE="$OS_DIR/state.env"
OS_URL="http://127.0.0.1:$OS_PORT"
M2_REPO="${MAVEN_REPO_LOCAL:-${HOME:-/root}/.m2/repository}"

# Dependencies of the lang-painless module per OpenSearch version (from its
# published POM). Another OS_VERSION needs its own line here.
painless_deps() {
  case "$1" in
    2.19.*) echo "org.antlr:antlr4-runtime:4.13.1 org.ow2.asm:asm:9.7 org.ow2.asm:asm-util:9.7 org.ow2.asm:asm-tree:9.7 org.ow2.asm:asm-commons:9.7 org.ow2.asm:asm-analysis:9.7" ;;
    *) die "no lang-painless dependency list for OpenSearch $1 in $0 (read it from org.opensearch.plugin:lang-painless:$1 POM)" ;;
  esac
}

pick_java_home() {
  local major="${OS_VERSION%%.*}" j
  if [[ -n "${OS_JAVA_HOME:-}" ]]; then echo "$OS_JAVA_HOME"; return; fi
  if ((major >= 3)); then
    # 3.x needs Java 21+: the Temurin JDK under /usr/lib/jvm.
    for j in /usr/lib/jvm/temurin-*; do [[ -x "$j/bin/java" ]] && { echo "$j"; return; }; done
    die "OpenSearch $OS_VERSION needs Java 21+, none found under /usr/lib/jvm"
  fi
  for j in /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/java-17-openjdk-*; do
    [[ -x "$j/bin/java" ]] && { echo "$j"; return; }
  done
  [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]] && { echo "$JAVA_HOME"; return; }
  command -v java >/dev/null && { dirname "$(dirname "$(readlink -f "$(command -v java)")")"; return; }
  die "no Java 17 found"
}

# repo_path G:A:V[:TYPE] -> path of that artifact in the local Maven repo.
repo_path() {
  local g a v t
  IFS=: read -r g a v t <<<"$1"
  echo "$M2_REPO/${g//.//}/$a/$v/$a-$v.${t:-jar}"
}

all_artifacts() {
  echo "org.opensearch.distribution.integ-test-zip:opensearch:$OS_VERSION:zip"
  echo "org.opensearch.plugin:opensearch-knn:$KNN_VERSION:zip"
  echo "org.opensearch.plugin:lang-painless:$OS_VERSION:jar"
  echo "org.opensearch.plugin:opensearch-scripting-painless-spi:$OS_VERSION:jar"
  echo "org.opensearch.plugin:analysis-common:$OS_VERSION:jar"
  echo "org.opensearch.plugin:mapper-extras-client:$OS_VERSION:jar"
  local d
  for d in $(painless_deps "$OS_VERSION"); do echo "$d:jar"; done
}

# fetch_artifacts: one mvn run for whatever is not in the local repo yet.
fetch_artifacts() {
  local missing=() art
  while read -r art; do
    [[ -s "$(repo_path "$art")" ]] || missing+=("$art")
  done < <(all_artifacts)
  if ((${#missing[@]} == 0)); then
    log "all artifacts already in $M2_REPO"
    return 0
  fi
  command -v mvn >/dev/null || die "mvn is not on PATH (apt-get install maven)"
  local t0 pom="$OS_DIR/fetch-pom.xml" flog="$OS_DIR/fetch.log" deps="" g a v t
  t0=$(date +%s)
  log "fetching ${#missing[@]} artifact(s) from Maven Central: ${missing[*]}"
  for art in "${missing[@]}"; do
    IFS=: read -r g a v t <<<"$art"
    deps+="<dependency><groupId>$g</groupId><artifactId>$a</artifactId><version>$v</version><type>$t</type>"
    deps+="<exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion></exclusions></dependency>"
  done
  cat >"$pom" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>engram.ci</groupId><artifactId>opensearch-fetch</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>$deps</dependencies>
</project>
EOF
  if ! mvn -B -q -Dmaven.repo.local="$M2_REPO" -f "$pom" dependency:resolve >"$flog" 2>&1; then
    die "mvn could not fetch the OpenSearch artifacts (is version $OS_VERSION / k-NN $KNN_VERSION on Maven Central?)" "$flog"
  fi
  for art in "${missing[@]}"; do
    [[ -s "$(repo_path "$art")" ]] || die "mvn finished but $(repo_path "$art") is missing" "$flog"
  done
  log "fetched in $(elapsed_since "$t0")s"
}

# add_module NAME CLASSNAME EXTENDED_PLUGINS POLICY JAR...: lay out a module
# directory the way the full distribution has it.
add_module() {
  local name="$1" classname="$2" extended="$3" policy="$4"
  shift 4
  local dir="$OS_HOME/modules/$name" jar
  mkdir -p "$dir"
  for jar in "$@"; do cp "$jar" "$dir/"; done
  cat >"$dir/plugin-descriptor.properties" <<EOF
description=$name module (assembled by engram .ci from Maven Central jars)
version=$OS_VERSION
name=$name
classname=$classname
java.version=11
opensearch.version=$OS_VERSION
extended.plugins=$extended
has.native.controller=false
EOF
  if [[ -n "$policy" ]]; then printf '%s\n' "$policy" >"$dir/plugin-security.policy"; fi
}

install_marker() { echo "opensearch=$OS_VERSION knn=$KNN_VERSION modules=lang-painless,analysis-common,mapper-extras layout=1"; }

# ensure_install: unpack + assemble the node unless an identical one exists.
ensure_install() {
  if [[ -f "$OS_HOME/.engram-install" && "$(cat "$OS_HOME/.engram-install")" == "$(install_marker)" ]]; then
    return 0
  fi
  local t0 tmp d jars=()
  t0=$(date +%s)
  log "assembling OpenSearch $OS_VERSION + k-NN $KNN_VERSION in $OS_HOME"
  rm -rf "$OS_HOME"
  tmp="$(mktemp -d "$OS_DIR/unpack.XXXXXX")"
  unzip -q "$(repo_path "org.opensearch.distribution.integ-test-zip:opensearch:$OS_VERSION:zip")" -d "$tmp" ||
    die "could not unzip the OpenSearch distribution"
  mv "$tmp/opensearch-$OS_VERSION" "$OS_HOME"
  rm -rf "$tmp"

  jars=("$(repo_path "org.opensearch.plugin:lang-painless:$OS_VERSION")"
    "$(repo_path "org.opensearch.plugin:opensearch-scripting-painless-spi:$OS_VERSION")")
  for d in $(painless_deps "$OS_VERSION"); do jars+=("$(repo_path "$d")"); done
  local painless_class
  painless_class="$(unzip -Z1 "${jars[0]}" | grep -E '^org/opensearch/painless/Painless(Module)?Plugin\.class$' | head -1)"
  [[ -n "$painless_class" ]] || die "no Painless plugin class in ${jars[0]}"
  painless_class="${painless_class%.class}"
  add_module lang-painless "${painless_class//\//.}" "" \
    'grant {
  permission java.lang.RuntimePermission "createClassLoader";
  permission java.lang.RuntimePermission "getClassLoader";
};' "${jars[@]}"

  local ac_jar ac_class me_jar me_class
  ac_jar="$(repo_path "org.opensearch.plugin:analysis-common:$OS_VERSION")"
  ac_class="$(unzip -Z1 "$ac_jar" | grep -E '^org/opensearch/analysis/common/CommonAnalysis(Module)?Plugin\.class$' | head -1)"
  ac_class="${ac_class%.class}"
  add_module analysis-common "${ac_class//\//.}" lang-painless "" "$ac_jar"
  me_jar="$(repo_path "org.opensearch.plugin:mapper-extras-client:$OS_VERSION")"
  me_class="$(unzip -Z1 "$me_jar" | grep -E '^org/opensearch/index/mapper/MapperExtras(Module)?Plugin\.class$' | head -1)"
  me_class="${me_class%.class}"
  add_module mapper-extras "${me_class//\//.}" "" "" "$me_jar"

  mkdir -p "$OS_HOME/plugins/opensearch-knn"
  unzip -q "$(repo_path "org.opensearch.plugin:opensearch-knn:$KNN_VERSION:zip")" -d "$OS_HOME/plugins/opensearch-knn" ||
    die "could not unzip the k-NN plugin"
  install_marker >"$OS_HOME/.engram-install"
  log "assembled in $(elapsed_since "$t0")s"
}

ensure_user() {
  id -u "$OS_USER" >/dev/null 2>&1 && return 0
  log "creating unprivileged user $OS_USER"
  useradd --system --no-create-home --home-dir "$OS_DIR" --shell /usr/sbin/nologin "$OS_USER" ||
    die "could not create user $OS_USER"
}

write_config() {
  # A fresh start gets an empty cluster (tests create their own indices).
  # This also keeps a node that died from a bad index (e.g. a faiss index,
  # whose native library is missing: see verify_knn) from dying again while
  # it replays that index. OS_KEEP_DATA=1 keeps the data.
  if [[ "${OS_KEEP_DATA:-0}" != 1 ]]; then rm -rf "$OS_DIR/data"; fi
  mkdir -p "$OS_DIR/data" "$OS_DIR/logs"
  cat >"$OS_HOME/config/opensearch.yml" <<EOF
# Written by .ci/services/opensearch.sh; overwritten on every start.
cluster.name: engram-test
node.name: engram-test-node
path.data: $OS_DIR/data
path.logs: $OS_DIR/logs
network.host: 127.0.0.1
http.port: $OS_PORT
transport.port: $OS_TRANSPORT_PORT
discovery.type: single-node
# A small CI disk must not flip indices to read-only.
cluster.routing.allocation.disk.threshold_enabled: false
EOF
  chown -R "$OS_USER:$OS_USER" "$OS_HOME" "$OS_DIR/data" "$OS_DIR/logs"
}

health_status() {
  curl -s --max-time 5 "$OS_URL/_cluster/health" 2>/dev/null |
    grep -o '"status":"[a-z]*"' | cut -d'"' -f4
}

healthy() {
  local s
  s="$(health_status)" || return 1
  [[ "$s" == green || "$s" == yellow ]]
}

# os_req METHOD PATH [BODY]: prints the body, then a last line with the code.
os_req() {
  local args=(-s --max-time 30 -X "$1" -w '\n%{http_code}' "$OS_URL$2")
  [[ $# -ge 3 ]] && args+=(-H 'Content-Type: application/json' -d "$3")
  curl "${args[@]}" 2>/dev/null || echo "000"
}

# check_knn ENGINE: create a knn_vector index with ENGINE, index two docs,
# expect the nearest one back from a knn query, delete the index.
check_knn() {
  local engine="$1" idx out code
  idx="engram-ci-knn-check-$engine-$$"
  os_req DELETE "/$idx" >/dev/null
  out="$(os_req PUT "/$idx" '{"settings":{"index.knn":true,"number_of_shards":1,"number_of_replicas":0},"mappings":{"properties":{"v":{"type":"knn_vector","dimension":3,"method":{"name":"hnsw","engine":"'"$engine"'","space_type":"l2"}}}}}')"
  code="${out##*$'\n'}"
  if [[ "$code" != 200 ]]; then
    echo "create index: HTTP $code ${out%$'\n'*}" >"$OS_DIR/knn-$engine.err"
    os_req DELETE "/$idx" >/dev/null
    return 1
  fi
  os_req PUT "/$idx/_doc/near" '{"v":[1.0,1.0,1.0]}' >/dev/null
  out="$(os_req PUT "/$idx/_doc/far?refresh=true" '{"v":[9.0,9.0,9.0]}')"
  code="${out##*$'\n'}"
  if [[ "$code" != 201 && "$code" != 200 ]]; then
    echo "index doc: HTTP $code ${out%$'\n'*}" >"$OS_DIR/knn-$engine.err"
    os_req DELETE "/$idx" >/dev/null
    return 1
  fi
  out="$(os_req POST "/$idx/_search" '{"size":1,"query":{"knn":{"v":{"vector":[1.1,0.9,1.0],"k":1}}}}')"
  code="${out##*$'\n'}"
  os_req DELETE "/$idx" >/dev/null
  if [[ "$code" != 200 ]] || ! grep -q '"_id":"near"' <<<"$out"; then
    echo "knn query: HTTP $code ${out%$'\n'*}" >"$OS_DIR/knn-$engine.err"
    return 1
  fi
  rm -f "$OS_DIR/knn-$engine.err"
  return 0
}

# verify_knn: record what works in $OS_STATE for `env`.
verify_knn() {
  local plugins knn=0 lucene=0 faiss=0
  plugins="$(curl -s --max-time 5 "$OS_URL/_cat/plugins?h=component" || true)"
  if grep -qx 'opensearch-knn' <<<"$plugins"; then
    knn=1
    if check_knn lucene; then lucene=1; else log "k-NN lucene engine check FAILED: $(cat "$OS_DIR/knn-lucene.err")"; fi
    # faiss/nmslib need the plugin's JNI libraries, which the Maven Central
    # zip does not ship; only try faiss when they are present, since loading
    # a missing native library can take the node down.
    if compgen -G "$OS_HOME/plugins/opensearch-knn/lib*/libopensearchknn_faiss*.so" >/dev/null ||
      compgen -G "$OS_HOME/plugins/opensearch-knn/*/libopensearchknn_faiss*.so" >/dev/null; then
      if check_knn faiss; then faiss=1; else log "k-NN faiss engine check failed: $(cat "$OS_DIR/knn-faiss.err")"; fi
    fi
  else
    log "WARNING: the k-NN plugin is not loaded on $OS_URL (plugins: ${plugins:-none})"
  fi
  printf 'KNN_PLUGIN=%s\nKNN_LUCENE=%s\nKNN_FAISS=%s\n' "$knn" "$lucene" "$faiss" >"$OS_STATE"
  log "k-NN plugin loaded=$knn lucene=$lucene faiss=$faiss"
  [[ "$knn" == 0 || "$lucene" == 1 ]] || die "k-NN plugin loaded but a lucene knn_vector index does not work" "$OS_SERVER_LOG"
}

cmd_start() {
  local t0
  t0=$(date +%s)
  mkdir -p "$OS_DIR"
  if healthy; then
    log "already running on $OS_URL (health $(health_status)), reusing it"
    verify_knn
    return 0
  fi
  if pid_alive "$OS_PIDFILE" "$OS_HOME"; then
    local running_port
    running_port="$(cat "$OS_DIR/opensearch.port" 2>/dev/null || true)"
    if [[ -n "$running_port" && "$running_port" != "$OS_PORT" ]]; then
      die "our node in $OS_DIR already runs on port $running_port; stop it first ($0 stop with OS_PORT=$running_port) or use another ENGRAM_SERVICES_DIR"
    fi
    # Ours, still starting or wedged: give it the usual time.
    log "our node (pid $(cat "$OS_PIDFILE")) is up but not healthy yet; waiting"
  else
    if port_open 127.0.0.1 "$OS_PORT"; then
      die "port $OS_PORT is taken by something that is not a healthy OpenSearch; stop it or set OS_PORT"
    fi
    fetch_artifacts
    ensure_install
    ensure_user
    write_config
    local java_home
    java_home="$(pick_java_home)"
    log "starting OpenSearch $OS_VERSION (Java: $java_home) as $OS_USER on $OS_URL"
    : >"$OS_LOG"
    chown "$OS_USER:$OS_USER" "$OS_LOG"
    # setsid + setpriv exec straight into bin/opensearch, which execs java:
    # $! is the JVM's pid.
    (cd "$OS_HOME" && exec setsid setpriv --reuid="$OS_USER" --regid="$OS_USER" --init-groups \
      env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$OS_DIR" LANG=C.UTF-8 \
      OPENSEARCH_JAVA_HOME="$java_home" \
      OPENSEARCH_PATH_CONF="$OS_HOME/config" \
      OPENSEARCH_JAVA_OPTS="$OS_HEAP_OPTS -XX:-HeapDumpOnOutOfMemoryError" \
      "$OS_HOME/bin/opensearch" </dev/null >>"$OS_LOG" 2>&1) &
    echo $! >"$OS_PIDFILE"
    echo "$OS_PORT" >"$OS_DIR/opensearch.port"
  fi
  local i
  for ((i = 0; i < OS_START_TIMEOUT; i++)); do
    if healthy; then
      log "healthy ($(health_status)) after $(elapsed_since "$t0")s"
      verify_knn
      log "up in $(elapsed_since "$t0")s"
      return 0
    fi
    pid_alive "$OS_PIDFILE" || die "OpenSearch exited during start-up" "$OS_LOG" "$OS_SERVER_LOG"
    sleep 1
  done
  die "OpenSearch not healthy after ${OS_START_TIMEOUT}s (still running as pid $(cat "$OS_PIDFILE"); stop it with $0 stop)" "$OS_LOG" "$OS_SERVER_LOG"
}

cmd_stop() {
  stop_pidfile "$OS_PIDFILE" "$OS_HOME" 60
  log "stopped"
}

cmd_env() {
  echo "export ENGRAM_TEST_OPENSEARCH_URL=$OS_URL"
  local KNN_PLUGIN=0 KNN_LUCENE=0 KNN_FAISS=0
  # shellcheck disable=SC1090
  [[ -f "$OS_STATE" ]] && source "$OS_STATE"
  if [[ "$KNN_PLUGIN" == 1 && "$KNN_LUCENE" == 1 ]]; then
    echo "export ENGRAM_TEST_OPENSEARCH_KNN=1"
  fi
  if [[ "$KNN_FAISS" == 1 ]]; then
    echo "export ENGRAM_TEST_OPENSEARCH_KNN_FAISS=1"
  fi
}

cmd_status() { healthy; }

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
