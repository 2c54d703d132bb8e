// Ray and projectile animations, after the terminal client's client/animate.py:
// a `ray` event (rays and beams) or a `fly` event (a projectile's cells this
// tick) becomes a track, its cells drawn one per step; tracks play one after
// another, and a finished ray lingers a moment. Times are seconds.

export const CELL_S = 0.035; // seconds per cell
export const MAX_TRACK_S = 0.5; // longest one track plays (long rays go faster)
export const LINGER_S = 0.12; // a finished ray stays this long
export const MAX_QUEUED = 4; // tracks waiting at most; older ones are dropped

const COLOURS = [
  ["fire", "bright_red"], ["lava", "red"], ["plasma", "bright_red"],
  ["cold", "bright_cyan"], ["frost", "bright_cyan"], ["ice", "bright_cyan"],
  ["lightning", "bright_yellow"], ["electric", "bright_yellow"], ["shock", "bright_yellow"],
  ["acid", "bright_green"], ["poison", "green"], ["sleep", "bright_blue"],
  ["magic", "bright_magenta"], ["missile", "bright_magenta"], ["force", "bright_magenta"],
  ["death", "bright_black"], ["disintegr", "bright_black"], ["dark", "bright_black"],
  ["nether", "bright_black"], ["light", "bright_white"], ["holy", "bright_white"],
  ["dig", "yellow"], ["water", "blue"], ["sound", "white"], ["shard", "white"],
  ["chaos", "magenta"], ["nexus", "magenta"], ["mana", "bright_blue"],
];

export function damageColour(kind) {
  const lower = String(kind).toLowerCase();
  const found = COLOURS.find(([part]) => lower.includes(part));
  return found ? found[1] : "bright_white";
}

function rayGlyph(dx, dy) {
  dx = Math.sign(dx);
  dy = Math.sign(dy);
  if (dy === 0 && dx) return "-";
  if (dx === 0 && dy) return "|";
  if (dx && dy) return dx === dy ? "\\" : "/";
  return "*";
}

function cellsOf(value) {
  if (!Array.isArray(value)) return [];
  return value.filter((c) => Array.isArray(c) && c.length === 2 && Number.isInteger(c[0]) && Number.isInteger(c[1]));
}

function track(cells, glyphs, colour, trail) {
  const step = Math.min(CELL_S, MAX_TRACK_S / Math.max(1, cells.length));
  return { cells, glyphs, colour, trail, step, duration: step * cells.length + (trail ? LINGER_S : 0) };
}

// The tracks of a frame's `ray` and `fly` events, in event order.
export function tracksFromEvents(events, model) {
  const out = [];
  for (const ev of events) {
    if (!Array.isArray(ev)) continue;
    if (ev[0] === "ray" && ev.length >= 7) {
      const cells = cellsOf(ev[3]);
      if (!cells.length) continue;
      const glyphs = cells.map(([x, y], i) => {
        let step = [0, 0];
        if (i + 1 < cells.length) step = [cells[i + 1][0] - x, cells[i + 1][1] - y];
        else if (i > 0) step = [x - cells[i - 1][0], y - cells[i - 1][1]];
        return Math.max(Math.abs(step[0]), Math.abs(step[1])) === 1 ? rayGlyph(...step) : "*";
      });
      out.push(track(cells, glyphs, damageColour(typeof ev[2] === "string" ? ev[2] : ""), true));
    } else if (ev[0] === "fly" && ev.length >= 4 && typeof ev[2] === "string") {
      const cells = cellsOf(ev[3]);
      if (!cells.length) continue;
      let glyph = "*";
      let colour = damageColour(ev[2].slice(5));
      if (!ev[2].startsWith("bolt:")) {
        const entry = model.items[ev[2]];
        glyph = entry ? String(entry[1]).slice(0, 1) || "*" : "*";
        colour = entry ? entry[2] : "bright_white";
      }
      out.push(track(cells, cells.map(() => glyph), colour, false));
    }
  }
  return out;
}

export class Animator {
  constructor() {
    this.queue = [];
    this.started = 0;
  }

  add(tracks, now) {
    this.expire(now);
    if (!this.queue.length) this.started = now;
    this.queue.push(...tracks);
    while (this.queue.length > MAX_QUEUED) {
      this.queue.shift();
      this.started = now;
    }
  }

  expire(now) {
    while (this.queue.length && now - this.started >= this.queue[0].duration) {
      this.started += this.queue[0].duration;
      this.queue.shift();
    }
  }

  busy(now) {
    this.expire(now);
    return this.queue.length > 0;
  }

  // What to draw over the map at `now`: [[x, y, glyph, colour], ...].
  marks(now) {
    this.expire(now);
    if (!this.queue.length) return [];
    const t = this.queue[0];
    const shown = Math.min(t.cells.length, Math.floor((now - this.started) / t.step) + 1);
    const out = [];
    for (let i = t.trail ? 0 : shown - 1; i < shown; i++) out.push([t.cells[i][0], t.cells[i][1], t.glyphs[i], t.colour]);
    return out;
  }
}
