#!/usr/bin/env bash
# Installs the Debian packages mem0's Python MemoryClient needs (httpx, pydantic, requests) for the mem0
# adapter's end-to-end test. Idempotent; needs root (CI runs as root). Uses /usr/bin/python3: a pyenv python3
# on PATH does not see Debian's packages.
set -euo pipefail
if /usr/bin/python3 -c 'import httpx, pydantic, requests' 2>/dev/null; then
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq python3-httpx python3-pydantic python3-requests >/dev/null
/usr/bin/python3 -c 'import httpx, pydantic, requests'
