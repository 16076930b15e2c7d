"""Set-up shared by every test: the process environment the labeller's entry points use.

``labeler.cli.main`` and ``labeler/app.py`` set ``OMP_WAIT_POLICY=PASSIVE`` before numba starts
its OpenMP pool; the tests import the library directly, so they set it here, before any test
module imports numba. With the default policy the pool's threads spin and then sleep at every
barrier, which costs a whole scheduler time slice (~8 ms measured) per parallel call on a
shared CPU; a passive pool wakes in microseconds. An explicit setting in the environment wins.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
