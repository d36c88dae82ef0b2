#!/usr/bin/env bash
# make bench: the k6 load tests (bench/k6/*.js) against the real
# binary serving the full data set, on the embedded store and on the real
# HBase; or, when BENCH names no k6 script, the Go benchmarks (as before).
# Results go to docs/benchmarks.md by hand, with the command.
#
#   make bench                          every k6 script, both stores
#   BENCH=home make bench               one script (home home-actions posts like comment
#                                       publish delete follow subscription)
#   BENCH="home posts" BENCH_STORE=embedded make bench
#   BENCH=GraphQL make bench            Go benchmarks matching GraphQL (go test -bench), both backends
#   BENCH=FanoutThroughput BENCHTIME=5x make bench   the fan-out benchmarks (weibo), both backends
#   BENCH=idle-subs make bench          live events: BENCH_SUBS idle subscriptions on one gateway,
#                                       its store calls a second and RSS per subscription
#   BENCH=push-latency BENCH_STORE=hbase make bench   live events: publish -> delivery latency,
#                                       the fans of a ~500-fan author on 2 gateways sharing the bus
#   BENCH=peer make bench               the home page against PostGraphile over PostgreSQL,
#                                       runs alternated (scripts/peer.sh)
#   BENCH=floor make bench              the home page against its floor: bench/floor, a bare
#                                       handler making the same store calls and writing the
#                                       same bytes; runs alternated floor, gateway, with the
#                                       ratio of their CPU per page after each pair
#   BENCH=media make bench              pictures: thumbnails served by the gateway against
#                                       nginx serving the same bytes from files, and uploads of
#                                       12-megapixel JPEGs (scripts/bench-media.sh)
#
# The live-event benchmarks use the Go load client bench/live (built to bin/live):
#   idle-subs     a fresh gateway per query of BENCH_LIVE_QUERY ("events updates notifications":
#                 homeTimelineEvents, homeTimelineUpdates, notificationAdded); BENCH_SUBS (default 10000) users of
#                 the edge list, lowest ids first, subscribe; after 10 s of settling, the store
#                 calls (gateway_store_calls_total) and VmRSS over BENCH_IDLE_WINDOW (default 60s)
#   push-latency  needs a store two processes share (hbase; skipped on embedded): gateway 1
#                 listens for the bus on port+3 (--nats-listen), gateway 2 (port+2) connects to it
#                 (--nats-url); the author with the fewest fans at or above BENCH_FANS (default 500)
#                 publishes BENCH_PUBLISH_RATE posts/s (default 2) for BENCH_DURATION, after
#                 BENCH_WARMUP, alternately through each gateway; each of its first BENCH_FANS fans
#                 holds homeTimelineEvents on each gateway (2 x BENCH_FANS subscriptions)
#
# Settings (environment):
#   BENCH_STORE     embedded, hbase or "embedded hbase" (default)
#   BENCH_DURATION  measured run per script (default 30s), after BENCH_WARMUP (default 10s)
#   BENCH_VUS       k6 virtual users, closed loop (default 32)
#   BENCH_RUNS      measured runs per script (default 1; the docs give medians of 3)
#   BENCH_USERS     the readers: all (default), every user of the edge list who follows
#                   someone (A of a line "A B", A != B: 5,395 on the full data set), in a
#                   random order of a fixed seed; or a number, that many of them (the
#                   first of that order: BENCH_USERS=100 is the former hot set). Their
#                   tokens are minted with the gateway's secret by bin/bench-users
#                   (bench/users), not obtained by logging in
#   BENCH_DAY       HBase only: import just this day's posts (YYYY-MM-DD; all users and
#                   follows), in a namespace of its own, instead of the full data set (~70 s)
#   BENCH_SCALE     the data set made this many times larger (gateway seed --scale, default 1):
#                   imported into .data/bench-full-xN and the namespace bench_full_xN (N > 1)
#   BENCH_NAMESPACE HBase only: the namespace to read (imported when its users are
#                   missing) instead of bench_full or bench_day_YYYYMMDD
#   BENCH_HBASE_ZK  use this running HBase (e.g. $(cat /work/plan/hbase.zk)) instead of
#                   starting (and stopping) one with make hbase-up
#   BENCH_HBASE_RESTART  1: the HBase of BENCH_HBASE_ZK is the one make hbase-up started
#                   from this tree (scripts/peer.sh sets it for the HBase it starts):
#                   restarted after an import as one started here
#   BENCH_SETTLE_TIMEOUT  seconds to wait, at most, for HBase to settle after an import
#                   (default 600; see below)
#   BENCH_PPROF     a file: take a 20 s CPU profile of the gateway during each measured run
#                   (FILE.<store>.<script>.pprof; needs go tool pprof to read)
#   BENCH_GATEWAY   a prebuilt gateway binary to measure instead of building bin/gateway from
#                   the working tree (to alternate two builds: without it every run rebuilds
#                   bin/gateway, so copying another binary there measures the tree's build)
#   BENCH_PORT      the gateway's port (default 18480; port+1 its pprof, port+2 and
#                   port+3 push-latency's second gateway and bus); a port something
#                   already serves fails the run
#   GATEWAY_DATASETS  directory of the data set files (default ../shared/datasets)
#
# HBase CPU ms/req is the CPU time of the HBase JVMs make hbase-up started
# from this tree (.hbase/*.pid; BENCH_HBASE_DIR names the .hbase directory
# of another tree that started the HBase of BENCH_HBASE_ZK) over the
# measured run, per request ("-" on the embedded store, or for an HBase
# started elsewhere).
#
# The embedded store is imported once into .data/bench-full and reused
# (rm -rf it to import again); the HBase namespace bench_full (or
# bench_day_YYYYMMDD) is imported when its users are missing. After an
# import into an HBase started here (or BENCH_HBASE_RESTART=1), that HBase
# is restarted with the same settings and its data (scripts/procs.sh
# hbase_restart); after any import into HBase the benchmark waits until it
# has settled: its RegionServers' compaction and flush queues empty for
# 10 s in a row (hbase_settle; for an HBase started elsewhere only when
# BENCH_HBASE_DIR names its .hbase directory). BENCH=floor starts its HBase
# with HBASE_HEAP 6g unless set, as peer.sh does. The results header says
# how many readers the run draws from. like,
# comment, publish, delete and follow write to the store (like, delete and
# follow undo what they do; comment and publish add comments and posts):
# they run after the reads.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/procs.sh
[[ ${BENCH:-} != peer ]] || exec bash scripts/peer.sh
[[ ${BENCH:-} != media ]] || exec bash scripts/bench-media.sh

