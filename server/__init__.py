"""Underhall's server: the simulation (``sim``), the game around it
(``game``), the network (``net``), storage (``store``) and the cluster.

Every module runs from its Python source. Installs before issue 44 compiled
the tick's hot modules with mypyc into extensions beside their sources;
Python imports such an extension ahead of the source, so after a ``git
pull`` the old code would run. Importing this package therefore refuses to
while those extensions are still there (:func:`refuse_leftover_build`).
"""

from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

LEFTOVER = "underhall_native__mypyc"
"""The shared library an older install compiled beside the ``server``
package; every compiled module imported it."""


def refuse_leftover_build(root: Path) -> None:
    """Refuse to run beside the extensions of an older, compiled install.

    Args:
        root: the directory that holds the ``server`` package.

    Raises:
        ImportError: ``root`` holds :data:`LEFTOVER` (one stat per extension
            suffix); the message says which files to delete.
    """
    for suffix in EXTENSION_SUFFIXES:
        found = root / (LEFTOVER + suffix)
        if found.exists():
            raise ImportError(
                f"{found} and the .so files beside the server's modules are compiled "
                "modules of an older install, and Python would run them instead of the "
                f"sources; delete them: cd {root} && rm {LEFTOVER}*.so && "
                "find server -name '*.so' -delete"
            )


refuse_leftover_build(Path(__file__).resolve().parent.parent)
