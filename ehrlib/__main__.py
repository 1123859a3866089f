from ehrlib.cli import main

raise SystemExit(main())