scripts_all="home home-actions posts like comment publish delete follow subscription"
bench=${BENCH:-$scripts_all}
# BENCH=floor: the home script, each run a pair: the floor, then the gateway.
servers=gateway
if [[ " $bench " == *" floor "* ]]; then
	bench=$(tr ' ' '\n' <<<"$bench home" | grep -vx floor | sort -u | paste -sd' ')
	servers="floor gateway"
	# As the peer comparison, an HBase started here gets a 6 GB heap: its
	# block cache (0.4 of it) holds the full data set's HFiles.
	export HBASE_HEAP=${HBASE_HEAP:-6g}
fi
live_all="idle-subs push-latency"
for s in $bench; do
	if [[ ! -f bench/k6/$s.js && " $live_all " != *" $s "* ]]; then
		# Not a k6 script: the Go benchmarks, with a real standalone HBase.
		trap 'bash scripts/hbase-down.sh >&2 || true' EXIT
		zk=$(HBASE_CLEAN=${HBASE_CLEAN:-1} make -s hbase-up | tail -n 1)
		GATEWAY_TEST_HBASE_ZK="$zk" go test -run '^$' -bench "${BENCH:-.}" -benchtime "${BENCHTIME:-2s}" ./hbase/... ./weibo/... ./server/ ./seed/ ./cmd/gateway/
		exit
	fi
