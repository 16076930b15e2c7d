#!/usr/bin/env bash
# Install everything the tests need into .venv/ (made from python3 on first use), and Debian's
# Chromium for the browser tests, then run the whole test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium
fi
source scripts/_venv.sh
"$VENV/bin/python" -m pip install -q -e '.[test]'
"$VENV/bin/python" -m pytest -q "$@"
