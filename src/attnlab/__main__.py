"""Run ``python -m attnlab``: the same as the ``attnlab`` command."""
from attnlab.cli import main

raise SystemExit(main())