done

stores=${BENCH_STORE:-embedded hbase}
[[ -n ${BENCH_STORE:-} || $bench != push-latency ]] || stores=hbase # two instances share no embedded store
duration=${BENCH_DURATION:-30s}
warmup=${BENCH_WARMUP:-10s}
vus=${BENCH_VUS:-32}
runs=${BENCH_RUNS:-1}
nusers=${BENCH_USERS:-all}
[[ $nusers == all || $nusers =~ ^[1-9][0-9]*$ ]] || { echo "bench: BENCH_USERS=$nusers: want all or a positive number" >&2; exit 2; }
jwt_secret=${GATEWAY_JWT_SECRET:-bench-secret-bench-secret-bench-secret}
port=${BENCH_PORT:-18480}
datasets=${GATEWAY_DATASETS:-../shared/datasets}
edges=$datasets/higgs_social_network_prefix355k.edgelist.gz
posts=$datasets/weibo_covid19_posts_2020-03-01_to_2020-03-20.csv.gz
password=weibo-demo
scale=${BENCH_SCALE:-1}
data=.data/bench-full xs= # xs: the scale in the rows' store column
((scale == 1)) || { data=.data/bench-full-x$scale; xs=" x$scale"; }
base=http://127.0.0.1:$port
out=.data/bench
mkdir -p "$out"
results=$out/results.md

# k6_scripts: the k6 scripts BENCH selects (none for the live-event benchmarks alone).
k6_scripts=$(comm -12 <(tr ' ' '\n' <<<"$bench" | sort) <(tr ' ' '\n' <<<"$scripts_all" | sort))
[[ -z $k6_scripts ]] || make -s bin/k6 >&2
if [[ -n ${BENCH_GATEWAY:-} ]]; then
	gateway=$(realpath "$BENCH_GATEWAY")
else
	gateway=./bin/gateway
	make -s build >&2
fi
go build -o bin/live ./bench/live
go build -o bin/bench-users ./bench/users
[[ $servers == gateway ]] || go build -o bin/floor ./bench/floor
# Each subscription is a socket in the client and one in the gateway.
if [[ " $bench " == *" idle-subs "* ]] && (($(ulimit -n) < ${BENCH_SUBS:-10000} + 1000)); then
	ulimit -n "$(ulimit -Hn)"
fi
[[ -f $edges && -f $posts ]] || { echo "bench: the data set is not in $datasets (set GATEWAY_DATASETS)" >&2; exit 1; }

gw_pid=
gw2_pid=
gw_extra=()
hbase_started=
cleanup() {
	stop_gateway
	stop_gateway2
	if [[ -n $hbase_started ]]; then bash scripts/hbase-down.sh >&2 || true; fi
}
trap cleanup EXIT

# start_gateway STORE [SERVER]: serve the imported data on $port, no request
# budget (one client sends far more than a client may in a minute) and no
# bound on one address's WebSocket connections (every load client is
# 127.0.0.1). SERVER floor serves it with bench/floor instead.
start_gateway() {
	local args
	# Another process on the port would pass the readiness probe and be measured.
	if curl -s -o /dev/null "$base/readyz"; then
		echo "bench: something already serves $base: set BENCH_PORT" >&2
		return 1
	fi
	if [[ ${2:-gateway} == floor ]]; then
		case $1 in
		embedded) args=(-data "$data") ;;
		hbase) args=(-store hbase -hbase-zk "$zk" -namespace "$ns") ;;
		esac
		[[ -n ${BENCH_PPROF:-} ]] && args+=(-pprof-addr 127.0.0.1:$((port + 1)))
		GATEWAY_JWT_SECRET=$jwt_secret ./bin/floor "${args[@]}" -addr "127.0.0.1:$port" >"$out/floor.log" 2>&1 &
		gw_pid=$!
		wait_ready "$gw_pid" "$out/floor.log" "bench: the floor" curl -sf "$base/readyz"
		return
	fi
	case $1 in
	embedded) args=(--data "$data") ;;
	hbase) args=(--store hbase --hbase-zk "$zk" --namespace "$ns" --migrate) ;;
	esac
	local pp=()
	[[ -n ${BENCH_PPROF:-} ]] && pp=(--pprof-addr 127.0.0.1:$((port + 1)))
	GATEWAY_JWT_SECRET=$jwt_secret \
		"$gateway" serve "${args[@]}" "${pp[@]}" "${gw_extra[@]}" --addr "127.0.0.1:$port" --rate-limit 0 --max-ws-connections-per-address 0 >"$out/gateway.log" 2>&1 &
	gw_pid=$!
	wait_ready "$gw_pid" "$out/gateway.log" "bench: the gateway" curl -sf "$base/readyz"
}

