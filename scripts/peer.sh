#!/usr/bin/env bash
# make bench BENCH=peer: the home page of the gateway on the real HBase
# against its peer, PostGraphile 4.14 over PostgreSQL 15, on the same
# machine and data, runs alternated: BENCH_RUNS pairs of one peer run (k6
# bench/k6/peer-home.js) and one gateway run (scripts/bench.sh with
# BENCH=home BENCH_STORE=hbase, the full data set). Each run: BENCH_WARMUP,
# then BENCH_DURATION measured at BENCH_VUS closed-loop virtual users; it
# reports req/s, p50, p99 and the server CPU per home page: for the peer
# all PostgreSQL processes plus Node, for the gateway the gateway and the
# HBase JVM, apart and together; after each pair, the gateway's CPU per
# page, req/s and p99 over the peer's. Results go to docs/benchmarks.md by
# hand, with the command.
#
#   BENCH=peer make bench
#   BENCH=peer BENCH_HBASE_ZK=127.0.0.1:20322 BENCH_HBASE_DIR=/work/wt-hbase/.hbase make bench
#   BENCH=peer BENCH_RUNS=0 make bench   install and load the peer only
#
# The peer, all of it under the gitignored .peer/ (and bench/peer/node_modules):
#   PostgreSQL 15 from PEER_PG_BIN (default /usr/lib/postgresql/15/bin; when its
#       initdb is missing, apt-get installs postgresql-15, without Debian's own
#       cluster); a private cluster in .peer/pgdata owned by the postgres user
#       (PostgreSQL refuses to run as root), listening on 127.0.0.1:PEER_PG_PORT
#       only (default 25432; no Unix socket), shared_buffers PEER_PG_SHARED_BUFFERS
#       (default 4GB), every other setting PostgreSQL's default except those of
#       the load (maintenance_work_mem 1GB, max_wal_size 8GB); stopped on exit
#   the data: database weibo, the tables of bench/peer/schema.sql, filled by
#       bench/peer/load (the gateway's import mapping, package dataset; the inbox
#       holds the gateway's home-timeline entries), then bench/peer/indexes.sql;
#       loaded once and again when any of those files changes (.peer/loaded)
#   PostGraphile 4.14 of bench/peer/package-lock.json (npm ci), the CLI with
#       NODE_ENV=production on 127.0.0.1:PEER_PORT (default 25480), schema public,
#       --jwt-secret (the viewer is the user_id claim of a token: home_timeline()
#       reads jwt.claims.user_id), --disable-default-mutations, no watch, no
#       GraphiQL, no query log, its default pool of 10 connections, PEER_WORKERS
#       Node processes (default 1: the CLI's default; more uses --cluster-workers);
#       started afresh for each run, as bench.sh starts the gateway
#   the readers: BENCH_USERS, by default all: every user who follows someone
#       (5,395 on the full data set; a number: that many of them, BENCH_USERS=100
#       the former hot set), in a random order of a fixed seed, each with a JWT
#       signed by bench/peer/load -readers (0: all; .data/bench/peer-users.json);
#       before the runs, bench/peer/load -check compares each one's page from the
#       peer with the data set's home timeline; with all, the gateway's runs draw
#       from the same readers (scripts/bench.sh's BENCH_USERS; a number picks
#       another set of that size there)
#
# The gateway's HBase: BENCH_HBASE_ZK names a running one (BENCH_HBASE_DIR its
# .hbase directory, whose pid files give its CPU, heap and block cache);
# without it, one is started here for all the runs with make hbase-up, heap
# HBASE_HEAP (default 6g, as the issue measures: HBase's block cache is
# hfile.block.cache.size, 0.4 of the heap, so 2.4 GB), and stopped on exit.
# When the first gateway run imports the data set into it, scripts/bench.sh
# restarts it (same heap, same ZooKeeper port, data kept) and waits until
# it has settled (compaction and flush queues empty for 10 s, at most
# BENCH_SETTLE_TIMEOUT s, default 600); into an HBase of BENCH_HBASE_ZK it
# only waits, and only when BENCH_HBASE_DIR is given.
#
# Settings (environment): BENCH_RUNS (pairs, default 3), BENCH_DURATION
# (default 30s), BENCH_WARMUP (default 10s), BENCH_VUS (default 32),
# BENCH_USERS (default all), BENCH_SETTLE_TIMEOUT (default 600), HBASE_HEAP
# (default 6g), GATEWAY_DATASETS (default ../shared/datasets),
# PEER_PG_BIN, PEER_PG_PORT, PEER_PG_SHARED_BUFFERS, PEER_PORT, PEER_WORKERS,
# PEER_JWT_SECRET.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/procs.sh

