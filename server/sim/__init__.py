"""The pure, deterministic simulation: levels, actors, rules and the tick.

Imports numpy, python-tcod, the standard library (never ``random``, ``time``,
``asyncio`` or ``os``) and the content schema. A seed plus the same calls
replays the same game.
"""

from server.sim.actors import Actor, Mind
from server.sim.ballistics import bolt_path
from server.sim.combat import AttackOutcome, hit_chance
from server.sim.commands import (
    Ascend,
    CloseDoor,
    Command,
    Descend,
    Move,
    OpenDoor,
    PickUp,
    Rest,
    Wait,
)
from server.sim.events import Event, RejectReason
from server.sim.fov import FieldOfView, field_of_view
from server.sim.level import Level
from server.sim.levelgen import generate_level
from server.sim.rays import RayTarget, RayTrace, trace_beam, trace_ray
from server.sim.spellcasting import spell_success_percent
from server.sim.world import World

__all__ = [
    "Actor",
    "Ascend",
    "AttackOutcome",
    "CloseDoor",
    "Command",
    "Descend",
    "Event",
    "FieldOfView",
    "Level",
    "Mind",
    "Move",
    "OpenDoor",
    "PickUp",
    "RayTarget",
    "RayTrace",
    "RejectReason",
    "Rest",
    "Wait",
    "World",
    "bolt_path",
    "field_of_view",
    "generate_level",
    "hit_chance",
    "spell_success_percent",
    "trace_beam",
    "trace_ray",
]
