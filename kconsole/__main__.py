from kconsole.cli import main

raise SystemExit(main())