stop_gateway() {
	stop_pid "$gw_pid"
	gw_pid=
}

# start_gateway2: a second gateway on the HBase store, on port+2, whose bus
# connects to the first's (which start_gateway started with --nats-listen).
start_gateway2() {
	if curl -s -o /dev/null "http://127.0.0.1:$((port + 2))/readyz"; then
		echo "bench: something already serves port $((port + 2)): set BENCH_PORT" >&2
		return 1
	fi
	GATEWAY_JWT_SECRET=$jwt_secret \
		"$gateway" serve --store hbase --hbase-zk "$zk" --namespace "$ns" --nats-url "nats://127.0.0.1:$((port + 3))" \
		--addr "127.0.0.1:$((port + 2))" --rate-limit 0 --max-ws-connections-per-address 0 >"$out/gateway2.log" 2>&1 &
	gw2_pid=$!
	wait_ready "$gw2_pid" "$out/gateway2.log" "bench: the second gateway" curl -sf "http://127.0.0.1:$((port + 2))/readyz"
}

stop_gateway2() {
	stop_pid "$gw2_pid"
	gw2_pid=
}

# live_row LINE: a result line of bench/live, with the date, store and the
# build measured (BENCH_GATEWAY, or the working tree's commit).
live_row() {
	local build
	build=$(git describe --always --dirty --abbrev=7)
	[[ -z ${BENCH_GATEWAY:-} ]] || build=$BENCH_GATEWAY
	printf '%s %s %s %s\n' "$(date -u +%FT%TZ)" "$store" "$build" "$1" | tee -a "$results"
}

# run_idle_subs: BENCH_SUBS idle subscriptions on a fresh gateway, per query.
run_idle_subs() {
	local q n=${BENCH_SUBS:-10000} line
	zcat "$edges" | awk '{print $1; print $2}' | sort -un | awk -v n="$n" 'NR <= n' >"$out/idle-ids.txt"
	for q in ${BENCH_LIVE_QUERY:-events updates notifications}; do
		stop_gateway
		start_gateway "$store"
		line=$(GATEWAY_JWT_SECRET=$jwt_secret \
			./bin/live idle -url "$base" -ids "$out/idle-ids.txt" -n "$n" -pid "$gw_pid" -query "$q" \
			-window "${BENCH_IDLE_WINDOW:-60s}")
		live_row "$line"
	done
	stop_gateway
}

