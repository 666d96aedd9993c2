"""Where the repository's files are, for the tests that read them (docs, notebooks, benchmarks)."""

from pathlib import Path

#: The repository's root folder.
REPO = Path(__file__).resolve().parents[2]
