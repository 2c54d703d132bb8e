#!/usr/bin/env node
// A small Underhall client written from docs/protocol.md alone (no Python
// source was read), to check that the document is enough to interoperate.
//
//   node client.mjs URL NAME [CLASS]
//
// It joins, keeps its own state exactly as the document describes, plays a
// fixed script of about forty commands (moves, a wait, a rest, door commands,
// a pickup, and version 2's item commands: eat, wield, remove, drop, throw,
// cast when it knows a spell) mixed with a ping, a chat, looks (`look` /
// `info`), one malformed frame and one unknown message type, applies every
// delta, checks what it receives against the document, then reconnects with
// its token and compares the state it built from deltas with the server's
// fresh `snap`. It prints one JSON object to stdout and exits 0, or prints the
// problem to stderr and exits 1.

import WebSocket from "ws";
import { decode, encode } from "@msgpack/msgpack";

const PROTOCOL_VERSION = 12;
// version 11: a delta's map key k is the field DELTA_KEYS[k]
const DELTA_KEYS = ["tick", "ack", "tiles", "fov", "add", "upd", "rm", "objs", "ev", "me", "rej", "mv", "st", "back"];
// version 8: how many ticks a record removed by delta.rm is kept for delta.back
const BACK_TICKS = 100;
// version 7: the direction of each step code of delta.st, [dx, dy],
// clockwise from north.
const STEP_DIRECTIONS = [[0, -1], [1, -1], [1, 0], [1, 1], [0, 1], [-1, 1], [-1, 0], [-1, -1]];
const WAIT_MS = 3000; // bound on any single wait for the server
const RUN_MS = 15000; // bound on the whole run
const MAX_FRAME = 4096;
const DEBUG = Boolean(process.env.UNDERHALL_INTEROP_DEBUG); // log every message to stderr

const [url, name, klass] = process.argv.slice(2);
if (!url || !name) {
  process.stderr.write("usage: node client.mjs URL NAME [CLASS]\n");
  process.exit(2);
}

class Unexpected extends Error {}
function fail(msg) {
  throw new Unexpected(msg);
}
function check(cond, msg) {
  if (!cond) fail(msg);
}

const runTimer = setTimeout(() => {
  process.stderr.write(`client.mjs: the whole run took more than ${RUN_MS} ms\n`);
  process.exit(1);
}, RUN_MS);

// ---- types -----------------------------------------------------------------

const isInt = (v) => Number.isInteger(v);
const isStr = (v) => typeof v === "string";
const isBool = (v) => typeof v === "boolean";
const isBin = (v) => v instanceof Uint8Array;
const isList = (v) => Array.isArray(v);
const isMap = (v) => v !== null && typeof v === "object" && !isList(v) && !isBin(v);
const isNum = (v) => typeof v === "number";

// ---- one connection ----------------------------------------------------------

// Wraps a websocket: every decoded message goes to `onMessage` (which updates
// the state) and then to whoever waits for it.
class Conn {
  constructor(url, onMessage) {
    this.onMessage = onMessage;
    this.waiters = [];
    this.closed = null; // {code, reason} once closed
    this.failure = null;
    this.ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 1 << 20 });
    this.ws.binaryType = "nodebuffer";
    this.ws.on("message", (data, isBinary) => this.#receive(data, isBinary));
    this.ws.on("close", (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.#wake();
    });
    this.ws.on("error", (err) => {
      this.failure ??= `websocket error: ${err.message}`;
      this.#wake();
    });
  }

  opened() {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Unexpected(`could not connect to ${url}`)), WAIT_MS);
      this.ws.once("open", () => {
        clearTimeout(timer);
        resolve();
      });
      this.ws.once("error", (err) => {
        clearTimeout(timer);
        reject(new Unexpected(`could not connect to ${url}: ${err.message}`));
      });
    });
  }

  #receive(data, isBinary) {
    try {
      check(isBinary, "the server sent a text frame");
      let msg;
      try {
        msg = decode(data);
      } catch (err) {
        fail(`the server sent a frame that is not msgpack: ${err.message}`);
      }
      check(isMap(msg), `a server message must be a map: ${show(msg)}`);
      // version 10: a delta is the one message without "t"; every other one has a string "t"
      check(msg.t !== "delta", `a delta must come without "t": ${show(msg)}`);
      if (msg.t === undefined) {
        // version 11: its keys are the numbers of its fields (a JS object names them "0", "1", ...)
        const named = { t: "delta" };
        for (const [k, v] of Object.entries(msg)) {
          const field = /^(0|[1-9][0-9]*)$/.test(k) ? DELTA_KEYS[Number(k)] : undefined;
          check(field !== undefined, `a delta key must be a field's number: ${show(k)} in ${show(msg)}`);
          named[field] = v;
        }
        msg = named;
      }
      check(isStr(msg.t), `a server message's "t" must be a string: ${show(msg)}`);
      if (DEBUG) process.stderr.write(`<- ${show(msg)}\n`);
      this.onMessage(msg);
      for (const w of this.waiters) if (!w.done && w.pred(msg)) w.finish(null, msg);
    } catch (err) {
      this.failure ??= err instanceof Unexpected ? err.message : String(err.stack || err);
    }
    this.#wake();
  }

  #wake() {
    for (const w of this.waiters) {
      if (w.done) continue;
      if (this.failure) w.finish(new Unexpected(this.failure));
      else if (this.closed) w.finish(new Unexpected(`connection closed (${this.closed.code} ${this.closed.reason}) while waiting for ${w.what}`));
    }
    this.waiters = this.waiters.filter((w) => !w.done);
  }

  // Resolves with the first message (from now on) for which pred is true.
  waitFor(what, pred, ms = WAIT_MS) {
    return new Promise((resolve, reject) => {
      const w = {
        what,
        pred,
        done: false,
        finish: (err, msg) => {
          w.done = true;
          clearTimeout(w.timer);
          if (err) reject(err);
          else resolve(msg);
        },
      };
      w.timer = setTimeout(() => w.finish(new Unexpected(`timed out after ${ms} ms waiting for ${what}`)), ms);
      this.waiters.push(w);
      this.#wake();
    });
  }

  // Resolves once cond() holds (checked after every message).
  until(what, cond, ms = WAIT_MS) {
    if (this.failure) return Promise.reject(new Unexpected(this.failure));
    if (cond()) return Promise.resolve();
    return this.waitFor(what, () => cond(), ms).then(() => undefined);
  }

  sendRaw(bytes) {
    if (this.failure) fail(this.failure);
    check(!this.closed, "connection closed");
    this.ws.send(bytes, { binary: true });
  }

  send(msg) {
    if (DEBUG) process.stderr.write(`-> ${show(msg)}\n`);
    const bytes = encode(msg);
    check(bytes.length <= MAX_FRAME, `refusing to send a ${bytes.length}-byte frame`);
    this.sendRaw(bytes);
  }

  close() {
    if (this.closed) return Promise.resolve();
    const done = new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.ws.terminate();
        resolve();
      }, WAIT_MS);
      this.ws.once("close", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    this.ws.close(1000, "bye");
    return done;
  }
}

