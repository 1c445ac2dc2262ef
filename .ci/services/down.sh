#!/usr/bin/env bash
# Stop every test service started by up.sh (only the processes these scripts
# started, through their pid files) and remove .ci/services/.env.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rc=0
bash "$HERE/kafka.sh" stop || rc=1
bash "$HERE/tlsproxy.sh" stop || rc=1
bash "$HERE/opensearch.sh" stop || rc=1
bash "$HERE/versitygw.sh" stop || rc=1
bash "$HERE/jaeger.sh" stop || rc=1
bash "$HERE/schemaregistry.sh" stop || rc=1
rm -f "${ENGRAM_SERVICES_ENV_FILE:-$HERE/.env}"
exit $rc
