# Sourced by start.sh and test.sh: make (once) and use a virtual environment in .venv/.
#
# Works on a stock Debian/Ubuntu machine with only `python3` (no `python` command, and pip
# into the system Python refused by PEP 668): the packages go into .venv/, never into the
# system. Set LABELER_PYTHON to choose another interpreter (3.11 or newer), LABELER_VENV to
# put the environment elsewhere.

VENV="${LABELER_VENV:-$PWD/.venv}"
PY="${LABELER_PYTHON:-python3}"

if [ ! -x "$VENV/bin/python" ]; then
    if ! command -v "$PY" >/dev/null 2>&1; then
        echo "error: '$PY' was not found. Install Python 3.11 or newer (Debian/Ubuntu: apt-get install python3 python3-venv)." >&2
        exit 1
    fi
    if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
        echo "error: $("$PY" --version 2>&1) is too old; the app needs Python 3.11 or newer (set LABELER_PYTHON=/path/to/python3.11)." >&2
        exit 1
    fi
    echo "Creating the virtual environment $VENV (once) ..."
    if ! "$PY" -m venv "$VENV" 2>/dev/null; then
        # Debian/Ubuntu ship venv's pip bootstrap in a separate package
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
            apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv
            rm -rf "$VENV"
            "$PY" -m venv "$VENV"
        else
            rm -rf "$VENV"
            echo "error: '$PY -m venv' failed. On Debian/Ubuntu install the venv module first: sudo apt-get install python3-venv" >&2
            exit 1
        fi
    fi
    "$VENV/bin/python" -m pip install -q --upgrade pip
fi
export PATH="$VENV/bin:$PATH"  # so that tests which start `labeler` find the venv's
