"""``python -m boostwood``: the command line (see :mod:`boostwood.cli`)."""
from .cli import main

raise SystemExit(main())
