#!/usr/bin/env bash
# make bench: the Go benchmarks on both backends, with a real standalone HBase
# started for the run. Results go to docs/benchmarks.md by hand, with the command.
set -euo pipefail
cd "$(dirname "$0")/.."
trap 'bash scripts/hbase-down.sh >&2 || true' EXIT
zk=$(HBASE_CLEAN=${HBASE_CLEAN:-1} make -s hbase-up | tail -n 1)
GATEWAY_TEST_HBASE_ZK="$zk" go test -run '^$' -bench "${BENCH:-.}" -benchtime "${BENCHTIME:-2s}" ./hbase/... ./server/ ./seed/ ./cmd/gateway/
