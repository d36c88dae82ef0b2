# Weibo GraphQL gateway over HBase. `make run` and `make test` are the two
# commands a newcomer needs (see README.md).
SHELL := /bin/bash
GO    ?= go
BIN   := bin/gateway

.PHONY: run build generate graphiql admin-console schema-check test test-short soak hbase-up hbase-down hbase-jars bench lint clean

build:
	$(GO) build -o $(BIN) ./cmd/gateway

# gqlgen (gqlgen.yml), then internal/generate's rewrites of its output:
# list marshalling (internal/gqllist), field execution (internal/gqlfield),
# response buffers (internal/respbuf). The same as go generate ./...
generate:
	$(GO) run ./internal/generate

# GraphiQL, rebuilt from the npm packages pinned in server/graphiql/_web
# (package-lock.json) into server/graphiql/dist, which is committed and
# embedded in the binary: only for changing GraphiQL (needs Node.js and npm).
graphiql:
	cd server/graphiql/_web && npm ci --no-audit --no-fund && npm run build

# The admin console at /admin (README "Admin console"), rebuilt the same way
# from server/admin/_web into server/admin/dist, also committed and embedded.
admin-console:
	cd server/admin/_web && npm ci --no-audit --no-fund && npm run build

# The schema evolution guard (docs/schema-changes.md): graphql-inspector diff,
# pinned in scripts/schema-check/package-lock.json, of the last release's
# schema (schema/releases/) against the current one; part of make test.
schema-check:
	bash scripts/schema-check.sh

# Everything, with a real standalone HBase (started and stopped here).
test:
	bash scripts/test.sh

# Unit tests and the embedded backend only (HBase tests skip).
test-short:
	$(GO) test ./...

# The storm of likes, comments, reposts, deletes and follows on the same
# few posts (weibo/domain TestPostActionsStorm) SOAK_COUNT times in a row,
# stopping at the first failure: a race that one run hits rarely shows
# here. Both backends as in make test (HBase with GATEWAY_TEST_HBASE_ZK
# set); not part of make test. See docs/reliability.md.
SOAK_COUNT ?= 50
soak:
	$(GO) test -count=$(SOAK_COUNT) -failfast -timeout 0 -run '^TestPostActionsStorm$$' ./weibo/domain/

# Benchmarks: the k6 scripts of bench/k6 against the binary on the full data
# set, embedded and real HBase (BENCH=home|posts|publish|follow|subscription
# selects, BENCH_STORE=embedded|hbase); BENCH=idle-subs (10,000 idle
# subscriptions: store calls/s, RSS each) and BENCH=push-latency (publish ->
# delivery over 2 gateways sharing the bus, HBase) run the Go load client
# bench/live; BENCH=peer runs the home page against PostGraphile over
# PostgreSQL, alternated (scripts/peer.sh; the HBase it starts has
# HBASE_HEAP=6g); BENCH=floor runs it against its floor, bench/floor (a
# bare handler making the same store calls and writing the same bytes),
# alternated, with the ratio after each pair; BENCH=media the pictures:
# thumbnails served against nginx serving the same bytes (apt-get install
# nginx), uploads of 12-megapixel JPEGs (scripts/bench-media.sh,
# bench/media); BENCH=<regexp> naming none of
# these runs the Go benchmarks instead. The home-page scripts and the peer
# draw their readers from every user who follows someone (BENCH_USERS=all,
# the default; a number picks that many), and an HBase the benchmark
# started is restarted after an import and left to settle (compaction and
# flush queues empty) before it is measured. See scripts/bench.sh and
# docs/benchmarks.md.
bench: build
	bash scripts/bench.sh

# k6 (the load generator of make bench), built from its module at a pinned version.
K6_VERSION := v1.8.1
bin/k6:
	GOBIN=$(CURDIR)/bin $(GO) install go.k6.io/k6@$(K6_VERSION)

lint:
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

# Browser apps served from any port of localhost may call the gateway
# (README "Calling the gateway from a browser app on another origin");
# e.g. make run CORS_ORIGINS= allows none.
CORS_ORIGINS ?= http://localhost:*,http://127.0.0.1:*

run: build
	./$(BIN) serve --store embedded --data .data/embedded --demo --cors-origins '$(CORS_ORIGINS)'

# --- real HBase (from Maven Central jars) ------------------------------------
# hbase-jars: HBase's runtime classpath (hbase-local/pom.xml) from Maven Central
# into .hbase/lib, with ExportSnapshot for `gateway backup|restore` on HBase; redone only when the pom changes. hbase-up: start a standalone
# HBase (one JVM), or with HBASE_REGIONSERVERS=N (N >= 2) a local cluster of
# ZooKeeper, one HMaster and N HRegionServers (one JVM each), and print its
# ZooKeeper address 127.0.0.1:PORT as the last stdout line (scripts/hbase-up.sh
# lists the other settings). hbase-down: stop whichever runs.
HBASE_LIB := .hbase/lib

hbase-jars: $(HBASE_LIB)/.complete
	@:

$(HBASE_LIB)/.complete: hbase-local/pom.xml
	@rm -rf $(HBASE_LIB).tmp && mkdir -p $(HBASE_LIB).tmp
	@cd hbase-local && mvn -q -B dependency:copy-dependencies -DincludeScope=runtime \
		-DoutputDirectory=$(CURDIR)/$(HBASE_LIB).tmp >&2
	@rm -rf $(HBASE_LIB) && mv $(HBASE_LIB).tmp $(HBASE_LIB) && touch $@

hbase-up: hbase-jars
	@bash scripts/hbase-up.sh

hbase-down:
	@bash scripts/hbase-down.sh

clean:
	rm -rf bin .data
