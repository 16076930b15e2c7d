#!/usr/bin/env bash
# Install everything the tests need (Python packages, Debian's Chromium for the browser tests)
# and run the whole test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium
fi
python -m pip install -q -e '.[test]'
python -m pytest -q "$@"
