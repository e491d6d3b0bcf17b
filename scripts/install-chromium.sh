#!/bin/sh
# Installs Debian's headless-capable Chromium (and a font, so screenshots show text) for the console's browser
# test. Run by the test under CI=true when no chromium is on PATH; safe to run again.
set -eu
if command -v chromium >/dev/null 2>&1; then
	exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
	SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
command -v chromium
