"""Every name a kcxai module lists in ``__all__`` exists (``from module import *`` works): a refactor that
moves a name must not leave it listed behind."""

import importlib
import pkgutil

import pytest

import kcxai

MODULES = sorted(m.name for m in pkgutil.walk_packages(kcxai.__path__, "kcxai.") if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_every_exported_name_exists(name):
    try:
        module = importlib.import_module(name)
    except ImportError as e:  # a module of an optional extra that is not installed
        pytest.skip(str(e))
    missing = [n for n in getattr(module, "__all__", ()) if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ lists {missing}, which it does not define"