// Version 5's [gap, x, y, ...] (mv, and version 8's back): each id the one
// before plus its gap (from 0), so every gap is at least 1. Returns
// [[id, x, y], ...] after checking the whole list.
function gapTriples(flat, where) {
  check(isList(flat) && flat.length % 3 === 0 && flat.every(isInt), `${where} ${show(flat)}`);
  const out = [];
  let id = 0;
  for (let i = 0; i < flat.length; i += 3) {
    const [gap, x, y] = flat.slice(i, i + 3);
    check(gap >= 1, `${where} gap ${gap} (ids must increase)`);
    id += gap;
    out.push([id, x, y]);
  }
  return out;
}

function show(v) {
  return JSON.stringify(v, (k, x) => (x instanceof Uint8Array ? `<${x.length} bytes>` : x));
}

// ---- the state the document tells a client to keep -----------------------------

class Game {
  constructor() {
    this.welcome = null;
    this.kindKeys = [];
    this.reasons = []; // welcome.reasons (version 6)
    this.id = null;
    this.terrain = null;
    this.snaps = 0;
    // replaced wholesale by every snap:
    this.tick = null;
    this.depth = null;
    this.w = 0;
    this.h = 0;
    this.map = null; // Uint8Array w*h, 255 unknown
    this.visible = null; // Uint8Array w*h, 1 in view
    this.fovRaw = null;
    this.actors = new Map(); // id -> {id, kind, name, x, y, hp, max_hp, flags}
    this.kept = new Map(); // version 8: id -> [record, tick of its rm]
    this.objs = new Map(); // "x,y" -> item key
    this.me = null;
    this.ack = -1;
    // seen over the session:
    this.errors = [];
    this.rejects = []; // [seq, reason]
    this.events = 0;
    this.eventKinds = {};
    this.pongs = new Map(); // id -> tick
    this.infos = new Map(); // id -> {found, about}
    this.chats = [];
    this.lastDeltaTick = null;
    this.deaths = 0;
    this.dropped = []; // seqs of commands neither carried out nor rejected: a bug
  }

  handle(msg) {
    switch (msg.t) {
      case "welcome":
        return this.onWelcome(msg);
      case "snap":
        return this.onSnap(msg);
      case "delta":
        return this.onDelta(msg);
      case "reject":
        check(isInt(msg.seq) && isStr(msg.reason), `bad reject ${show(msg)}`);
        this.rejects.push([msg.seq, msg.reason]);
        return;
      case "error":
        check(isStr(msg.code) && isStr(msg.msg) && isBool(msg.fatal), `bad error ${show(msg)}`);
        this.errors.push(msg.code);
        return;
      case "pong":
        check(isInt(msg.id) && isInt(msg.tick), `bad pong ${show(msg)}`);
        this.pongs.set(msg.id, msg.tick);
        return;
      case "chat":
        check(isStr(msg.from) && isStr(msg.text) && isInt(msg.tick), `bad chat ${show(msg)}`);
        this.chats.push([msg.from, msg.text]);
        return;
      case "info":
        this.onInfo(msg);
        return;
      default:
        // "clients ignore keys and events they do not know" -- a new message
        // type, though, would be a new protocol version.
        fail(`unknown server message type ${show(msg.t)}`);
    }
  }

