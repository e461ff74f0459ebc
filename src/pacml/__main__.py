from pacml.cli import main

raise SystemExit(main())
