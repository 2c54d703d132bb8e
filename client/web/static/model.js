// The browser client's model: what the server said, kept as docs/protocol.md
// describes (welcome tables, snap, delta). It never touches the page or the
// network; app.js feeds it decoded messages and draws from it.

export const UNKNOWN = 255;
export const FLAG = { asleep: 1, fleeing: 2, hunting: 4, you: 8, player: 16 };
const DELTA = {
  tick: 0, ack: 1, tiles: 2, fov: 3, add: 4, upd: 5, rm: 6, objs: 7, ev: 8, me: 9,
  rej: 10, mv: 11, st: 12, back: 13,
};
// `st` directions: 0 north, then clockwise.
const STEP = [[0, -1], [1, -1], [1, 0], [1, 1], [0, 1], [-1, 1], [-1, 0], [-1, -1]];
const KEEP_TICKS = 100; // an actor `rm` removed may come `back` within this many ticks

function field(delta, name) {
  const byNumber = delta[DELTA[name]];
  return byNumber !== undefined ? byNumber : undefined;
}

export class Model {
  constructor() {
    this.reset();
  }

  reset() {
    this.welcome = null;
    this.id = -1;
    this.name = "";
    this.tickRate = 10;
    this.terrain = [];
    this.kinds = [];
    this.items = {};
    this.spells = {};
    this.statuses = [];
    this.reasons = [];
    this.classes = [];
    this.clear();
  }

  clear() {
    this.depth = 0;
    this.w = 0;
    this.h = 0;
    this.known = new Uint8Array(0);
    this.visible = new Uint8Array(0);
    this.actors = new Map(); // id -> {id, kind, name, x, y, hp, max_hp, flags, sts}
    this.kept = new Map(); // id -> [record, tick removed]
    this.objs = new Map(); // y * w + x -> item key
    this.me = {};
    this.ack = -1;
    this.tick = 0;
    this.changed = true; // the whole map must be redrawn
  }

  applyWelcome(msg) {
    this.reset();
    this.welcome = msg;
    this.id = msg.id;
    this.name = msg.name;
    this.tickRate = msg.tick_rate || 10;
    this.tick = msg.tick;
    this.terrain = msg.terrain || [];
    this.kinds = msg.kinds || [];
    this.items = msg.items || {};
    this.spells = msg.spells || {};
    this.statuses = msg.statuses || [];
    this.reasons = msg.reasons || [];
    this.classes = msg.classes || [];
  }

  // --- snap and delta ---------------------------------------------------

  applySnap(msg) {
    this.clear();
    this.depth = msg.depth;
    this.w = msg.w;
    this.h = msg.h;
    this.known = new Uint8Array(msg.map);
    this.visible = new Uint8Array(this.w * this.h);
    this.setFov(msg.fov);
    for (const rec of msg.actors) this.putRecord(rec);
    this.setObjs(msg.objs);
    this.me = Object.assign({}, msg.me);
    this.ack = msg.ack;
    this.tick = msg.tick;
    return this.refusals(msg.rej);
  }

  // Apply one delta in the documented order; returns the refusals [[seq, reason]].
  applyDelta(d) {
    const tick = field(d, "tick");
    this.tick = tick !== undefined ? tick : this.tick + 1;
    const ack = field(d, "ack");
    if (ack !== undefined) this.ack += ack;
    const tiles = field(d, "tiles");
    if (tiles) {
      for (let i = 0; i + 2 < tiles.length; i += 3) {
        this.known[tiles[i + 1] * this.w + tiles[i]] = tiles[i + 2];
      }
    }
    const fov = field(d, "fov");
    if (fov) this.setFov(fov);
    const rm = field(d, "rm");
    if (rm) {
      let id = 0;
      for (const gap of rm) {
        id += gap;
        const rec = this.actors.get(id);
        if (rec) this.kept.set(id, [rec, this.tick]);
        this.actors.delete(id);
      }
    }
    const add = field(d, "add");
    if (add) for (const rec of add) this.putRecord(rec);
    const back = field(d, "back");
    if (back) {
      let id = 0;
      for (let i = 0; i + 2 < back.length; i += 3) {
        id += back[i];
        const kept = this.kept.get(id);
        if (kept) {
          const rec = kept[0];
          rec.x = back[i + 1];
          rec.y = back[i + 2];
          this.actors.set(id, rec);
          this.kept.delete(id);
        }
      }
    }
    const upd = field(d, "upd");
    if (upd) {
      for (const row of upd) {
        const rec = this.actors.get(row[0]);
        if (!rec) continue;
        [, rec.x, rec.y, rec.hp, rec.max_hp, rec.flags, rec.sts] = row;
      }
    }
    const mv = field(d, "mv");
    if (mv) {
      let id = 0;
      for (let i = 0; i + 2 < mv.length; i += 3) {
        id += mv[i];
        const rec = this.actors.get(id);
        if (rec) {
          rec.x = mv[i + 1];
          rec.y = mv[i + 2];
        }
      }
    }
    const st = field(d, "st");
    if (st) {
      let id = 0;
      for (const value of st) {
        id += value >> 3;
        const rec = this.actors.get(id);
        if (rec) {
          const [dx, dy] = STEP[value & 7];
          rec.x += dx;
          rec.y += dy;
        }
      }
    }
    const objs = field(d, "objs");
    if (objs) this.setObjs(objs);
    const me = field(d, "me");
    if (me) Object.assign(this.me, me);
    for (const [id, [, when]] of this.kept) {
      if (this.tick - when > KEEP_TICKS) this.kept.delete(id);
    }
    return this.refusals(field(d, "rej"));
  }