  onWelcome(m) {
    check(this.welcome === null, "a second welcome");
    check(m.v === PROTOCOL_VERSION, `welcome.v is ${m.v}`);
    for (const k of ["id", "tick", "tick_rate"]) check(isInt(m[k]), `welcome.${k} is not an int`);
    for (const k of ["name", "token", "motd"]) check(isStr(m[k]), `welcome.${k} is not a string`);
    check(isBool(m.resumed), "welcome.resumed is not a bool");
    check(isList(m.terrain) && isList(m.kinds) && isMap(m.items) && isList(m.classes), "welcome tables");
    check(m.tick_rate > 0, "welcome.tick_rate must be positive");
    // "Codes (fixed): 0 rock, 1 wall, 2 floor, ... 12 stairs down."
    const fixed = ["rock", "wall", "floor", "closed door", "open door", "water", "lava", "rubble",
      "tree", "fountain", "altar", "stairs up", "stairs down"];
    check(m.terrain.length >= fixed.length && m.terrain.length < 255, "welcome.terrain length");
    m.terrain.forEach((e, code) => {
      check(isList(e) && e.length >= 6 && isStr(e[0]) && isStr(e[1]) && isStr(e[2]) && isStr(e[3])
        && isBool(e[4]) && isBool(e[5]), `welcome.terrain[${code}] = ${show(e)}`);
    });
    check(m.terrain[2][4] && !m.terrain[1][4] && !m.terrain[0][4], "floor passable, wall and rock not");
    // kinds: [key, name, glyph, colour], indexed by the kind code of actor records (version 5)
    m.kinds.forEach((e, code) => check(isList(e) && e.length >= 4 && e.slice(0, 4).every(isStr), `kinds[${code}] = ${show(e)}`));
    this.kindKeys = m.kinds.map((e) => e[0]);
    check(new Set(this.kindKeys).size === this.kindKeys.length, "welcome.kinds keys are unique");
    // reasons: refusal reasons, indexed by the code of a rej pair (version 6)
    check(isList(m.reasons) && m.reasons.length > 0 && m.reasons.every(isStr), `welcome.reasons = ${show(m.reasons)}`);
    check(new Set(m.reasons).size === m.reasons.length, "welcome.reasons are unique");
    for (const r of ["blocked", "occupied", "dead"]) check(m.reasons.includes(r), `welcome.reasons lacks ${r}`);
    this.reasons = m.reasons;
    // items: [name, glyph, colour, category, about]
    const categories = ["food", "potion", "scroll", "spellbook", "weapon", "thrown", "armour", "shield",
      "robe", "helmet", "gloves", "boots", "wand", "horn", "misc"];
    for (const [k, v] of Object.entries(m.items)) {
      check(isList(v) && v.length >= 5 && v.slice(0, 4).every(isStr) && isMap(v[4]), `items.${k} = ${show(v)}`);
      check(categories.includes(v[3]), `items.${k} has category ${show(v[3])}`);
      const about = v[4];
      const aboutTypes = { power: isInt, defence: isInt, resist: isMap, enchant: isStr, nutrition: isInt,
        range: isInt, fragile: isBool, vegetarian: isBool, rustproof: isBool, acidproof: isBool,
        metallic: isBool, weight: isInt, slot: isStr, description: isStr };
      for (const [key, value] of Object.entries(about)) {
        if (key in aboutTypes) check(aboutTypes[key](value), `items.${k} about.${key} = ${show(value)}`);
      }
    }
    for (const c of m.classes) check(isList(c) && c.length >= 2 && isStr(c[0]) && isStr(c[1]), "classes");
    check(isMap(m.spells) && isList(m.statuses) && isList(m.damage_types), "welcome spells / statuses / damage_types");
    for (const [k, v] of Object.entries(m.spells)) {
      check(isList(v) && v.length >= 4 && isStr(v[0]) && isInt(v[1]) && isStr(v[2])
        && ["dir", "cell", "self"].includes(v[3]), `spells.${k} = ${show(v)}`);
    }
    for (const e of m.statuses) check(isList(e) && e.length >= 2 && isStr(e[0]) && isStr(e[1]), `statuses entry ${show(e)}`);
    check(m.damage_types.every(isStr), "damage_types are strings");
    this.welcome = m;
    this.id = m.id;
    this.terrain = m.terrain;
  }

  passable(code) {
    return code !== 255 && code < this.terrain.length && this.terrain[code][4] === true;
  }

  onSnap(m) {
    check(this.welcome !== null, "snap before welcome");
    for (const k of ["tick", "depth", "w", "h", "ack"]) check(isInt(m[k]), `snap.${k} is not an int`);
    check(m.w > 0 && m.h > 0, "snap size");
    check(isBin(m.map) && m.map.length === m.w * m.h, `snap.map must be ${m.w}x${m.h} bytes`);
    // A snap replaces the whole state.
    this.snaps += 1;
    this.tick = m.tick;
    this.depth = m.depth;
    this.w = m.w;
    this.h = m.h;
    this.map = Uint8Array.from(m.map);
    for (const c of this.map) check(c === 255 || c < this.terrain.length, `snap.map has code ${c}`);
    this.setFov(m.fov);
    this.actors = new Map();
    this.kept = new Map();
    check(isList(m.actors), "snap.actors");
    for (const rec of m.actors) this.addActor(rec, "snap");
    this.objs = new Map();
    this.applyObjs(m.objs, "snap");
    check(isMap(m.me), "snap.me");
    this.me = {};
    this.mergeMe(m.me, true);
    this.ack = m.ack;
    this.lastDeltaTick = m.tick;
    this.onRejects(m, "snap");
    if ("ev" in m) {
      check(isList(m.ev), "snap.ev");
      for (const e of m.ev) this.onEvent(e);
    }
    this.checkInvariants("snap");
  }

  // Version 3: the commands refused this tick ride in the snap or delta;
  // version 6: "rej": flat pairs, a code the index of its reason in
  // welcome.reasons; version 10: [ack - seq, code, ...], each seq counted
  // back from the frame's ack once applied.
  onRejects(m, where) {
    if (!("rej" in m)) return;
    check(isList(m.rej) && m.rej.length % 2 === 0 && m.rej.length > 0 && m.rej.every(isInt), `bad ${where}.rej ${show(m.rej)}`);
    for (let i = 0; i < m.rej.length; i += 2) {
      const [behind, code] = m.rej.slice(i, i + 2);
      const seq = this.ack - behind;
      check(seq >= 0, `${where}.rej refuses seq ${seq}, which this client never sent`);
      check(code >= 0 && code < this.reasons.length, `${where}.rej code ${code} is not an index of welcome.reasons`);
      this.rejects.push([seq, this.reasons[code]]);
    }
  }

