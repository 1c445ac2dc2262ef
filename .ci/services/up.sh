#!/usr/bin/env bash
# Start every test service and write their variables to .ci/services/.env:
#
#   bash .ci/services/up.sh && source .ci/services/.env
#
# S3 (versitygw), OpenSearch, Kafka, Jaeger and the schema registry
# (Apicurio) start in parallel; the
# TLS/basic-auth proxy in front of OpenSearch starts after it, and its
# failure only warns. Exits 1 if versitygw, OpenSearch, Kafka, Jaeger or
# the schema registry could not be started (the .env
# then still holds the variables of the services that did start).
set -euo pipefail
SVC_NAME=up
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
source "$HERE/common.sh"
ENV_FILE="${ENGRAM_SERVICES_ENV_FILE:-$HERE/.env}"

t0=$(date +%s)
# The CA is shared by versitygw and the proxy: make it once, before both.
ensure_tls

bash "$HERE/versitygw.sh" start &
vgw_pid=$!
bash "$HERE/opensearch.sh" start &
os_pid=$!
bash "$HERE/kafka.sh" start &
kafka_pid=$!
bash "$HERE/jaeger.sh" start &
jaeger_pid=$!
bash "$HERE/schemaregistry.sh" start &
sr_pid=$!

vgw_rc=0; wait "$vgw_pid" || vgw_rc=$?
os_rc=0; wait "$os_pid" || os_rc=$?
kafka_rc=0; wait "$kafka_pid" || kafka_rc=$?
jaeger_rc=0; wait "$jaeger_pid" || jaeger_rc=$?
sr_rc=0; wait "$sr_pid" || sr_rc=$?

proxy_rc=1
if [[ $os_rc == 0 ]]; then
  proxy_rc=0
  bash "$HERE/tlsproxy.sh" start || proxy_rc=$?
  [[ $proxy_rc == 0 ]] || log "WARNING: the TLS proxy for OpenSearch did not start; its tests will skip"
fi

tmp="$(mktemp "$HERE/.env.XXXXXX")"
{
  echo "# Written by .ci/services/up.sh at $(date -u +%Y-%m-%dT%H:%M:%SZ); source it."
  [[ $vgw_rc == 0 ]] && bash "$HERE/versitygw.sh" env
  [[ $os_rc == 0 ]] && bash "$HERE/opensearch.sh" env
  [[ $proxy_rc == 0 ]] && bash "$HERE/tlsproxy.sh" env
  [[ $kafka_rc == 0 ]] && bash "$HERE/kafka.sh" env
  [[ $jaeger_rc == 0 ]] && bash "$HERE/jaeger.sh" env
  [[ $sr_rc == 0 ]] && bash "$HERE/schemaregistry.sh" env
  true
} >"$tmp"
chmod 644 "$tmp"
mv -f "$tmp" "$ENV_FILE"

log "versitygw: $([[ $vgw_rc == 0 ]] && echo up || echo FAILED)," \
  "opensearch: $([[ $os_rc == 0 ]] && echo up || echo FAILED)," \
  "tls proxy: $([[ $proxy_rc == 0 ]] && echo up || echo FAILED)," \
  "kafka: $([[ $kafka_rc == 0 ]] && echo up || echo FAILED)," \
  "jaeger: $([[ $jaeger_rc == 0 ]] && echo up || echo FAILED)," \
  "schema registry: $([[ $sr_rc == 0 ]] && echo up || echo FAILED)" \
  "- $(elapsed_since "$t0")s; variables in $ENV_FILE"
[[ $vgw_rc == 0 && $os_rc == 0 && $kafka_rc == 0 && $jaeger_rc == 0 && $sr_rc == 0 ]]
