"""``python -m staleness_lab``: the same command line as ``staleness-lab``."""

from staleness_lab.cli import main

raise SystemExit(main())