  onDelta(m) {
    check(this.map !== null, "delta before snap");
    // version 9: no tick means the tick after the last snap's or delta's
    const tick = "tick" in m ? m.tick : this.tick + 1;
    check(isInt(tick), "delta.tick");
    // "Sent at most once per tick"
    check(tick > this.lastDeltaTick, `delta for tick ${tick} after tick ${this.lastDeltaTick}`);
    check(!("tick" in m) || m.tick !== this.tick + 1, `delta.tick ${m.tick} sent though implied`);
    this.lastDeltaTick = tick;
    this.tick = tick;
    // "apply tiles, rm, add, upd, objs in that order, then treat ev as things
    // that happened during the tick". The document gives no place in that
    // order to fov, me and ack; they are independent of the others, so they
    // go after objs.
    if ("tiles" in m) this.applyTiles(m.tiles);
    if ("rm" in m) {
      // version 6: [gap, ...], each id the one before plus its gap (from 0)
      check(isList(m.rm) && m.rm.length > 0 && m.rm.every(isInt), `delta.rm ${show(m.rm)}`);
      let id = 0;
      for (const gap of m.rm) {
        check(gap >= 1, `delta.rm gap ${gap} (ids must increase)`);
        id += gap;
        check(this.actors.has(id), `delta.rm of unknown actor ${id}`);
        this.kept.set(id, [this.actors.get(id), this.tick]); // version 8: kept for back
        this.actors.delete(id);
      }
    }
    if ("add" in m) {
      check(isList(m.add), "delta.add");
      for (const rec of m.add) this.addActor(rec, "delta.add");
    }
    if ("back" in m) {
      // version 8: [gap, x, y, ...]: an actor removed at most BACK_TICKS ticks
      // ago comes back as it was kept, at (x, y); ids as in mv
      check(isList(m.back) && m.back.length > 0, `delta.back ${show(m.back)}`);
      for (const [id, x, y] of gapTriples(m.back, "delta.back")) {
        const kept = this.kept.get(id);
        check(kept !== undefined, `delta.back of actor ${id}, not kept`);
        check(this.tick - kept[1] <= BACK_TICKS, `delta.back of actor ${id} removed at tick ${kept[1]}`);
        check(!this.actors.has(id), `delta.back of actor ${id}, already in view`);
        this.kept.delete(id);
        this.actors.set(id, Object.assign(kept[0], { x, y }));
      }
    }
    if ("upd" in m) {
      check(isList(m.upd), "delta.upd");
      for (const u of m.upd) {
        check(isList(u) && u.length >= 7 && u.slice(0, 7).every(isInt), `delta.upd record ${show(u)}`);
        const [id, x, y, hp, maxHp, flags, sts] = u;
        const a = this.actors.get(id);
        check(a !== undefined, `delta.upd of unknown actor ${id}`);
        this.checkSts(sts, `delta.upd of ${id}`);
        Object.assign(a, { x, y, hp, max_hp: maxHp, flags, sts });
      }
    }
    if ("mv" in m) {
      for (const [id, x, y] of gapTriples(m.mv, "delta.mv")) {
        const a = this.actors.get(id);
        check(a !== undefined, `delta.mv of unknown actor ${id}`);
        Object.assign(a, { x, y });
      }
    }
    if ("st" in m) {
      // version 7: [gap * 8 + direction, ...]: the actor stepped one cell in
      // that direction; each id the one before plus its gap (from 0)
      check(isList(m.st) && m.st.length > 0 && m.st.every(isInt), `delta.st ${show(m.st)}`);
      let id = 0;
      for (const v of m.st) {
        check(v >= 8, `delta.st value ${v} (a gap of at least 1)`);
        id += Math.floor(v / 8);
        const a = this.actors.get(id);
        check(a !== undefined, `delta.st of unknown actor ${id}`);
        const [dx, dy] = STEP_DIRECTIONS[v % 8];
        a.x += dx;
        a.y += dy;
      }
    }
    if ("objs" in m) this.applyObjs(m.objs, "delta");
    if ("fov" in m) this.setFov(m.fov);
    if ("me" in m) {
      check(isMap(m.me), "delta.me");
      // version 10: a delta's me has no cell; the own actor record carries it
      check(!("x" in m.me) && !("y" in m.me), `delta.me has a cell: ${show(m.me)}`);
      this.mergeMe(m.me, false);
    }
    const own = this.actors.get(this.id);
    if (own !== undefined) [this.me.x, this.me.y] = [own.x, own.y];
    if ("ack" in m) {
      // version 10: the step from the last ack; sent only when it moved, and
      // this client's seqs only grow
      check(isInt(m.ack) && m.ack > 0, `delta.ack ${show(m.ack)} is not a step forward`);
      this.ack += m.ack;
    }
    this.onRejects(m, "delta");
    if ("ev" in m) {
      check(isList(m.ev), "delta.ev");
      for (const e of m.ev) this.onEvent(e);
    }
    this.checkInvariants(`delta of tick ${this.tick}`);
  }

  applyTiles(tiles) {
    check(isList(tiles) && tiles.length % 3 === 0, "delta.tiles must be a flat list of triples");
    for (let i = 0; i < tiles.length; i += 3) {
      const [x, y, code] = tiles.slice(i, i + 3);
      check(this.inside(x, y), `delta.tiles cell (${x}, ${y}) outside the level`);
      check(isInt(code) && code >= 0 && code < this.terrain.length, `delta.tiles code ${code}`);
      this.map[y * this.w + x] = code;
    }
  }

  applyObjs(objs, where) {
    check(isList(objs) && objs.length % 3 === 0, `${where}.objs must be a flat list of triples`);
    for (let i = 0; i < objs.length; i += 3) {
      const [x, y, key] = objs.slice(i, i + 3);
      check(this.inside(x, y) && isStr(key), `${where}.objs entry ${show([x, y, key])}`);
      if (key === "") this.objs.delete(`${x},${y}`);
      else {
        check(key in this.welcome.items, `${where}.objs item ${key} not in welcome.items`);
        this.objs.set(`${x},${y}`, key);
      }
    }
  }

  addActor(rec, where) {
    check(isList(rec) && rec.length >= 9, `${where} actor record ${show(rec)}`);
    const [id, code, aname, x, y, hp, maxHp, flags, sts] = rec;
    check([id, code, x, y, hp, maxHp, flags, sts].every(isInt) && isStr(aname), `${where} actor ${show(rec)}`);
    check(code >= 0 && code < this.kindKeys.length, `${where} actor kind code ${code} is not an index of welcome.kinds`);
    const kind = this.kindKeys[code];
    check(!this.actors.has(id), `${where} adds actor ${id} that is already in view`);
    this.checkSts(sts, `${where} actor ${id}`);
    this.actors.set(id, { id, kind, name: aname, x, y, hp, max_hp: maxHp, flags, sts });
    this.kept.delete(id);
  }

  // "bit k set iff status code k is active": only codes of welcome.statuses
  checkSts(sts, where) {
    check(sts >= 0 && sts < 2 ** this.welcome.statuses.length, `${where}: sts ${sts} names unknown statuses`);
  }