runs=${BENCH_RUNS:-3}
duration=${BENCH_DURATION:-30s}
warmup=${BENCH_WARMUP:-10s}
vus=${BENCH_VUS:-32}
nusers=${BENCH_USERS:-all}
[[ $nusers == all || $nusers =~ ^[1-9][0-9]*$ ]] || { echo "peer: BENCH_USERS=$nusers: want all or a positive number" >&2; exit 2; }
readers=$nusers # bench/peer/load -readers
[[ $nusers != all ]] || readers=0
hbase_heap=${HBASE_HEAP:-6g}
pg_bin=${PEER_PG_BIN:-/usr/lib/postgresql/15/bin}
pg_port=${PEER_PG_PORT:-25432}
shared_buffers=${PEER_PG_SHARED_BUFFERS:-4GB}
peer_port=${PEER_PORT:-25480}
workers=${PEER_WORKERS:-1}
secret=${PEER_JWT_SECRET:-peer-secret-peer-secret-peer-secret-peer}
datasets=${GATEWAY_DATASETS:-../shared/datasets}
pgdata=$PWD/.peer/pgdata
db=postgres://postgres@127.0.0.1:$pg_port/weibo
peer_url=http://127.0.0.1:$peer_port
out=.data/bench
results=$out/results.md
mkdir -p "$out" .peer

pg_pid=
node_pid=
hbase_started=
cleanup() {
	stop_peer
	if [[ -n $pg_pid ]]; then runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pgdata" -m fast -w stop >&2 || true; fi
	if [[ -n $hbase_started ]]; then bash scripts/hbase-down.sh >&2 || true; fi
}
trap cleanup EXIT

# install: PostgreSQL 15 (Debian's package, without the cluster it would
# create and start on port 5432), Node.js, PostGraphile.
install_peer() {
	if [[ ! -x $pg_bin/initdb ]]; then
		mkdir -p /etc/postgresql-common
		[[ -f /etc/postgresql-common/createcluster.conf ]] ||
			echo 'create_main_cluster = false' >/etc/postgresql-common/createcluster.conf
		apt-get update && apt-get install -y postgresql-15
	fi
	command -v npm >/dev/null || { apt-get update && apt-get install -y nodejs npm; }
	id -u postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
	if [[ ! -f bench/peer/node_modules/.package-lock.json || bench/peer/package-lock.json -nt bench/peer/node_modules/.package-lock.json ]]; then
		(cd bench/peer && npm ci --no-audit --no-fund >&2)
	fi
	make -s bin/k6 >&2
	go build -o bin/peer-load ./bench/peer/load
}

psql_db() { "$pg_bin/psql" -X -q -v ON_ERROR_STOP=1 -d "$1" "${@:2}"; }

# start_pg: the private cluster, initialized on first use.
start_pg() {
	if [[ ! -f $pgdata/PG_VERSION ]]; then
		rm -rf "$pgdata" && mkdir -p "$pgdata" && chown postgres: "$pgdata"
		runuser -u postgres -- "$pg_bin/initdb" -D "$pgdata" -U postgres --auth=trust -E UTF8 --locale=C >&2
	fi
	runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pgdata" -l "$pgdata/server.log" -w -t 120 start \
		-o "-c listen_addresses=127.0.0.1 -c port=$pg_port -c unix_socket_directories='' -c shared_buffers=$shared_buffers -c maintenance_work_mem=1GB -c max_wal_size=8GB" >&2
	pg_pid=$(head -n 1 "$pgdata/postmaster.pid")
}