# run_push_latency: the fans of a BENCH_FANS-fan author subscribed on two
# gateways sharing the bus, while it publishes.
run_push_latency() {
	local nf=${BENCH_FANS:-500} a line
	a=$(grep '^C ' "$out/graph.txt" | awk -v n="$nf" '$2 >= n' | sort -k2,2n -k3,3n | awk 'NR == 1 {print $3}')
	[[ -n $a ]] || { echo "bench: no author has $nf fans" >&2; return 1; }
	grep "^FANS $a " "$out/graph.txt" | cut -d' ' -f3- | tr ' ' '\n' | awk -v n="$nf" 'NF && ++k <= n' >"$out/push-fans.txt"
	echo "bench: push-latency: author u$a, $(grep -c "" "$out/push-fans.txt") fans" >&2
	stop_gateway
	gw_extra=(--nats-listen "127.0.0.1:$((port + 3))")
	start_gateway "$store"
	gw_extra=()
	start_gateway2
	line=$(GATEWAY_JWT_SECRET=$jwt_secret \
		./bin/live latency -url "$base,http://127.0.0.1:$((port + 2))" -ids "$out/push-fans.txt" -author "$a" \
		-rate "${BENCH_PUBLISH_RATE:-2}" -duration "$duration" -warmup "$warmup")
	live_row "author=u$a $line"
	stop_gateway2
	stop_gateway
}

# seed ARGS...: gateway seed of the full data set (or BENCH_DAY's posts),
# made BENCH_SCALE times larger.
seed() {
	local opt=()
	[[ -n ${BENCH_DAY:-} ]] && opt=(--from "$BENCH_DAY" --to "$BENCH_DAY")
	# --scale only when asked for: a BENCH_GATEWAY built before it knows no such flag
	((scale == 1)) || opt+=(--scale "$scale")
	echo "bench: importing the data set ($*${BENCH_DAY:+, posts of $BENCH_DAY})" >&2
	/usr/bin/time -f "bench: import took %e s, peak RSS %M KiB" "$gateway" seed "$@" "${opt[@]}" --quiet \
		--edges "$edges" --posts "$posts" --password "$password" >&2
}

# login USERNAME: a token.
login() {
	curl -sf "$base/graphql" -H 'Content-Type: application/json' \
		-d "{\"query\":\"mutation(\$u: String!, \$p: String!) { login(username: \$u, password: \$p) { token } }\",\"variables\":{\"u\":\"$1\",\"p\":\"$password\"}}" |
		sed -n 's/.*"token":"\([^"]*\)".*/\1/p'
}

# pick_users: from the edge list ("A B": A follows B; user n is u<n>),
# the readers of BENCH_USERS: every user who follows someone (all), or
# that many of them, in a random order (each with a follow target among
# the users who follow someone that it does not follow; the first k of
# all are the pick of k), the 200 most-followed users
# (who hold the most posts: the import gives posts to authors by fan count),
# the most-followed user and 32 of its fans. A reader's target is a user
# it does not follow (follow.js follows and unfollows it). Deterministic (fixed seed).
pick_users() {
	zcat "$edges" | awk -v n="$nusers" '
		{ if ($1 != $2) { follows[$1 " " $2] = 1; if (!($1 in isf)) { isf[$1] = 1; fl[++nf] = $1 }; fans[$2]++; fanof[$2] = fanof[$2] " " $1 } }
		END {
			for (u in fans) print "C", fans[u], u
			print "FOLLOWERS", nf
			if (n == "all") n = nf
			srand(42)
			m = nf
			for (i = 0; i < n && nf > 0; i++) {
				j = int(rand() * nf) + 1; r = fl[j]; fl[j] = fl[nf]; fl[nf--] = r
				do { t = fl[int(rand() * m) + 1] } while (t == r || ((r " " t) in follows))
				print "R", r, t
			}
			for (u in fans) print "FANS", u, fanof[u]
		}' >"$out/graph.txt"
	grep '^C ' "$out/graph.txt" | sort -k2,2nr -k3,3n | awk 'NR <= 200 {print $3}' >"$out/authors.txt"
	top=$(sed -n 1p "$out/authors.txt")
	grep '^R ' "$out/graph.txt" | cut -d' ' -f2- >"$out/readers.txt"
	followers=$(awk '$1 == "FOLLOWERS" {print $2}' "$out/graph.txt")
	grep "^FANS $top " "$out/graph.txt" | cut -d' ' -f3- | tr ' ' '\n' | awk 'NF && ++k <= 32' >"$out/fans.txt"
}

