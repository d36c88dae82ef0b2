#!/usr/bin/env bash
# make test: vet, the generated code and the embedded JavaScript bundles
# checked against their sources, the schema against the last release's
# (scripts/schema-check.sh), then every Go test with a real standalone
# HBase started for the run (its ZooKeeper address goes to the tests in
# GATEWAY_TEST_HBASE_ZK) and stopped afterwards, whatever happens; then the
# cluster fault tests (TestCluster…) on a local cluster of three region
# servers started for them (GATEWAY_TEST_HBASE_CLUSTER_ZK), with a data
# directory of its own, also stopped whatever happens.
# GATEWAY_TEST_SKIP_CLUSTER=1 leaves the cluster tests out (never in CI).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/deps.sh
go build ./...
go vet ./...
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change: $unformatted" >&2
  exit 1
fi

# graph/ and the resolver stubs are generated (make generate: gqlgen, then
# internal/generate's list-marshalling and field-execution steps): regenerate them in place
# and fail when that changed, added or removed a file (a checksum of every
# file before and after, so untracked files count too).
generated() { find graph resolvers -type f -print0 | sort -z | xargs -0 sha256sum; }
before=$(generated)
go run ./internal/generate
if ! diff <(echo "$before") <(generated) >&2; then
  echo "make generate changed graph/ or resolvers/ (above): run make generate and commit the result" >&2
  exit 1
fi

# The JavaScript the binary embeds (GraphiQL at /, the admin console at
# /admin) must be what the pinned sources make: rebuild both bundles from
# their package-lock.json (make graphiql, make admin-console) and fail when
# that changed, added or removed a file of the committed dist/ folders.
for web in server/graphiql/_web server/admin/_web; do
  (cd "$web" && npm ci --no-audit --no-fund >&2 && npm run build >&2)
done
bundles=$(git status --porcelain server/graphiql/dist server/admin/dist)
if [ -n "$bundles" ]; then
  echo "$bundles" >&2
  echo "rebuilding the GraphiQL or admin console bundle changed the committed files (above): run make graphiql / make admin-console and commit dist/" >&2
  exit 1
fi

# The schema evolution guard: the current schema breaks nothing of the last
# release's (schema/releases/) unless the release deprecated the element
# with a reason (docs/schema-changes.md); its own tests run with the Go
# tests (scripts/schema-check).
bash scripts/schema-check.sh >&2

trap 'bash scripts/hbase-down.sh >&2 || true' EXIT
# The tests of several packages run at once, each in namespaces of its own
# whose every table is pre-split: hundreds of regions, each store's
# memstore taking a 2 MB MSLAB chunk once written, so 1 GB of heap runs
# out.
export HBASE_HEAP=${HBASE_HEAP:-3g}
zk=$(HBASE_CLEAN=${HBASE_CLEAN:-1} make -s hbase-up | tail -n 1)
echo "test HBase at $zk" >&2
t0=$SECONDS
# The admin console's Chromium test runs on its own afterwards: its drags
# depend on the page's timing, which the other packages' tests, running in
# parallel on the two cores, disturb.
GATEWAY_TEST_HBASE_ZK="$zk" go test -count=1 -timeout 40m -skip '^TestCluster' "$@" $(go list ./... | grep -v '/server/admin$')
GATEWAY_TEST_HBASE_ZK="$zk" go test -count=1 -timeout 10m "$@" ./server/admin
echo "tests on the standalone HBase: $((SECONDS - t0))s" >&2
bash scripts/hbase-down.sh >&2

if [[ ${GATEWAY_TEST_SKIP_CLUSTER:-} == 1 && ${CI:-} != true ]]; then
  echo "GATEWAY_TEST_SKIP_CLUSTER=1: cluster fault tests left out" >&2
  exit 0
fi
# The cluster fault tests stop and start this cluster themselves (hbase-down,
# hbase-up on the same port and data directory).
t0=$SECONDS
export HBASE_REGIONSERVERS=3 HBASE_DATA_DIR="$PWD/.hbase/test-cluster-data" HBASE_RS_HEAP=${HBASE_RS_HEAP:-1g}
czk=$(HBASE_CLEAN=1 make -s hbase-up | tail -n 1)
echo "test cluster (3 region servers) at $czk, up after $((SECONDS - t0))s" >&2
GATEWAY_TEST_HBASE_CLUSTER_ZK="$czk" go test -count=1 -timeout 15m -run '^TestCluster' -v ./hbase/remote/ |
  grep -E '^(=== RUN|--- |\s+--- |PASS|FAIL|ok)|cluster[a-z_]*_test.go' >&2
make -s hbase-up >/dev/null # restarts the region server that test killed
GATEWAY_TEST_HBASE_CLUSTER_ZK="$czk" go test -count=1 -timeout 25m -run '^TestCluster' -v ./cmd/gateway/ |
  grep -E '^(=== RUN|--- |\s+--- |PASS|FAIL|ok)|cluster[a-z_]*_test.go' >&2
echo "cluster fault tests: $((SECONDS - t0))s" >&2