# load: the data set into database weibo, unless loaded by the same files.
load() {
	local sum
	sum=$(cat bench/peer/schema.sql bench/peer/indexes.sql bench/peer/load/main.go dataset/*.go | sha256sum | cut -c1-16)
	[[ $(cat .peer/loaded 2>/dev/null) == "$sum" ]] && return 0
	rm -f .peer/loaded
	echo "peer: loading the data set into PostgreSQL" >&2
	psql_db "postgres://postgres@127.0.0.1:$pg_port/postgres" -c 'drop database if exists weibo' -c 'create database weibo'
	psql_db "$db" -f bench/peer/schema.sql
	/usr/bin/time -f "peer: COPY took %e s" ./bin/peer-load -db "$db" -psql "$pg_bin/psql" \
		-edges "$datasets/higgs_social_network_prefix355k.edgelist.gz" \
		-posts "$datasets/weibo_covid19_posts_2020-03-01_to_2020-03-20.csv.gz" >&2
	local t0=$SECONDS
	psql_db "$db" -f bench/peer/indexes.sql >&2
	echo "peer: indexes, keys and vacuum took $((SECONDS - t0)) s" >&2
	echo "$sum" >.peer/loaded
}

start_peer() {
	local extra=()
	((workers <= 1)) || extra=(--cluster-workers "$workers")
	NODE_ENV=production node bench/peer/node_modules/postgraphile/cli.js -c "$db" --schema public \
		--host 127.0.0.1 --port "$peer_port" --jwt-secret "$secret" \
		--disable-default-mutations --disable-graphiql --disable-query-log "${extra[@]}" \
		>"$out/peer.log" 2>&1 &
	node_pid=$!
	wait_ready "$node_pid" "$out/peer.log" "peer: PostGraphile" \
		curl -sf "$peer_url/graphql" -H 'Content-Type: application/json' -d '{"query":"{__typename}"}'
}

stop_peer() {
	stop_pid "$node_pid"
	node_pid=
}

# tree_ticks PID: user + system clock ticks of PID and its descendants,
# with the children it has reaped (PostgreSQL's exited backends).
tree_ticks() {
	local pids
	pids=$(ps -e -o pid=,ppid= | awk -v r="$1" '{ p[$1] = $2 } END { for (x in p) { y = x; while (y != r && (y in p) && y > 1) y = p[y]; if (y == r) print x } }')
	# shellcheck disable=SC2086 # one path per pid
	for p in $pids; do [[ -r /proc/$p/stat ]] && sed 's/.*) //' "/proc/$p/stat"; done 2>/dev/null |
		awk -v r="$1" '{ t += $12 + $13 } END { print t + 0 }'
	sed 's/.*) //' "/proc/$1/stat" | awk '{ print $14 + $15 }'
}
ticks() { tree_ticks "$1" | awk '{ t += $1 } END { print t }'; }

# run_peer N: one measured run of the peer.
run_peer() {
	local sum=$out/peer-home-$1.txt pg0 pg1 n0 n1 rate med p95 p99 n
	stop_peer
	start_peer
	VUS=$vus DURATION=$warmup GATEWAY_URL=$peer_url USERS_FILE="$PWD/$out/peer-users.json" \
		./bin/k6 run --quiet --no-usage-report bench/k6/peer-home.js >/dev/null
	sleep 1
	pg0=$(ticks "$pg_pid") n0=$(ticks "$node_pid")
	VUS=$vus DURATION=$duration GATEWAY_URL=$peer_url USERS_FILE="$PWD/$out/peer-users.json" SUMMARY_FILE="$PWD/$sum" \
		./bin/k6 run --quiet --no-usage-report bench/k6/peer-home.js >&2
	sleep 2 # as bench.sh waits after a run
	pg1=$(ticks "$pg_pid") n1=$(ticks "$node_pid")
	stop_peer
	read -r _ rate med p95 p99 n <"$sum"
	awk -v d="$(date -u +%FT%TZ)" -v k="$1" -v r="$rate" -v med="$med" -v p99="$p99" -v n="$n" -v hz="$(getconf CLK_TCK)" \
		-v pg="$((pg1 - pg0))" -v nd="$((n1 - n0))" -v la="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
		ms = n ? 1000 / hz / n : 0
		printf "| %s | %d | peer | %.0f | %.1f | %.1f | %.2f | PostgreSQL %.2f | Node %.2f | %s |\n", d, k, r, med, p99, (pg + nd) * ms, pg * ms, nd * ms, la }' |
		tee -a "$results" | tee "$out/row-peer.txt"
}

# run_gateway N: one measured run of the gateway on HBase (scripts/bench.sh).
run_gateway() {
	local row
	row=$(BENCH=home BENCH_STORE=hbase BENCH_RUNS=1 BENCH_HBASE_ZK=$zk BENCH_HBASE_DIR=$hbase_dir \
		BENCH_HBASE_RESTART=$hbase_started HBASE_HEAP=$hbase_heap BENCH_DURATION=$duration BENCH_WARMUP=$warmup BENCH_VUS=$vus BENCH_USERS=$nusers bash scripts/bench.sh |
		grep '^| [0-9-]* | hbase | home |' | tail -n 1)
	[[ -n $row ]] || { echo "peer: the gateway run gave no result" >&2; return 1; }
	# bench.sh's row: date store script VUs req/s p50 p95 p99 gateway-ms HBase-ms RSS load
	awk -F' *[|] *' -v d="$(date -u +%FT%TZ)" -v k="$1" '{
		hb = ($11 == "-") ? "-" : sprintf("%.2f", $10 + $11)
		printf "| %s | %d | gateway+HBase | %.0f | %.1f | %.1f | %s | gateway %.2f | HBase %s | %s |\n", d, k, $6, $7, $9, hb, $10, $11, $13 }' <<<"$row" |
		tee -a "$results" | tee "$out/row-gateway-hbase.txt"
}

# pair_ratio N: after pair N, the gateway's CPU per page, req/s and p99 over
# the peer's (the rows run_peer and run_gateway wrote).
pair_ratio() {
	awk -F' *[|] *' -v k="$1" 'FNR == 1 { g = FILENAME ~ /gateway/; r[g] = $5; p[g] = $7; c[g] = $8 }
		END { printf "| pair %d | gateway+HBase / peer | CPU per page %.2fx | req/s %.2fx | p99 %.2fx |\n", k, c[1] / c[0], r[1] / r[0], p[1] / p[0] }' \
		"$out/row-peer.txt" "$out/row-gateway-hbase.txt" | tee -a "$results"
}

# hbase_settings: the heap (-Xmx of its JVM) and block cache of the
# standalone HBase (hbase.pid).
hbase_settings() {
	local pid xmx frac
	pid=$(cat "$hbase_dir/hbase.pid" 2>/dev/null || true)
	xmx=$(tr '\0' '\n' 2>/dev/null <"/proc/${pid:-0}/cmdline" | sed -n 's/^-Xmx//p' | tail -n 1 || true)
	frac=$(grep -A1 '<name>hfile.block.cache.size</name>' "$hbase_dir/conf/hbase-site.xml" 2>/dev/null | sed -n 's/.*<value>\(.*\)<\/value>.*/\1/p') || true
	awk -v x="${xmx:-}" -v f="${frac:-0.4}" 'BEGIN {
		m = x + 0; u = tolower(substr(x, length(x)))
		m *= (u == "g") ? 1024 : (u == "m") ? 1 : (u == "k") ? 1 / 1024 : 1 / 1048576
		if (x == "") printf "HBase heap unknown, block cache %s of it (hfile.block.cache.size)", f
		else printf "HBase heap %s, block cache %s of it (hfile.block.cache.size): %.1f GB", x, f, m * f / 1024 }'
	echo
}

