"""``python -m hugginggpt``: the ``hugginggpt`` command, for an environment whose scripts folder is
not on PATH."""

import sys

from hugginggpt.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
