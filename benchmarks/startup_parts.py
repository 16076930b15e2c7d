"""The parts of a start that every process pays, measured alone; prints one table.

* imports: ``import labeler.cli.entry, labeler.session`` in a fresh process (what the command
  line and the session need before anything is read);
* checksum: the session cache's check of an array (:func:`labeler.session.cache.checksum`),
  in one thread and in :func:`labeler.runtime.block_threads` threads (what a load uses),
  against the CRC-32 it replaced, on ``--gb`` GB (a 10^6 x 300 factor is 2.4 GB);
* the first call of the expected-risk kernel in a fresh process: with numba's on-disk cache
  emptied (``NUMBA_CACHE_DIR`` a new folder: the compile, once per installation), with the
  cache, and with the cache after :func:`labeler.runtime.warm_numba` (what ``labeler app``
  runs in a thread while the file is read).

Usage::

    nice -n 10 python benchmarks/startup_parts.py --gb 2.4
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_IMPORTS = "import time; t = time.perf_counter(); import labeler.cli.entry, labeler.session; print(time.perf_counter() - t)"
_FIRST_CALL = """
import time
import numpy as np
import core.criteria._expected_risk_numba as nb
warm = {warm}
if warm:
    from labeler.runtime import warm_numba
    t = time.perf_counter(); warm_numba(); w = time.perf_counter() - t
else:
    w = 0.0
R = np.random.default_rng(0).random((3, 10)); out = np.empty(3)
t = time.perf_counter()
nb.expected_risk_binary(R, np.arange(10), R[0].copy(), np.arange(3), 1.0, 1.0, 1.0, 1.0, out)
print(w, time.perf_counter() - t)
"""


def _python(code: str, env=None) -> list[float]:
    env = dict(os.environ, **(env or {}), PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return [float(v) for v in res.stdout.split()]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gb", type=float, default=1.0, help="size of the checksummed array")
    args = p.parse_args(argv)
    import numpy as np

    from labeler.session.cache import _crc32, checksum

    print(f"# parts of a start, {os.cpu_count()} cores")
    print("| part | load avg | seconds | note |")
    print("|---|---|---|---|")
    load = os.getloadavg()[0]
    (s,) = _python(_IMPORTS)
    print(f"| imports (labeler.cli.entry, labeler.session) | {load:.1f} | {s:.2f} | fresh process |", flush=True)
    a = np.arange(int(args.gb * 2**30 / 8), dtype=np.float64)
    from functools import partial

    from labeler.runtime import block_threads

    k = block_threads()
    for name, f in (("checksum (sum64)", checksum), (f"checksum (sum64), {k} threads", partial(checksum, threads=k)),
                    ("CRC-32 (before)", _crc32)):
        load = os.getloadavg()[0]
        t = time.perf_counter()
        f(a)
        s = time.perf_counter() - t
        print(f"| {name} of {a.nbytes / 1e9:.1f} GB | {load:.1f} | {s:.2f} | {a.nbytes / 1e9 / s:.1f} GB/s |", flush=True)
    del a
    with tempfile.TemporaryDirectory() as empty:
        load = os.getloadavg()[0]
        _, s = _python(_FIRST_CALL.format(warm=False), env={"NUMBA_CACHE_DIR": empty})
        print(f"| first kernel call, numba cache empty (compile) | {load:.1f} | {s:.2f} | once per installation |",
              flush=True)
    load = os.getloadavg()[0]
    _, s = _python(_FIRST_CALL.format(warm=False))
    print(f"| first kernel call, cached | {load:.1f} | {s:.2f} | every process |", flush=True)
    load = os.getloadavg()[0]
    w, s = _python(_FIRST_CALL.format(warm=True))
    print(f"| first kernel call, cached, after the warm-up | {load:.1f} | {s:.2f} | the warm-up itself {w:.2f} s, "
          "in a thread while the file is read |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
