#!/usr/bin/env bash
# Install the app into .venv/ (made from python3 on first use) and start it on the two-moons
# demo. It prints the URL to open (http://localhost:8501 by default). Extra arguments go to
# `labeler`, e.g. `bash scripts/start.sh app my.csv`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh
"$VENV/bin/python" -m pip install -q -e .
exec "$VENV/bin/labeler" "$@"
