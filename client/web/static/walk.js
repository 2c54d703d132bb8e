// Running, travel and auto-explore: which step the page takes next. The same
// rules as the terminal client's client/travel.py (NetHack's run and travel,
// DCSS's auto-explore):
//
// - run: keep going one way; follow a corridor round its bends; stop at a
//   fork, on entering a room from a corridor, next to something new (a door,
//   stairs, an altar, a fountain, an item), when the way ahead is blocked,
//   and before entering a cell already walked through (a loop);
// - travel: walk the shortest known way to a cell;
// - explore: walk to the nearest known walkable cell next to unknown ones,
//   again and again.
//
// All three stop when a monster not in view before comes into view, when the
// character is hurt or cannot move. Each step is one ordinary `move`: the
// server stays the judge. Paths run over remembered walkable cells (closed
// doors included: a move opens one), never into lava or a creature in view.

import { UNKNOWN, FLAG } from "./model.js";

const NEIGHBOURS = [[-1, -1], [0, -1], [1, -1], [-1, 0], [1, 0], [-1, 1], [0, 1], [1, 1]];
const FEATURES = new Set(["door_closed", "door_open", "stairs_up", "stairs_down", "altar", "fountain"]);
const STUCK_STEPS = 3;

function terrainKey(model, x, y) {
  const entry = model.terrain[model.known[y * model.w + x]];
  return entry ? entry[0] : "";
}

function inside(model, x, y) {
  return x >= 0 && y >= 0 && x < model.w && y < model.h;
}

export function walkable(model, x, y) {
  if (!inside(model, x, y) || model.known[y * model.w + x] === UNKNOWN) return false;
  const key = terrainKey(model, x, y);
  if (key === "lava") return false;
  return key === "door_closed" || model.passable(x, y);
}

function others(model) {
  const out = new Set();
  for (const a of model.actors.values()) if (a.id !== model.id) out.add(a.y * model.w + a.x);
  return out;
}

// The first cell of the shortest known way from `pos` to a cell `goal` accepts
// (breadth first over walkable cells, creatures in view in the way); a goal
// that cannot be entered ends the way beside it. null if there is none.
export function firstStep(model, pos, goal) {
  const w = model.w;
  const blocked = others(model);
  const from = new Int32Array(w * model.h).fill(-1);
  const start = pos[1] * w + pos[0];
  from[start] = start;
  const queue = [start];
  const first = (at) => {
    let cell = at;
    while (from[cell] !== start) cell = from[cell];
    return [cell % w, Math.floor(cell / w)];
  };
  for (let q = 0; q < queue.length; q++) {
    const at = queue[q];
    const x = at % w;
    const y = (at - x) / w;
    if (at !== start && goal(x, y)) return first(at);
    for (const [dx, dy] of NEIGHBOURS) {
      const nx = x + dx;
      const ny = y + dy;
      if (!inside(model, nx, ny)) continue;
      const next = ny * w + nx;
      if (from[next] !== -1) continue;
      from[next] = at;
      if (walkable(model, nx, ny) && !blocked.has(next)) queue.push(next);
      else if (goal(nx, ny)) return at === start ? null : first(at);
    }
  }
  return null;
}

function towards(pos, cell) {
  return [Math.sign(cell[0] - pos[0]), Math.sign(cell[1] - pos[1])];
}

function monstersInView(model) {
  return [...model.actors.values()].filter((a) => a.id !== model.id && !(a.flags & FLAG.player));
}

export class Walk {
  // kind: "run" (with dir), "travel" (with goal [x, y]) or "explore".
  constructor(kind, { dir = null, goal = null } = {}) {
    this.kind = kind;
    this.dir = dir;
    this.goal = goal;
    this.seen = new Set();
    this.hp = 0;
    this.last = null;
    this.stuck = 0;
    this.near = new Set();
    this.corridor = false;
    this.visited = new Set();
    this.steps = 0;
  }

  start(model) {
    this.seen = new Set(monstersInView(model).map((a) => a.id));
    this.hp = model.me.hp || 0;
    const pos = model.position();
    if (pos) {
      this.near = this.featuresNear(model, pos);
      this.corridor = this.inCorridor(model, pos);
    }
    return this;
  }

