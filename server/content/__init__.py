"""Rules data (terrain, monsters, player classes, items) and its strict loader."""

from server.content.loader import DATA_DIR, default_content, load_content
from server.content.schema import (
    COLOURS,
    DAMAGE_TYPES,
    ITEM_CATEGORIES,
    MONSTER_FLAGS,
    N_TERRAIN,
    RESIST_MAX,
    RESIST_MIN,
    UNKNOWN,
    Boosts,
    ClassDef,
    Content,
    ContentError,
    ItemDef,
    MonsterDef,
    Terrain,
    TerrainDef,
)

__all__ = [
    "COLOURS",
    "DAMAGE_TYPES",
    "DATA_DIR",
    "ITEM_CATEGORIES",
    "MONSTER_FLAGS",
    "N_TERRAIN",
    "RESIST_MAX",
    "RESIST_MIN",
    "UNKNOWN",
    "Boosts",
    "ClassDef",
    "Content",
    "ContentError",
    "ItemDef",
    "MonsterDef",
    "Terrain",
    "TerrainDef",
    "default_content",
    "load_content",
]
