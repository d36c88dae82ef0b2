#!/usr/bin/env bash
# The schema evolution guard (docs/schema-changes.md): compares the schema
# of the last release, schema/releases/v<X.Y.Z>.graphqls (the highest
# version committed there), with the current one (`gateway schema`) using
# graphql-inspector diff, pinned in scripts/schema-check/package-lock.json
# (installed with npm ci into scripts/schema-check/node_modules when
# missing or stale). It fails on a breaking change unless the element
# changed or removed was marked @deprecated(reason: "...") in the release
# file (scripts/schema-check/deprecated-with-reason.js).
#
#   scripts/schema-check.sh                 last release vs the current schema
#   scripts/schema-check.sh OLD [NEW]       these SDL files instead
#
# Exit status: 0 without breaking changes, 1 with some, 2 on a usage error.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$root/scripts/schema-check

old=${1:-}
if [ -z "$old" ]; then
  old=$(ls "$root"/schema/releases/v*.graphqls 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$old" ]; then
    echo "schema-check: no release schema in schema/releases/" >&2
    exit 2
  fi
fi
new=${2:-}
if [ -z "$new" ]; then
  new=$(mktemp --suffix .graphqls)
  trap 'rm -f "$new"' EXIT
  (cd "$root" && go run ./cmd/gateway schema) >"$new"
fi
for f in "$old" "$new"; do
  if [ ! -s "$f" ]; then
    echo "schema-check: $f: no such schema" >&2
    exit 2
  fi
done

# The pinned differ: reinstalled whenever package-lock.json changed since
# the last npm ci here (the stamp holds its checksum).
stamp=$dir/node_modules/.package-lock.sha256
want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
if [ ! -x "$dir/node_modules/.bin/graphql-inspector" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
  echo "$want" >"$stamp"
fi

echo "schema-check: $(basename "$old") -> ${2:-the current schema}" >&2
# --rule last: it takes several values.
exec "$dir/node_modules/.bin/graphql-inspector" diff "$old" "$new" --rule "$dir/deprecated-with-reason.js"