# users_json: $out/users.json for k6, the picked users with tokens minted
# with the gateway's secret (bin/bench-users).
users_json() {
	GATEWAY_JWT_SECRET=$jwt_secret ./bin/bench-users -url "$base" -readers "$out/readers.txt" \
		-authors "$out/authors.txt" -fans "$out/fans.txt" -author "$top" -out "$out/users.json"
}

# seeded_hbase: after an import into HBase, restarts it when it is this
# tree's (started here, or BENCH_HBASE_RESTART=1), then waits for it to
# settle when its .hbase directory is known.
seeded_hbase() {
	if [[ -n $hbase_started || ${BENCH_HBASE_RESTART:-} == 1 ]]; then
		zk=$(hbase_restart "$zk")
		hbase_settle .hbase
	elif [[ -n ${BENCH_HBASE_DIR:-} ]]; then
		hbase_settle "$BENCH_HBASE_DIR"
	else
		echo "bench: HBase of $zk started elsewhere without BENCH_HBASE_DIR: not waiting for it to settle" >&2
	fi
}

cpu_seconds() { curl -sf "$base/metrics" | awk '$1 == "process_cpu_seconds_total" {print $2}'; }
hwm_kib() { awk '/^VmHWM/ {print $2}' "/proc/$gw_pid/status"; }
# hbase_ticks: user + system clock ticks of the HBase JVMs of make hbase-up
# (its pid files in .hbase/, or in BENCH_HBASE_DIR), empty when none runs
# from there.
hbase_ticks() {
	local f pid t=0 any= d=${BENCH_HBASE_DIR:-.hbase}
	for f in "$d/hbase.pid" "$d/zookeeper.pid" "$d/master.pid" "$d/regionservers.pids"; do
		[[ -f $f ]] || continue
		while read -r pid; do
			[[ -n $pid && -r /proc/$pid/stat ]] || continue
			t=$((t + $(awk '{print $14 + $15}' "/proc/$pid/stat")))
			any=1
		done <"$f"
	done
	[[ -z $any ]] || echo "$t"
}

# floor_ratio: after a pair of runs, the gateway's CPU per page over the
# floor's (with HBase's CPU in both on HBase), req/s and p99 likewise.
floor_ratio() {
	awk -F' *[|] *' 'FNR == 1 {
		r[FILENAME ~ /floor/] = $6; p[FILENAME ~ /floor/] = $9
		c[FILENAME ~ /floor/] = $10 + ($11 == "-" ? 0 : $11)
	} END {
		printf "| pair | gateway / floor | CPU per page %.2fx (%.3f / %.3f ms) | req/s %.2fx | p99 %.2fx |\n", c[0] / c[1], c[0], c[1], r[0] / r[1], p[0] / p[1]
	}' "$out/row-gateway.txt" "$out/row-floor.txt" | tee -a "$results"
}

# run_k6 SCRIPT DURATION [SUMMARY]: one k6 run against the gateway.
run_k6() {
	VUS=$vus DURATION=$2 GATEWAY_URL=$base USERS_FILE="$PWD/$out/users.json" SUMMARY_FILE=${3:-} \
		./bin/k6 run --quiet --no-usage-report "bench/k6/$1.js"
}

pick_users
[[ -z $k6_scripts ]] ||
	printf '\nbench: readers %s of the %s users who follow someone (BENCH_USERS=%s), %s VUs\n' \
		"$(grep -c '' "$out/readers.txt")" "$followers" "$nusers" "$vus" | tee -a "$results"
[[ -z $k6_scripts ]] ||
	printf '\n| date | store | script | VUs | req/s | p50 ms | p95 ms | p99 ms | gateway CPU ms/req | HBase CPU ms/req | peak RSS MiB | load avg |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n' | tee -a "$results"

