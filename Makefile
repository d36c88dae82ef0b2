# Weibo GraphQL gateway over HBase. `make run` and `make test` are the two
# commands a newcomer needs (see README.md).
SHELL := /bin/bash
GO    ?= go
BIN   := bin/gateway

.PHONY: run build generate test test-unit hbase-up hbase-down hbase-jars bench lint clean

build:
	$(GO) build -o $(BIN) ./cmd/gateway

generate:
	$(GO) run github.com/99designs/gqlgen generate

run: build
	./$(BIN) serve --store embedded --data .data/embedded --demo

# --- real HBase (standalone, from Maven Central jars) ---------------------
# (targets hbase-jars, hbase-up, hbase-down: see scripts/)

clean:
	rm -rf bin .data
