#!/usr/bin/env bash
# Install the app and start it on the two-moons demo (http://localhost:8501).
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q -e .
exec labeler "$@"