  setFov(fov) {
    check(isList(fov) && fov.length === 5, `fov ${show(fov)}`);
    const [x0, y0, fw, fh, bits] = fov;
    check([x0, y0, fw, fh].every(isInt) && fw >= 0 && fh >= 0 && isBin(bits), `fov ${show(fov)}`);
    check(bits.length === Math.ceil((fw * fh) / 8), `fov bits: ${bits.length} bytes for ${fw}x${fh}`);
    this.fovRaw = [x0, y0, fw, fh, Uint8Array.from(bits)];
    this.visible = new Uint8Array(this.w * this.h);
    for (let j = 0; j < fh; j++) {
      for (let i = 0; i < fw; i++) {
        const k = j * fw + i;
        if ((bits[k >> 3] >> (k & 7)) & 1) {
          check(this.inside(x0 + i, y0 + j), `fov has cell (${x0 + i}, ${y0 + j}) outside the level`);
          this.visible[(y0 + j) * this.w + x0 + i] = 1;
        }
      }
    }
  }

  mergeMe(me, complete) {
    const types = {
      name: isStr, class: isStr, level: isInt, xp: isInt, next_xp: isInt, hp: isInt, max_hp: isInt,
      en: isInt, max_en: isInt, power: isInt, defence: isInt,
      // documented as floats; a msgpack encoder may send a whole number as an int
      accuracy: isNum, dodge: isNum,
      speed: isInt, depth: isInt, x: isInt, y: isInt, dead: isBool, respawn: isInt, inv: isList,
      sts: isList, food: isList, spells: isList, resist: isMap, strength: isInt, choice: isInt,
      options: isList,
    };
    if (!complete && me.dead === true && !this.me.dead) this.deaths += 1;
    for (const [k, v] of Object.entries(me)) {
      if (k in types) check(types[k](v), `me.${k} has the wrong type: ${show(v)}`);
      this.me[k] = v; // unknown keys are kept but not interpreted
    }
    if (complete) {
      for (const k of Object.keys(types)) check(k in me, `snap.me lacks ${k}`);
    }
    const slots = ["", "weapon", "body", "cloak", "shield", "head", "hands", "feet", "book"];
    const letters = new Set();
    for (const it of this.me.inv) {
      check(isList(it) && it.length >= 6 && isStr(it[0]) && isStr(it[1]) && isInt(it[2]) && isStr(it[3])
        && isInt(it[4]) && isInt(it[5]), `me.inv entry ${show(it)}`);
      check(/^[a-zA-Z]$/.test(it[0]) && !letters.has(it[0]), `me.inv letter ${show(it[0])} (one letter, each once)`);
      letters.add(it[0]);
      check(it[1] in this.welcome.items && it[2] >= 1, `me.inv entry ${show(it)}: item or count`);
      check(slots.includes(it[3]) && it[4] >= -1 && it[5] >= 0 && it[5] < 8, `me.inv entry ${show(it)}: slot, charges, flags`);
    }
    for (const s of this.me.sts) check(isList(s) && s.length >= 2 && isInt(s[0]) && isInt(s[1]), `me.sts entry ${show(s)}`);
    check(this.me.food.length >= 2 && isInt(this.me.food[0]) && isInt(this.me.food[1]), `me.food ${show(this.me.food)}`);
    this.me.spells.forEach((sp, i) => {
      check(isList(sp) && sp.length >= 5 && sp[0] === String.fromCharCode(97 + i) && sp[1] in this.welcome.spells
        && isNum(sp[2]) && sp[2] >= 0 && sp[2] <= 100 && isInt(sp[3]) && isBool(sp[4]), `me.spells entry ${show(sp)}`);
    });
    for (const [k, v] of Object.entries(this.me.resist)) {
      check(this.welcome.damage_types.includes(k) && isInt(v) && v !== 0 && v >= -3 && v <= 3, `me.resist.${k} = ${show(v)}`);
    }
    check(this.me.options.every(isStr) && (this.me.choice > 0 || this.me.options.length === 0),
      `me.options ${show(this.me.options)} with choice ${this.me.choice}`);
  }

  onInfo(m) {
    check(isInt(m.id) && isBool(m.found) && isMap(m.about), `bad info ${show(m)}`);
    if (!m.found) check(Object.keys(m.about).length === 0, `info not found but about ${show(m.about)}`);
    else {
      const a = m.about;
      for (const k of ["name", "kind"]) check(isStr(a[k]), `info.about.${k} ${show(a[k])}`);
      for (const k of ["level", "hp", "max_hp", "en", "max_en", "power", "defence"]) check(isInt(a[k]), `info.about.${k} ${show(a[k])}`);
      for (const k of ["you_miss", "you_crit", "it_miss", "it_crit"]) check(isNum(a[k]) && a[k] >= 0 && a[k] <= 1, `info.about.${k} ${show(a[k])}`);
      check(!("courage" in a) || isNum(a.courage), "info.about.courage");
      check(isMap(a.resist) && isList(a.abilities) && isList(a.sts), `info.about tables ${show(a)}`);
      check(this.kindKeys.includes(a.kind), `info.about.kind ${a.kind} is not a key of welcome.kinds`);
    }
    this.infos.set(m.id, { found: m.found, about: m.about });
  }