install_peer
start_pg
load
./bin/peer-load -users "$out/peer-users.json" -secret "$secret" -readers "$readers" \
	-edges "$datasets/higgs_social_network_prefix355k.edgelist.gz" \
	-posts "$datasets/weibo_covid19_posts_2020-03-01_to_2020-03-20.csv.gz" 2>/dev/null
# Every reader's page as the data set has it: the same pages as the gateway's.
start_peer
./bin/peer-load -check "$peer_url/graphql" -users "$out/peer-users.json" \
	-edges "$datasets/higgs_social_network_prefix355k.edgelist.gz" \
	-posts "$datasets/weibo_covid19_posts_2020-03-01_to_2020-03-20.csv.gz"
stop_peer
((runs > 0)) || exit 0

zk=${BENCH_HBASE_ZK:-}
hbase_dir=${BENCH_HBASE_DIR:-$PWD/.hbase}
if [[ -z $zk ]]; then
	hbase_started=1
	zk=$(HBASE_HEAP=$hbase_heap HBASE_CLEAN=${HBASE_CLEAN:-0} make -s hbase-up | tail -n 1)
	hbase_dir=$PWD/.hbase
fi

printf '\npeer: PostgreSQL %s shared_buffers %s, PostGraphile %s (Node processes: %s, pool 10); %s; %s VUs, %s after %s warm-up; readers %s (BENCH_USERS=%s)\n' \
	"$("$pg_bin/postgres" --version | awk '{print $3}')" "$shared_buffers" \
	"$(node -p "require('./bench/peer/node_modules/postgraphile/package.json').version")" "$workers" \
	"$(hbase_settings)" "$vus" "$duration" "$warmup" "$(grep -o '"token":' "$out/peer-users.json" | wc -l)" "$nusers" | tee -a "$results"
printf '| date | pair | server | req/s | p50 ms | p99 ms | server CPU ms/page | | | load avg |\n|---|---|---|---|---|---|---|---|---|---|\n' | tee -a "$results"
for k in $(seq "$runs"); do
	run_peer "$k"
	run_gateway "$k"
	pair_ratio "$k"
done
echo "peer: rows appended to $results" >&2
