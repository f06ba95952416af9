"""`python -m halo.cli …` is `halo …`."""

from halo.cli.main import main

raise SystemExit(main())