  onEvent(e) {
    check(isList(e) && e.length >= 1 && isStr(e[0]), `event ${show(e)}`);
    this.events += 1;
    this.eventKinds[e[0]] = (this.eventKinds[e[0]] || 0) + 1;
    const arity = { atk: 6, die: 3, door: 5, pick: 3, wake: 2, flee: 2, lvl: 3, stairs: 3, respawn: 2,
      xp: 3, join: 2, leave: 2, drop: 3, use: 4, throw: 4, fly: 4, land: 6, harm: 7, ray: 7, boom: 6,
      status: 4, terrain: 4, burn: 5, cast: 4, equip: 5, learn: 2, note: 2 };
    if (e[0] in arity) check(e.length >= arity[e[0]], `event ${show(e)} is too short`);
    const outcomes = ["miss", "hit", "crit", "lucky"];
    const isCell = (c) => isList(c) && c.length === 2 && c.every(isInt);
    const isCells = (cs) => isList(cs) && cs.every(isCell);
    if (e[0] === "atk") check(outcomes.includes(e[3]) && isInt(e[4]) && isBool(e[5]), `event ${show(e)}`);
    if (e[0] === "drop" || e[0] === "pick") check(isStr(e[2]), `event ${show(e)}`);
    if (e[0] === "use") check(["eat", "quaff", "read", "zap", "blow"].includes(e[2]) && isStr(e[3]), `event ${show(e)}`);
    if (e[0] === "throw") check(isStr(e[2]) && isCell(e[3]), `event ${show(e)}`);
    if (e[0] === "fly") check(isInt(e[1]) && isStr(e[2]) && isCells(e[3]), `event ${show(e)}`);
    if (e[0] === "land") check(isInt(e[1]) && isStr(e[2]) && isInt(e[3]) && isInt(e[4]) && isBool(e[5]), `event ${show(e)}`);
    if (e[0] === "harm") {
      const causes = ["throw", "ray", "beam", "bolt", "ball", "spell", "breath", "status", "hunger", "shield", "potion"];
      check((e[1] === null || isInt(e[1])) && (e[2] === null || isInt(e[2])) && isStr(e[3]) && isInt(e[4]) && causes.includes(e[5])
        && outcomes.includes(e[6]), `event ${show(e)}`);
    }
    if (e[0] === "ray") {
      check((e[1] === null || isInt(e[1])) && isStr(e[2]) && isCells(e[3]) && isCells(e[4]) && isList(e[5])
        && e[5].every((h) => isList(h) && (h[0] === null || isInt(h[0])) && isBool(h[1])) && isBool(e[6]), `event ${show(e)}`);
    }
    if (e[0] === "boom") check(isStr(e[2]) && isInt(e[3]) && isInt(e[4]) && isInt(e[5]), `event ${show(e)}`);
    if (e[0] === "status") check(isInt(e[2]) && e[2] >= 0 && e[2] < this.welcome.statuses.length && isBool(e[3]), `event ${show(e)}`);
    if (e[0] === "terrain") check(isInt(e[1]) && isInt(e[2]) && isInt(e[3]) && e[3] < this.terrain.length, `event ${show(e)}`);
    if (e[0] === "burn") check(isInt(e[1]) && isInt(e[2]) && isStr(e[3]) && isStr(e[4]), `event ${show(e)}`);
    if (e[0] === "cast") check(isStr(e[2]) && isBool(e[3]), `event ${show(e)}`);
    if (e[0] === "equip") check(isStr(e[1]) && isStr(e[2]) && isStr(e[3]) && isBool(e[4]), `event ${show(e)}`);
    if (e[0] === "learn") check(isStr(e[1]) && e[1] in this.welcome.spells, `event ${show(e)}`);
    if (e[0] === "note") check(isStr(e[1]), `event ${show(e)}`);
    if (e[0] === "die") check(e[2] === null || isInt(e[2]), `event ${show(e)}`);
    if (e[0] === "door") check(isInt(e[2]) && isInt(e[3]) && isBool(e[4]), `event ${show(e)}`);
    if (e[0] === "join" || e[0] === "leave") check(isStr(e[1]), `event ${show(e)}`);
    // Unknown event names are ignored, as the document says.
  }

  inside(x, y) {
    return isInt(x) && isInt(y) && x >= 0 && y >= 0 && x < this.w && y < this.h;
  }

  at(x, y) {
    return this.map[y * this.w + x];
  }

  isVisible(x, y) {
    return this.inside(x, y) && this.visible[y * this.w + x] === 1;
  }

  self() {
    return this.actors.get(this.id);
  }

  checkInvariants(where) {
    const me = this.me;
    check(me.depth === this.depth, `${where}: me.depth ${me.depth} but the level is depth ${this.depth}`);
    check(this.inside(me.x, me.y), `${where}: me at (${me.x}, ${me.y}) outside the level`);
    // Cells in view are current, so never unknown.
    for (let i = 0; i < this.visible.length; i++) {
      if (this.visible[i]) check(this.map[i] !== 255, `${where}: cell ${i % this.w},${Math.floor(i / this.w)} in view but unknown`);
    }
    // "actors: ... every actor in view (including you)"
    for (const a of this.actors.values()) {
      check(this.inside(a.x, a.y), `${where}: actor ${a.id} outside the level`);
      check(a.id === this.id || this.isVisible(a.x, a.y),
        `${where}: actor ${a.id} at (${a.x}, ${a.y}) is not on a cell in view`);
      check(((a.flags & 8) !== 0) === (a.id === this.id), `${where}: actor ${a.id} flags ${a.flags} (bit 8 is "you")`);
    }
    if (!me.dead) {
      const s = this.self();
      if (s !== undefined) {
        const bits = me.sts.reduce((b, [code]) => b | (2 ** code), 0);
        check(s.sts === bits, `${where}: my record's sts ${s.sts} but me.sts ${show(me.sts)}`);
      }
      check(s !== undefined, `${where}: my own actor ${this.id} is not among the actors in view`);
      check(s.x === me.x && s.y === me.y, `${where}: my actor record at (${s.x}, ${s.y}) but me at (${me.x}, ${me.y})`);
      check(s.hp === me.hp && s.max_hp === me.max_hp, `${where}: my actor record hp ${s.hp}/${s.max_hp} but me hp ${me.hp}/${me.max_hp}`);
      check((s.flags & 16) !== 0, `${where}: my own record lacks the player flag`);
    }
  }
}

// ---- the script ----------------------------------------------------------------

const DIRS = [[1, 0], [1, 1], [0, 1], [-1, 1], [-1, 0], [-1, -1], [0, -1], [1, -1]];

async function join(game, token) {
  const conn = new Conn(url, (msg) => game.handle(msg));
  await conn.opened();
  const hello = { t: "hello", v: PROTOCOL_VERSION, name };
  if (token !== undefined) hello.token = token;
  else if (klass) hello.class = klass;
  conn.send(hello);
  await conn.waitFor("welcome", (m) => m.t === "welcome" || (m.t === "error" && m.fatal));
  check(game.welcome !== null, `hello refused: ${game.errors.join(", ")}`);
  await conn.waitFor("the first snap", (m) => m.t === "snap");
  return conn;
}

