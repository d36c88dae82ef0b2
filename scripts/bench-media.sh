#!/usr/bin/env bash
# BENCH=media make bench (scripts/bench.sh hands over here): the pictures'
# benchmarks through the real binary, per store of BENCH_STORE (embedded,
# hbase or "embedded hbase", the default), on a store of their own (not the
# data set: a fresh .data/bench-media, the HBase namespace bench_media):
#
# 1. Thumbnails served: bench/media (built to bin/mediabench) registers a
#    user, uploads 9 pictures (1600 x 1200), publishes them as one post and
#    writes each THUMB variant's bytes, as the gateway serves them, into
#    files, with an nginx.conf serving those files on 127.0.0.1:port+10 with
#    the gateway's headers (Content-Type, ETag, Cache-Control, nosniff, CSP),
#    logging each request to a file as the gateway does at its default level
#    (BENCH_MEDIA_QUIET=1: neither logs requests, GATEWAY_LOG_LEVEL=warn).
#    Then, BENCH_RUNS times, nginx then the gateway: the k6 script
#    bench/k6/media-thumb.js (a random one of the 9 thumbnails a request, no
#    If-None-Match: the whole 200) for BENCH_WARMUP, then measured for
#    BENCH_DURATION, BENCH_VUS (default 32) virtual users. CPU per request is
#    the server's CPU time (utime + stime of /proc/PID/stat: the gateway's
#    process; nginx's master and its workers, worker_processes auto = one per
#    core) over the measured run, over its requests. The gateway's row gives
#    its req/s as a multiple of the nginx run just before it (targets:
#    embedded >= 0.5, HBase >= 0.25).
# 2. Upload and processing of a 12-megapixel JPEG: on a fresh gateway,
#    BENCH_UPLOADS (default 60) distinct 4000 x 3000 JPEGs (~3.7 MB each,
#    made before the clock starts), BENCH_UPLOAD_CONCURRENCY (default 1) at
#    a time, by ceil(uploads / 25) users in turn (the gateway allows 30 per
#    user per 10 minutes): p50, p95, p99 and max of an upload's time (request
#    sent to answer read), the gateway's CPU per upload and its peak RSS.
#
# nginx is the system's (apt-get install -y nginx, with sudo when not root);
# when it is not installed its rows are skipped, with a message.
# Settings: BENCH_STORE, BENCH_DURATION (30s), BENCH_WARMUP (10s), BENCH_VUS
# (32), BENCH_RUNS (1), BENCH_PORT (18480), BENCH_HBASE_ZK, BENCH_HBASE_DIR,
# BENCH_GATEWAY as in scripts/bench.sh; BENCH_UPLOADS, BENCH_UPLOAD_CONCURRENCY
# (0 uploads: no upload run); BENCH_MEDIA_SERVE=0 skips the serving runs.
# Rows go to .data/bench/results.md; the docs take them by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/procs.sh

stores=${BENCH_STORE:-embedded hbase}
duration=${BENCH_DURATION:-30s}
warmup=${BENCH_WARMUP:-10s}
vus=${BENCH_VUS:-32}
runs=${BENCH_RUNS:-1}
port=${BENCH_PORT:-18480}
nginx_port=$((port + 10))
uploads=${BENCH_UPLOADS:-60}
upload_c=${BENCH_UPLOAD_CONCURRENCY:-1}
serve=${BENCH_MEDIA_SERVE:-1}
quiet=${BENCH_MEDIA_QUIET:-0}
log_level=${GATEWAY_LOG_LEVEL:-info}
qlabel= # the rows' note of the quiet runs
[[ $quiet == 0 ]] || { log_level=warn; qlabel=", no request logs"; }
base=http://127.0.0.1:$port
out=.data/bench/media
results=.data/bench/results.md
hz=$(getconf CLK_TCK)
mkdir -p "$out"

make -s bin/k6 >&2
if [[ -n ${BENCH_GATEWAY:-} ]]; then
	gateway=$(realpath "$BENCH_GATEWAY")
else
	gateway=./bin/gateway
	make -s build >&2
fi
go build -o bin/mediabench ./bench/media

nginx=$(command -v nginx || true)
[[ -n $nginx || ! -x /usr/sbin/nginx ]] || nginx=/usr/sbin/nginx
if [[ -z $nginx && $serve != 0 ]]; then
	echo "bench: nginx is not installed: its rows are skipped (install it: apt-get install -y nginx, with sudo when not root)" >&2