  // The next direction [dx, dy], or {stop: why} ("" when there is nothing to say).
  next(model) {
    const pos = model.position();
    if (!pos || model.me.dead) return { stop: "" };
    const hp = model.me.hp || 0;
    if (hp < this.hp) return { stop: "You stop: you are hurt." };
    this.hp = hp;
    const newcomer = monstersInView(model).sort((a, b) => a.id - b.id).find((a) => !this.seen.has(a.id));
    if (newcomer) {
      const kind = model.kindEntry(newcomer.kind);
      return { stop: `You stop: ${kind ? `the ${kind[1]}` : "something"} comes into view.` };
    }
    const here = pos[1] * model.w + pos[0];
    if (this.last === here) {
      this.stuck += 1;
      if (this.stuck >= STUCK_STEPS) return { stop: "You stop: something is in the way." };
    } else {
      this.stuck = 0;
    }
    this.last = here;
    this.visited.add(here);
    const first = this.steps === 0;
    this.steps += 1;
    if (this.kind === "run") return this.run(model, pos, first);
    if (this.kind === "travel") return this.travel(model, pos);
    return this.explore(model, pos);
  }

  travel(model, pos) {
    const [gx, gy] = this.goal;
    if (pos[0] === gx && pos[1] === gy) return { stop: "" };
    const cell = firstStep(model, pos, (x, y) => x === gx && y === gy);
    if (!cell) {
      if (Math.max(Math.abs(gx - pos[0]), Math.abs(gy - pos[1])) <= 1) return { stop: "" };
      return { stop: "You know no way there." };
    }
    return towards(pos, cell);
  }

  explore(model, pos) {
    const w = model.w;
    const edge = (x, y) => {
      if (!walkable(model, x, y) || this.visited.has(y * w + x)) return false;
      return NEIGHBOURS.some(([dx, dy]) => inside(model, x + dx, y + dy) && model.known[(y + dy) * w + x + dx] === UNKNOWN);
    };
    const cell = firstStep(model, pos, edge);
    if (!cell) return { stop: "Nothing left to explore that you can reach." };
    return towards(pos, cell);
  }

  run(model, pos, first) {
    const d = this.dir;
    const w = model.w;
    const blocked = others(model);
    const free = ([x, y]) => walkable(model, x, y) && !blocked.has(y * w + x) && !this.visited.has(y * w + x);
    const near = this.featuresNear(model, pos);
    const corridor = this.inCorridor(model, pos);
    const wasCorridor = this.corridor;
    this.corridor = corridor;
    const news = [...near].some((c) => !this.near.has(c));
    this.near = near;
    const ahead = [pos[0] + d[0], pos[1] + d[1]];
    if (first) return free(ahead) ? d : { stop: "" };
    if (news || model.objs.has(pos[1] * w + pos[0])) return { stop: "" };
    if (wasCorridor && !corridor) return { stop: "" };
    if (free(ahead)) return d;
    if (!corridor) return { stop: "" };
    const back = [pos[0] - d[0], pos[1] - d[1]];
    let turns = NEIGHBOURS.map(([dx, dy]) => [pos[0] + dx, pos[1] + dy])
      .filter((c) => free(c) && !(c[0] === back[0] && c[1] === back[1]));
    if (turns.length > 1) {
      turns = turns.filter((c) => Math.max(Math.abs(c[0] - back[0]), Math.abs(c[1] - back[1])) > 1);
    }
    if (turns.length !== 1) return { stop: "" };
    this.dir = towards(pos, turns[0]);
    return this.dir;
  }

  // In a corridor: no 2 x 2 block of walkable cells holds the cell, and at
  // most two of its straight neighbours are walkable.
  inCorridor(model, [x, y]) {
    const at = (cx, cy) => walkable(model, cx, cy);
    for (const bx of [x - 1, x]) {
      for (const by of [y - 1, y]) {
        if (at(bx, by) && at(bx + 1, by) && at(bx, by + 1) && at(bx + 1, by + 1)) return false;
      }
    }
    return [[0, -1], [-1, 0], [1, 0], [0, 1]].filter(([dx, dy]) => at(x + dx, y + dy)).length <= 2;
  }

  // Cells next to `pos` holding a feature or an item (as cell indexes).
  featuresNear(model, [px, py]) {
    const out = new Set();
    for (const [dx, dy] of NEIGHBOURS) {
      const x = px + dx;
      const y = py + dy;
      if (!inside(model, x, y)) continue;
      const at = y * model.w + x;
      if (FEATURES.has(terrainKey(model, x, y)) || model.objs.has(at)) out.add(at);
    }
    return out;
  }
}
