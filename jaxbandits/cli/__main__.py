"""``python -m jaxbandits.cli``: the command line."""

from jaxbandits.cli import console

console()