for store in $stores; do
	case $store in
	embedded)
		if [[ ! -d $data ]]; then
			rm -rf "$data.tmp"
			seed --data "$data.tmp"
			mv "$data.tmp" "$data"
		fi
		;;
	hbase)
		zk=${BENCH_HBASE_ZK:-}
		if [[ -z $zk ]]; then
			hbase_started=1
			zk=$(HBASE_CLEAN=${HBASE_CLEAN:-0} make -s hbase-up | tail -n 1)
		fi
		ns=bench_full
		[[ -n ${BENCH_DAY:-} ]] && ns=bench_day_${BENCH_DAY//-/}
		((scale == 1)) || ns=${ns}_x$scale
		ns=${BENCH_NAMESPACE:-$ns}
		;;
	*) echo "bench: BENCH_STORE: unknown store $store" >&2; exit 2 ;;
	esac
	start_gateway "$store"
	if [[ -z $(login "u$top") ]]; then
		[[ $store == hbase ]] || { echo "bench: $data has no u$top: rm -rf $data" >&2; exit 1; }
		stop_gateway
		seed --store hbase --hbase-zk "$zk" --namespace "$ns"
		seeded_hbase
		start_gateway "$store"
	fi
	[[ " $bench " == *" idle-subs "* ]] && run_idle_subs
	if [[ " $bench " == *" push-latency "* ]]; then
		if [[ $store == hbase ]]; then
			run_push_latency
		else
			echo "bench: push-latency skipped on the embedded store: two gateways cannot share it" >&2
		fi
	fi
	[[ -n $k6_scripts ]] || continue
	users_json
	for script in $scripts_all; do
		[[ " $bench " == *" $script "* ]] || continue
		for run in $(seq "$runs"); do
			for server in $servers; do
				label=$script
				[[ $server == gateway ]] || label=$script-$server
				stop_gateway # a fresh process per run: its peak RSS is the run's
				start_gateway "$store" "$server"
				run_k6 "$script" "$warmup" >/dev/null
				sleep 1
				c0=$(cpu_seconds)
				h0=
				[[ $store != hbase ]] || h0=$(hbase_ticks)
				prof_pid=
				if [[ -n ${BENCH_PPROF:-} ]]; then
					curl -sf -o "$BENCH_PPROF.$store.$label.$run.pprof" "http://127.0.0.1:$((port + 1))/debug/pprof/profile?seconds=20" &
					prof_pid=$!
				fi
				sum=$out/$store-$script-$run.txt
				run_k6 "$script" "$duration" "$PWD/$sum" >&2
				sleep 2 # the fan-out a publish started after its answer is its cost too
				[[ -z $prof_pid ]] || wait "$prof_pid" || true
				c1=$(cpu_seconds)
				h1=
				[[ -z $h0 ]] || h1=$(hbase_ticks)
				read -r _ rate med p95 p99 n <"$sum" # n: HTTP requests (for the subscription: the publishes)
				awk -v d="$(date -u +%F)" -v st="$store$xs" -v s="$label" -v v="$vus" -v n="$n" -v r="$rate" -v med="$med" -v p95="$p95" -v p99="$p99" \
					-v c0="$c0" -v c1="$c1" -v h0="$h0" -v h1="$h1" -v hz="$(getconf CLK_TCK)" -v hwm="$(hwm_kib)" -v la="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
					hb = (h0 != "" && h1 != "" && n) ? sprintf("%.2f", (h1 - h0) * 1000 / hz / n) : "-"
					printf "| %s | %s | %s | %d | %.0f | %.1f | %.1f | %.1f | %.2f | %s | %.0f | %s |\n", d, st, s, v, r, med, p95, p99, n ? (c1 - c0) * 1000 / n : 0, hb, hwm / 1024, la }' | tee "$out/row-$server.txt" >>"$results"
				cat "$out/row-$server.txt"
			done
			[[ $servers == gateway ]] || floor_ratio
		done
	done
	stop_gateway
done
echo "bench: rows appended to $results (subscription: req/s = deliveries/s, percentiles = publish -> delivery; CPU per publish)" >&2