fi

gw_pid=
ngx_pid=
hbase_started=
cleanup() {
	stop_nginx
	stop_gateway
	if [[ -n $hbase_started ]]; then bash scripts/hbase-down.sh >&2 || true; fi
}
trap cleanup EXIT

# start_gateway STORE: the gateway on $port over the store's media store,
# no request budget (one client sends far more than a client may).
start_gateway() {
	local args
	case $1 in
	embedded) args=(--data .data/bench-media) ;;
	hbase) args=(--store hbase --hbase-zk "$zk" --namespace bench_media --migrate) ;;
	esac
	GATEWAY_JWT_SECRET=${GATEWAY_JWT_SECRET:-bench-secret-bench-secret-bench-secret} GATEWAY_LOG_LEVEL=$log_level \
		"$gateway" serve "${args[@]}" --addr "127.0.0.1:$port" --rate-limit 0 >"$out/gateway.log" 2>&1 &
	gw_pid=$!
	wait_ready "$gw_pid" "$out/gateway.log" "bench: the gateway" curl -sf "$base/readyz"
}

stop_gateway() {
	stop_pid "$gw_pid"
	gw_pid=
}

# start_nginx DIR: nginx in the foreground of a background job, with
# DIR/nginx.conf (bench/media prepare), every file of its own under DIR.
start_nginx() {
	local dir=$1 e=()
	mkdir -p "$dir"/tmp/{body,proxy,fastcgi,uwsgi,scgi}
	rm -f "$dir/access.log"
	# -e (nginx >= 1.19.5): the log of the start itself, before the configuration's
	"$nginx" -h 2>&1 | grep -q -- '-e filename' && e=(-e "$PWD/$dir/error.log")
	"$nginx" -t -q -p "$PWD/$dir/" "${e[@]}" -c "$PWD/$dir/nginx.conf"
	"$nginx" -p "$PWD/$dir/" "${e[@]}" -c "$PWD/$dir/nginx.conf" -g 'daemon off;' >"$dir/stdout.log" 2>&1 &
	ngx_pid=$!
	wait_ready "$ngx_pid" "$dir/stdout.log" "bench: nginx" curl -sf -o /dev/null "http://127.0.0.1:$nginx_port$(first_path "$dir")"
}

stop_nginx() {
	stop_pid "$ngx_pid"
	ngx_pid=
}

# first_path DIR: the path of the first thumbnail of DIR/media.json.
first_path() { sed -n 's/.*"path": "\([^"]*\)".*/\1/p' "$1/media.json" | head -n 1; }

# ticks PID: user + system clock ticks of PID and its children (nginx's
# workers are its master's).
ticks() {
	local p t=0
	for p in "$1" $(pgrep -P "$1" || true); do
		[[ -r /proc/$p/stat ]] || continue
		# the command name (field 2) may hold spaces: count from after its ")"
		t=$((t + $(sed 's/.*) //' "/proc/$p/stat" | awk '{print $12 + $13}')))
	done
	echo "$t"
}

# hbase_ticks: user + system clock ticks of the HBase JVMs of make hbase-up
# (pid files in .hbase/, or in BENCH_HBASE_DIR), empty when none runs from
# there (as in scripts/bench.sh).
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

hwm_kib() { awk '/^VmHWM/ {print $2}' "/proc/$gw_pid/status"; }

# run_k6 URL DIR DURATION [SUMMARY]: media-thumb.js against URL.
run_k6() {
	VUS=$vus DURATION=$3 GATEWAY_URL=$1 USERS_FILE="$PWD/$2/media.json" SUMMARY_FILE=${4:-} \
		./bin/k6 run --quiet --no-usage-report bench/k6/media-thumb.js
}

