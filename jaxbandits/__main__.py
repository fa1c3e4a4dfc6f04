"""``python -m jaxbandits``: the command line (the same as the ``jaxbandits`` command)."""

import sys

from jaxbandits.cli import main

sys.exit(main())
