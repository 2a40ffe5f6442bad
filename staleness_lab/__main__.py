"""``python -m staleness_lab``: the same command line as ``staleness-lab``."""

from staleness_lab.launch import main

raise SystemExit(main())
