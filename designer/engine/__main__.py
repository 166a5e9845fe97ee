import sys

from designer.engine.cli import main

sys.exit(main())