async function main() {
  const game = new Game();
  const conn = await join(game);
  const w = game.welcome;
  check(w.name === name && w.resumed === false, "welcome for a new character");
  check(game.snaps === 1, "one snap after welcome");

  let seq = 0;
  const sentSeqs = [];
  // `keys`: the other keys the command takes (item, at, spell, opt)
  async function command(c, d, keys = {}) {
    const s = seq++;
    const msg = { t: "cmd", seq: s, c, ...keys };
    if (d) msg.d = d;
    const rejectsBefore = game.rejects.length;
    const deathsBefore = game.deaths;
    conn.send(msg);
    sentSeqs.push(s);
    // One command in flight at a time, so the queue never fills up. The
    // command is done when `ack` reaches its seq ("carried out or rejected");
    // the document promises an answer even when the character dies with the
    // command waiting (a `dead` reject). A seq recorded in `dropped` means
    // that promise was broken: the test fails on it.
    await conn.until(`ack of command ${s} (${c})`, () => game.ack >= s || game.deaths > deathsBefore);
    if (game.ack < s) {
      game.dropped.push(s);
      const ms = Math.max(0, game.me.respawn - game.tick) * 1000 / game.welcome.tick_rate + WAIT_MS;
      await conn.until("the snap after respawning", () => !game.me.dead, ms);
      return "died";
    }
    const rej = game.rejects.slice(rejectsBefore).find(([rs]) => rs === s);
    return rej ? rej[1] : null;
  }

  let heading = 0;
  const visits = new Map();
  const visit = () => visits.set(`${game.me.x},${game.me.y}`, (visits.get(`${game.me.x},${game.me.y}`) || 0) + 1);
  visit();
  const occupied = (x, y) => [...game.actors.values()].some((a) => a.x === x && a.y === y);
  // Cheap exploration from the client's own remembered map: step to the
  // least visited passable neighbour (a closed door counts: moving into it
  // opens it), keeping the current heading on ties.
  function nextStep() {
    // A monster next to us is attacked (moving into it), or it would chase
    // and kill a client that only walks.
    for (let k = 0; k < 8; k++) {
      const [dx, dy] = DIRS[k];
      const foe = [...game.actors.values()].find((a) => a.x === game.me.x + dx && a.y === game.me.y + dy);
      if (foe && (foe.flags & 16) === 0 && (foe.flags & 1) === 0) return DIRS[k];
    }
    let best = null;
    for (let turn = 0; turn < 8; turn++) {
      const k = (heading + [0, 1, 7, 2, 6, 3, 5, 4][turn]) % 8;
      const [dx, dy] = DIRS[k];
      const x = game.me.x + dx;
      const y = game.me.y + dy;
      if (!game.inside(x, y) || occupied(x, y)) continue;
      const code = game.at(x, y);
      if (!(game.passable(code) || code === 3)) continue;
      const n = visits.get(`${x},${y}`) || 0;
      if (best === null || n < best.n) best = { k, n };
    }
    if (best !== null) heading = best.k;
    return DIRS[heading];
  }
  function blockedDir() {
    for (const d of DIRS) {
      const x = game.me.x + d[0];
      const y = game.me.y + d[1];
      if (game.inside(x, y) && [0, 1].includes(game.at(x, y))) return d;
    }
    return null;
  }
  function doorDir(codes) {
    for (const d of DIRS) {
      const x = game.me.x + d[0];
      const y = game.me.y + d[1];
      if (game.inside(x, y) && codes.includes(game.at(x, y)) && !occupied(x, y)) return d;
    }
    return null;
  }

  const moves = [];
  const log = (what, result) => moves.push(result ? `${what}:${result}` : what);

  // 1. a ping, answered by a pong with the same id
  conn.send({ t: "ping", id: 4242 });
  await conn.waitFor("pong 4242", (m) => m.t === "pong" && m.id === 4242);

  // 2. a few moves, each in a different direction
  for (let i = 0; i < 8; i++) {
    const d = i % 2 === 0 ? nextStep() : DIRS[(i * 3) % 8];
    log(`move ${d}`, await command("move", d));
    visit();
  }
  // 3. a wait and a rest
  log("wait", await command("wait"));
  log("rest", await command("rest"));

  // 3b. version 2: look at ourselves and at an id nobody has, then use items
  // from the pack, as the document describes them
  async function look(id) {
    conn.send({ t: "look", id });
    await conn.waitFor(`info ${id}`, (m) => m.t === "info" && m.id === id);
    return game.infos.get(id);
  }
  const mine = await look(game.id);
  check(mine.found && mine.about.name === name, `looking at myself: ${show(mine)}`);
  const nobody = await look(2 ** 31 - 1);
  check(!nobody.found, "looking at an id nobody has");
  const monster = [...game.actors.values()].find((a) => (a.flags & 16) === 0);
  if (monster) {
    const seen = await look(monster.id);
    check(!seen.found || seen.about.kind === monster.kind, `looking at ${monster.id}: ${show(seen)}`);
  }
  const category = (it) => game.welcome.items[it[1]][3];
  const food = game.me.inv.find((it) => category(it) === "food");
  if (food) log("eat", await command("eat", null, { item: food[0] }));
  const weapon = game.me.inv.find((it) => it[3] === "weapon");
  if (weapon) {
    log("remove", await command("remove", null, { item: weapon[0] }));
    log("wield", await command("wield", null, { item: weapon[0] }));
  }
  const spare = game.me.inv.find((it) => it[3] === "");
  if (spare) {
    log("drop", await command("drop", null, { item: spare[0] }));
    log("pickup", await command("pickup"));
  }
  const missile = game.me.inv.find((it) => it[3] === "");
  if (missile) {
    const [dx, dy] = DIRS[heading];
    const at = [Math.max(0, game.me.x + 3 * dx), Math.max(0, game.me.y + 3 * dy)];
    log("throw", await command("throw", null, { item: missile[0], at }));
  }
  if (game.me.spells.length > 0) {
    const [, key] = game.me.spells[0];
    const aim = game.welcome.spells[key][3];
    if (aim === "dir") log("cast", await command("cast", DIRS[heading], { spell: key }));
    else if (aim === "cell") log("cast", await command("cast", null, { spell: key, at: [game.me.x + 1, game.me.y] }));
    else log("cast", await command("cast", null, { spell: key }));
  }
  if (game.me.choice > 0) log("choose", await command("choose", null, { opt: game.me.options[0] }));

  // 4. a malformed frame: 0xc1 is never used in msgpack
  const errorsBefore = game.errors.length;
  conn.sendRaw(Uint8Array.of(0xc1));
  await conn.until("error bad_msgpack", () => game.errors.length > errorsBefore);

  // 5. a chat, which goes to every player, so back to us too
  const text = `hello from node ${process.pid}`;
  conn.send({ t: "chat", text });
  await conn.waitFor("our chat back", (m) => m.t === "chat" && m.from === name && m.text === text);

  // 6. walk, opening the first closed door and closing the first open door
  // we come across (after stepping off it)
  let opened = false;
  let closed = false;
  for (let i = 0; i < 20; i++) {
    const closedDoor = doorDir([3]);
    const openDoor = doorDir([4]);
    if (closedDoor && !opened) {
      log("open", await command("open", closedDoor));
      opened = true;
    } else if (openDoor && !closed && game.at(game.me.x, game.me.y) !== 4) {
      log("close", await command("close", openDoor));
      closed = true;
    } else if (i === 10 && blockedDir()) {
      log("move into rock", await command("move", blockedDir()));
    } else {
      const d = nextStep();
      log(`move ${d}`, await command("move", d));
    }
    visit();
    if (game.objs.has(`${game.me.x},${game.me.y}`)) log("pickup", await command("pickup"));
  }
  // At least one open and one close attempt, wherever we are.
  if (!opened) log("open", await command("open", DIRS[0]));
  if (!closed) log("close", await command("close", DIRS[4]));

  // 7. an unknown message type
  const errorsBefore2 = game.errors.length;
  conn.send({ t: "dance", style: "jig" });
  await conn.until("error unknown_type", () => game.errors.length > errorsBefore2);

  // 8. a few more steps, and take stairs if we stand on some
  for (let i = 0; i < 6; i++) {
    log(`move`, await command("move", nextStep()));
    visit();
  }
  const here = game.at(game.me.x, game.me.y);
  log("down", await command(here === 11 ? "up" : "down"));

  // Let anything still in flight arrive: a ping is answered after all that
  // was sent before it has been handled.
  conn.send({ t: "ping", id: 4243 });
  await conn.waitFor("pong 4243", (m) => m.t === "pong" && m.id === 4243);

  if (game.me.dead) {
    const ms = Math.max(0, game.me.respawn - game.tick) * 1000 / game.welcome.tick_rate + WAIT_MS;
    await conn.until("the snap after respawning", () => !game.me.dead, ms);
  }
  const me = game.me;
  const summary = {
    id: game.id,
    tick: game.tick,
    depth: game.depth,
    w: game.w,
    h: game.h,
    x: me.x,
    y: me.y,
    hp: me.hp,
    ack: game.ack,
    last_seq: sentSeqs[sentSeqs.length - 1],
    commands: sentSeqs.length,
    known_cells: game.map.reduce((n, c) => n + (c !== 255 ? 1 : 0), 0),
    visible_cells: game.visible.reduce((n, v) => n + v, 0),
    terrain_here: game.at(me.x, me.y),
    passable_here: game.passable(game.at(me.x, me.y)),
    actors: [...game.actors.values()].map((a) => [a.id, a.x, a.y, a.hp]).sort((a, b) => a[0] - b[0]),
    objs: game.objs.size,
    errors: game.errors,
    rejects: game.rejects.map(([, r]) => r),
    events_seen: game.events,
    event_kinds: game.eventKinds,
    snaps: game.snaps,
    deaths: game.deaths,
    dropped: game.dropped,
    pong: game.pongs.has(4242) && game.pongs.has(4243),
    infos: game.infos.size,
    chat_echo: game.chats.some(([f, t]) => f === name && t === text),
    script: moves,
  };

  // 9. Resume with the token and compare what we built from deltas with the
  // server's own picture of the same character.
  const built = {
    depth: game.depth, w: game.w, h: game.h, x: me.x, y: me.y,
    map: game.map, visible: game.visible, objs: new Map(game.objs),
  };
  await conn.close();
  const again = new Game();
  const conn2 = await join(again, w.token);
  check(again.welcome.resumed === true, "resume with the token");
  const diffs = [];
  for (const k of ["depth", "w", "h", "x", "y"]) {
    const v = k === "x" || k === "y" ? again.me[k] : again[k];
    if (v !== built[k]) diffs.push(`${k}: built ${built[k]}, server ${v}`);
  }
  if (diffs.length === 0) {
    let cells = 0;
    for (let i = 0; i < built.map.length; i++) {
      if (built.map[i] !== again.map[i]) {
        cells++;
        if (cells <= 5) diffs.push(`map (${i % game.w}, ${Math.floor(i / game.w)}): built ${built.map[i]}, server ${again.map[i]}`);
      }
    }
    if (cells > 5) diffs.push(`... ${cells} map cells differ`);
    let vis = 0;
    for (let i = 0; i < built.visible.length; i++) if (built.visible[i] !== again.visible[i]) vis++;
    if (vis) diffs.push(`${vis} cells differ in field of view`);
    const objs = (m) => JSON.stringify([...m.entries()].sort());
    if (objs(built.objs) !== objs(again.objs)) diffs.push(`objs: built ${objs(built.objs)}, server ${objs(again.objs)}`);
  }
  summary.resumed_id = again.id;
  summary.resync_diffs = diffs;
  await conn2.close();
  check(diffs.length === 0, `state built from deltas differs from the server's snap: ${diffs.join("; ")}`);
  return summary;
}

main().then(
  (summary) => {
    clearTimeout(runTimer);
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    process.exit(0);
  },
  (err) => {
    clearTimeout(runTimer);
    process.stderr.write(`client.mjs: ${err instanceof Unexpected ? err.message : err.stack || err}\n`);
    process.exit(1);
  },
);
