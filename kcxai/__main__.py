"""``python -m kcxai`` runs the command line."""

import sys

from kcxai.cli import main

sys.exit(main())
