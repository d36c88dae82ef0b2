#!/usr/bin/env bash
# make test: vet, then every Go test with a real standalone HBase started for
# the run (its ZooKeeper address goes to the tests in GATEWAY_TEST_HBASE_ZK)
# and stopped afterwards, whatever happens.
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

# graph/ and the resolver stubs are gqlgen's output: regenerate them in place
# and fail when that changed, added or removed a file (a checksum of every
# file before and after, so untracked files count too).
generated() { find graph resolvers -type f -print0 | sort -z | xargs -0 sha256sum; }
before=$(generated)
go run github.com/99designs/gqlgen generate
if ! diff <(echo "$before") <(generated) >&2; then
  echo "gqlgen generate changed graph/ or resolvers/ (above): run make generate and commit the result" >&2
  exit 1
fi

trap 'bash scripts/hbase-down.sh >&2 || true' EXIT
zk=$(HBASE_CLEAN=${HBASE_CLEAN:-1} make -s hbase-up | tail -n 1)
echo "test HBase at $zk" >&2
GATEWAY_TEST_HBASE_ZK="$zk" go test -count=1 -timeout 40m "$@" ./...