  events(d) {
    return (d.t === "snap" ? d.ev : field(d, "ev")) || [];
  }

  putRecord(rec) {
    const [id, kind, name, x, y, hp, max_hp, flags, sts] = rec;
    this.actors.set(id, { id, kind, name, x, y, hp, max_hp, flags, sts });
    this.kept.delete(id);
  }

  setObjs(flat) {
    for (let i = 0; i + 2 < flat.length; i += 3) {
      const at = flat[i + 1] * this.w + flat[i];
      if (flat[i + 2] === "") this.objs.delete(at);
      else this.objs.set(at, flat[i + 2]);
    }
  }

  setFov(fov) {
    const [x0, y0, fw, fh, bits] = fov;
    this.visible.fill(0);
    for (let j = 0; j < fh; j++) {
      for (let i = 0; i < fw; i++) {
        const k = j * fw + i;
        if ((bits[k >> 3] >> (k & 7)) & 1) {
          const x = x0 + i;
          const y = y0 + j;
          if (x >= 0 && y >= 0 && x < this.w && y < this.h) this.visible[y * this.w + x] = 1;
        }
      }
    }
  }

  refusals(rej) {
    const out = [];
    if (!rej) return out;
    for (let i = 0; i + 1 < rej.length; i += 2) {
      out.push([this.ack - rej[i], this.reasons[rej[i + 1]] || String(rej[i + 1])]);
    }
    return out;
  }

  // --- reading ------------------------------------------------------------

  self() {
    return this.actors.get(this.id) || null;
  }

  position() {
    const rec = this.self();
    if (rec) return [rec.x, rec.y];
    if (this.me.x !== undefined) return [this.me.x, this.me.y];
    return null;
  }

  kindEntry(code) {
    return this.kinds[code] || null; // [key, name, glyph, colour]
  }

  kindByKey(key) {
    return this.kinds.find((k) => k[0] === key) || null;
  }

  itemName(key) {
    const entry = this.items[key];
    return entry ? entry[0] : String(key).replace(/_/g, " ");
  }

  spellName(key) {
    const entry = this.spells[key];
    return entry ? entry[0] : String(key).replace(/_/g, " ");
  }

  statusName(code) {
    const entry = this.statuses[code];
    return entry ? entry[1] : `status ${code}`;
  }

  inventory() {
    return (this.me.inv || []).map(([letter, key, count, slot, charges, flags]) => ({
      letter, key, count, slot, charges, flags,
    }));
  }

  knownSpells() {
    return (this.me.spells || []).map(([letter, key, fail, cost, forgotten]) => {
      const entry = this.spells[key] || [key, 0, "", "self"];
      return {
        letter, key, fail, cost, forgotten,
        name: entry[0], level: entry[1], school: entry[2], aim: entry[3],
      };
    });
  }

  passable(x, y) {
    if (x < 0 || y < 0 || x >= this.w || y >= this.h) return false;
    const entry = this.terrain[this.known[y * this.w + x]];
    return Boolean(entry && entry[4]);
  }

  // Monsters and players in view but oneself, nearest first.
  targets() {
    const pos = this.position();
    if (!pos) return [];
    const out = [...this.actors.values()].filter((a) => a.id !== this.id);
    const dist = (a) => Math.max(Math.abs(a.x - pos[0]), Math.abs(a.y - pos[1]));
    out.sort((a, b) => dist(a) - dist(b) || a.id - b.id);
    return out;
  }

  actorAt(x, y) {
    let found = null;
    for (const a of this.actors.values()) {
      if (a.x === x && a.y === y && (!found || a.id === this.id)) found = a;
    }
    return found;
  }

  // Cells of the known stairs, "<" up and ">" down.
  stairs(glyph) {
    const code = glyph === "<" ? 11 : 12;
    const out = [];
    for (let i = 0; i < this.known.length; i++) {
      if (this.known[i] === code) out.push([i % this.w, Math.floor(i / this.w)]);
    }
    return out;
  }
}

// The targeting path of docs/protocol.md ("The targeting path"): cells
// entered from origin towards target, stopping before a blocked cell.
export function boltPath(origin, target, blocked, w, h, pastTarget = false) {
  const [ox, oy] = origin;
  const [tx, ty] = target;
  if (ox === tx && oy === ty) return [];
  const dx = tx - ox;
  const dy = ty - oy;
  const sx = dx > 0 ? 1 : -1;
  const sy = dy > 0 ? 1 : -1;
  const xMajor = Math.abs(dx) > Math.abs(dy);
  const long = xMajor ? Math.abs(dx) : Math.abs(dy);
  const short = xMajor ? Math.abs(dy) : Math.abs(dx);
  const cells = [];
  for (let i = 1; pastTarget || i <= long; i++) {
    const m = Math.floor((Math.floor(long / 2) + i * short) / long);
    const x = xMajor ? ox + sx * i : ox + sx * m;
    const y = xMajor ? oy + sy * m : oy + sy * i;
    if (x < 0 || y < 0 || x >= w || y >= h || blocked(x, y)) break;
    cells.push([x, y]);
    if (cells.length > w + h) break;
  }
  return cells;
}