# measure_serve STORE SERVER PID URL DIR RUN: one warm-up and one measured
# run of SERVER (nginx or gateway, process PID) at URL; appends its row.
# nginx's req/s is kept in nginx_rate for the gateway's row after it.
nginx_rate=
measure_serve() {
	local store=$1 server=$2 pid=$3 url=$4 dir=$5 run=$6 sum t0 t1 h0= h1= rate med p95 p99 n ratio=-
	run_k6 "$url" "$dir" "$warmup" >/dev/null
	sleep 1
	sum=$dir/$server-$run.txt
	t0=$(ticks "$pid")
	[[ $store != hbase || $server != gateway ]] || h0=$(hbase_ticks)
	run_k6 "$url" "$dir" "$duration" "$PWD/$sum" >&2
	t1=$(ticks "$pid")
	[[ -z $h0 ]] || h1=$(hbase_ticks)
	read -r _ rate med p95 p99 n <"$sum"
	if [[ $server == nginx ]]; then
		nginx_rate=$rate
	elif [[ -n $nginx_rate ]]; then
		ratio=$(awk -v a="$rate" -v b="$nginx_rate" 'BEGIN { printf "%.2f", a / b }')
	fi
	awk -v d="$(date -u +%F)" -v st="$store$qlabel" -v sv="$server" -v v="$vus" -v n="$n" -v r="$rate" -v med="$med" -v p99="$p99" \
		-v t0="$t0" -v t1="$t1" -v h0="$h0" -v h1="$h1" -v hz="$hz" -v ratio="$ratio" -v la="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
		hb = (h0 != "" && h1 != "" && n) ? sprintf("%.3f", (h1 - h0) * 1000 / hz / n) : "-"
		printf "| %s | %s | %s | %d | %.0f | %.2f | %.2f | %.3f | %s | %s | %s |\n", d, st, sv, v, r, med, p99, n ? (t1 - t0) * 1000 / hz / n : 0, hb, ratio, la }' | tee -a "$results"
}

# run_serve STORE: the thumbnails of a new post, from nginx then the
# gateway, BENCH_RUNS times.
run_serve() {
	local store=$1 dir=$out/$1 run
	mkdir -p "$dir"
	./bin/mediabench prepare -url "$base" -n 9 -out "$dir" -nginx-port "$nginx_port" -access-log="$([[ $quiet == 0 ]] && echo true || echo false)"
	[[ -z $nginx ]] || start_nginx "$dir"
	printf '\n| date | store | server | VUs | req/s | p50 ms | p99 ms | server CPU ms/req | HBase CPU ms/req | × nginx req/s | load |\n|---|---|---|---|---|---|---|---|---|---|---|\n' | tee -a "$results"
	for run in $(seq "$runs"); do
		nginx_rate=
		[[ -z $nginx ]] || measure_serve "$store" nginx "$ngx_pid" "http://127.0.0.1:$nginx_port" "$dir" "$run"
		measure_serve "$store" gateway "$gw_pid" "$base" "$dir" "$run"
	done
	stop_nginx
}

# run_upload STORE: BENCH_UPLOADS 12-megapixel uploads on a fresh gateway.
run_upload() {
	local store=$1 line t0 t1
	stop_gateway
	start_gateway "$store"
	t0=$(ticks "$gw_pid")
	line=$(./bin/mediabench upload -url "$base" -n "$uploads" -c "$upload_c" -width 4000 -height 3000)
	t1=$(ticks "$gw_pid")
	printf '\n| date | store | uploads (4000 x 3000 JPEG) | at a time | uploads/s | p50 ms | p95 ms | p99 ms | max ms | gateway CPU ms/upload | peak RSS MiB | load |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n' | tee -a "$results"
	awk -v d="$(date -u +%F)" -v st="$store" -v c="$upload_c" -v line="$line" -v t0="$t0" -v t1="$t1" -v hz="$hz" \
		-v hwm="$(hwm_kib)" -v la="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
		split(line, f, " ")
		printf "| %s | %s | %d | %d | %.2f | %.1f | %.1f | %.1f | %.1f | %.0f | %.0f | %s |\n", d, st, f[1], c, f[2], f[3], f[4], f[5], f[6], (t1 - t0) * 1000 / hz / f[1], hwm / 1024, la }' | tee -a "$results"
}

for store in $stores; do
	case $store in
	embedded) rm -rf .data/bench-media ;;
	hbase)
		zk=${BENCH_HBASE_ZK:-}
		if [[ -z $zk ]]; then
			hbase_started=1
			zk=$(HBASE_CLEAN=${HBASE_CLEAN:-0} make -s hbase-up | tail -n 1)
		fi
		;;
	*) echo "bench: BENCH_STORE: unknown store $store" >&2; exit 2 ;;
	esac
	start_gateway "$store"
	[[ $serve == 0 ]] || run_serve "$store"
	((uploads == 0)) || run_upload "$store"
	stop_gateway
	if [[ $store == hbase && -n $hbase_started ]]; then
		bash scripts/hbase-down.sh >&2 || true
		hbase_started=
	fi
done
echo "bench: rows appended to $results" >&2
