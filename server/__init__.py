"""Underhall's server: the simulation (``sim``), the game around it
(``game``), the network (``net``), storage (``store``) and the cluster.

Importing it first picks the build of the tick's hot modules
(:func:`server._native.choose`): the mypyc-compiled extensions when they are
current, else their Python sources.
"""

from server import _native

_native.choose()
