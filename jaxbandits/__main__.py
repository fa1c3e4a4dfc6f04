"""``python -m jaxbandits``: the command line (the same as the ``jaxbandits`` command)."""

from jaxbandits.cli import console

console()
