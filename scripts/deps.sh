#!/usr/bin/env bash
# Installs what the project needs beyond Go: a JDK 17 and Maven (Debian
# packages) for the standalone HBase, Chromium for the browser tests
# (driven headless from Go), Node.js and npm for the client library
# tests, and Python 3 with venv for the SCIM client test. Does nothing when
# they are present.
set -euo pipefail
need=()
command -v java >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || need+=(maven)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# Node.js and npm for the client library tests (clients/: relay-compiler, relay-runtime,
# Apollo Client, graphql-http's audit).
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
# Python 3 with venv for the SCIM client library test (clients/scim-python:
# scim2-client from PyPI, in a virtualenv the test makes).
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3 python3-venv)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]} (apt-get)" >&2
  SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${need[@]}" >&2
fi
go mod download
