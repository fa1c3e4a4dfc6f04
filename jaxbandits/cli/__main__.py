"""``python -m jaxbandits.cli``: the command line."""

import sys

from jaxbandits.cli import main

sys.exit(main())
