"""Build hook: compile the tick's hot modules to C extensions with mypyc.

Everything else about the package is in ``pyproject.toml``. The modules in
:data:`COMPILED` are the ones a tick runs for every player (issue 10): their
Python source stays the reference, and the extensions built from it run the
same code in about a fifth fewer instructions a tick (``bench/instructions.py``).
The list is kept in ``server/_native.py``, which also decides at run time
whether the extensions are current enough to be imported.

The extensions are optional. Set ``UNDERHALL_PURE=1`` when installing to skip
them; without a C compiler and Python's headers the build warns and installs
the pure-Python package, which plays the same game.
"""

from __future__ import annotations

import os
import runpy

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
_NATIVE = runpy.run_path(os.path.join(HERE, "server", "_native.py"))
COMPILED: list[str] = [os.path.join(*name.split(".")) + ".py" for name in _NATIVE["COMPILED"]]
"""The sources of ``server._native.COMPILED``, the one list of them."""


def _extensions() -> list[object]:
    if _NATIVE["pure_asked"]():
        print("underhall: UNDERHALL_PURE is set; installing without compiled modules")
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("underhall: mypyc is not available; installing without compiled modules")
        return []
    try:
        extensions = mypycify(
            # its own cache: the project's .mypy_cache is for the project's venv
            ["--cache-dir", os.path.join("build", "mypyc-cache"), *COMPILED],
            opt_level="3",
            group_name="underhall_native",
        )
    except (Exception, SystemExit) as exc:  # noqa: BLE001 (mypyc exits on a type error)
        print(f"underhall: mypyc could not compile ({exc!r}); installing without compiled modules")
        return []
    for ext in extensions:
        ext.optional = True  # no compiler or headers: warn and install pure Python
    return list(extensions)


setup(ext_modules=_extensions())
