// The browser client of Underhall: the lobby, the connection, the keys and
// the drawing. It speaks docs/protocol.md (msgpack over a websocket to the
// port that served this page) through the vendored @msgpack/msgpack
// (msgpack.min.js, the global MessagePack). Every string from the server is
// placed with textContent, never as markup. With ?replay=ID it plays a
// recorded game back instead (replay.js), opening no connection.

import { Model, UNKNOWN, FLAG, boltPath } from "./model.js";
import { describeEvent, refusalText, errorText, optionLabel, HELP_LINES } from "./text.js";
import { menuItems, inventoryRows, equipmentRows } from "./menus.js";
import { Walk } from "./walk.js";
import { Animator, tracksFromEvents } from "./anim.js";
import { Replay, RecordingError, readTape, SPEEDS, SEEK_KEYS } from "./replay.js";

const PROTOCOL_VERSION = 12;
const VIEW_W = 80;
const VIEW_H = 21;
const LOG_LINES = 6;
const LOG_KEEP = 500;
const LOBBY_POLL_MS = 3000;
const NAME_RE = /^[A-Za-z0-9_-]{1,16}$/;
const GAMES_POLL_MS = 15000; // the lobby's list of recorded games
const RECORDING_RE = /^[A-Za-z0-9_-]{1,64}$/; // a recording's id (<UTC start>-<name>-<serial>)
const CHAT_MAX = 200;
const FAR = 8;
const DEFAULT_RANGE = 4;
const NO_RETRY = new Set(["name_taken", "bad_class", "banned", "kicked", "replaced", "version", "limited", "not_playing", "not_watchable", "gone"]);

const DIRS = {
  h: [-1, 0], j: [0, 1], k: [0, -1], l: [1, 0], y: [-1, -1], u: [1, -1], b: [-1, 1], n: [1, 1],
  1: [-1, 1], 2: [0, 1], 3: [1, 1], 4: [-1, 0], 6: [1, 0], 7: [-1, -1], 8: [0, -1], 9: [1, -1],
};
const NAMED_DIRS = {
  ArrowUp: [0, -1], ArrowDown: [0, 1], ArrowLeft: [-1, 0], ArrowRight: [1, 0],
  Home: [-1, -1], PageUp: [1, -1], End: [-1, 1], PageDown: [1, 1],
};
const SIMPLE = { R: "rest", g: "pickup", ",": "pickup", ">": "down", "<": "up" };
const ITEM_VERBS = {
  d: ["drop", "What do you want to drop?", "You have nothing to drop."],
  w: ["wield", "What do you want to wield?", "You have nothing to wield."],
  W: ["wear", "What do you want to wear?", "You have nothing to wear."],
  T: ["remove", "What do you want to take off?", "You are not wearing or wielding anything."],
  E: ["eat", "What do you want to eat?", "You have nothing to eat."],
  q: ["quaff", "What do you want to drink?", "You have nothing to drink."],
  r: ["read", "What do you want to read?", "You have nothing to read."],
  t: ["throw", "What do you want to throw?", "You have nothing to throw."],
  z: ["zap", "What do you want to zap?", "You have nothing to zap."],
};
const $ = (id) => document.getElementById(id);
const el = (tag, text, cls) => {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (cls) node.className = cls;
  return node;
};

// --- saved tokens -----------------------------------------------------------

const store = {
  tokens() {
    try {
      return JSON.parse(localStorage.getItem("underhall.tokens") || "{}") || {};
    } catch (e) {
      return {};
    }
  },
  token(name) {
    return this.tokens()[name.toLowerCase()];
  },
  saveToken(name, token) {
    const all = this.tokens();
    all[name.toLowerCase()] = token;
    localStorage.setItem("underhall.tokens", JSON.stringify(all));
  },
  last() {
    try {
      return JSON.parse(localStorage.getItem("underhall.last") || "{}") || {};
    } catch (e) {
      return {};
    }
  },
  saveLast(name, cls) {
    localStorage.setItem("underhall.last", JSON.stringify({ name, cls }));
  },
};

// --- the lobby --------------------------------------------------------------

const lobby = {
  timer: null,
  gamesTimer: null,
  classesShown: false,

  show(message) {
    $("game").hidden = true;
    $("lobby").hidden = false;
    $("lobby-error").textContent = message || "";
    const last = store.last();
    if (last.name && !$("name").value) $("name").value = last.name;
    this.poll();
    if (this.timer === null) this.timer = setInterval(() => this.poll(), LOBBY_POLL_MS);
    this.pollGames();
    if (this.gamesTimer === null) this.gamesTimer = setInterval(() => this.pollGames(), GAMES_POLL_MS);
  },

  hide() {
    if (this.timer !== null) clearInterval(this.timer);
    if (this.gamesTimer !== null) clearInterval(this.gamesTimer);
    this.timer = null;
    this.gamesTimer = null;
    $("lobby").hidden = true;
    $("game").hidden = false;
  },

  async poll() {
    let data;
    try {
      const answer = await fetch("lobby.json", { cache: "no-store" });
      data = await answer.json();
    } catch (e) {
      $("online").textContent = "server not answering";
      return;
    }
    if (!this.classesShown && Array.isArray(data.classes)) {
      const select = $("class");
      select.replaceChildren();
      const last = store.last();
      for (const [key, name] of data.classes) {
        const option = el("option", String(name));
        option.value = String(key);
        if (key === last.cls) option.selected = true;
        select.append(option);
      }
      this.classesShown = true;
    }
    const body = $("players").tBodies[0];
    body.replaceChildren();
    if (!Array.isArray(data.players)) {
      $("online").textContent = "this server does not list its players";
      return;
    }
    $("online").textContent = `${data.online} playing`;
    for (const p of data.players) {
      const row = el("tr");
      for (const value of [p.name, p.cls, p.level, p.depth, p.turns]) row.append(el("td", String(value)));
      const watch = el("a", "watch"); // a spectator's view of that player (protocol 12)
      watch.href = `?watch=${encodeURIComponent(p.name)}`;
      const cell = el("td");
      cell.append(watch);
      row.append(cell);
      body.append(row);
    }
    if (!data.players.length) {
      const row = el("tr");
      const cell = el("td", "Nobody is playing yet.");
      cell.colSpan = 5;
      row.append(cell);
      body.append(row);
    }
  },

  // The recent games (/recordings.json, newest first), each with a link
  // that replays it in this page and one that downloads its file.
  async pollGames() {
    let data;
    try {
      const answer = await fetch("recordings.json", { cache: "no-store" });
      data = answer.ok ? await answer.json() : { recordings: null };
    } catch (e) {
      return;
    }
    const body = $("games").tBodies[0];
    body.replaceChildren();
    const games = Array.isArray(data.recordings) ? data.recordings.filter((g) => RECORDING_RE.test(String(g.id))) : [];
    for (const g of games) {
      const row = el("tr");
      for (const value of [g.name, startedText(g.started), sizeText(g.bytes)]) row.append(el("td", String(value)));
      const cell = el("td");
      const replayLink = el("a", "replay");
      replayLink.href = `?replay=${encodeURIComponent(g.id)}`;
      const download = el("a", "download");
      download.href = `recordings/${encodeURIComponent(g.id)}.uhrec`;
      cell.append(replayLink, " ", download);
      row.append(cell);
      body.append(row);
    }
    if (!games.length) {
      const row = el("tr");
      const cell = el("td", Array.isArray(data.recordings) ? "No game recorded yet." : "This server keeps no recordings.");
      cell.colSpan = 4;
      row.append(cell);
      body.append(row);
    }
  },
};

// When a game began (Unix seconds), as "YYYY-MM-DD HH:MM" UTC.
function startedText(seconds) {
  const when = new Date(Number(seconds) * 1000);
  return Number.isNaN(when.getTime()) ? "?" : when.toISOString().slice(0, 16).replace("T", " ");
}

// A size in bytes, in kB or MB (10^3, 10^6 bytes).
function sizeText(bytes) {
  const n = Number(bytes) || 0;
  return n < 1e6 ? `${(n / 1e3).toFixed(1)} kB` : `${(n / 1e6).toFixed(1)} MB`;
}

// --- the game screen ----------------------------------------------------------

const model = new Model();
const stats = { frames: 0, totalMs: 0, maxMs: 0, lastMs: 0 };
let mode = { kind: "normal" };
let log = [];
let lastLine = "";
let repeat = 0;
let note = "";
let animator = new Animator(); // rays and projectiles in flight
let lookInfo = new Map(); // actor id -> info message
let auto = null; // run, travel or explore under way
let replay = null; // a recorded game played back (replay.js), or null
let loading = ""; // the id of the recording being fetched, or ""

// The terminal's 16 colours (style.css names the same ones for the text rows).
const COLOURS = {
  black: "#000000", red: "#c00000", green: "#00b000", yellow: "#c0a000", blue: "#3050ff",
  magenta: "#c000c0", cyan: "#00b0b0", white: "#c0c0c0", bright_black: "#707070",
  bright_red: "#ff5050", bright_green: "#50ff50", bright_yellow: "#ffff50", bright_blue: "#7080ff",
  bright_magenta: "#ff50ff", bright_cyan: "#50ffff", bright_white: "#ffffff",
};
const FONT_PX = 16;
const FONT = `${FONT_PX}px "DejaVu Sans Mono", Menlo, Consolas, monospace`;

// The map is a canvas of VIEW_W x VIEW_H cells; `glyphs` and `classes` keep
// what each cell shows (a class is "c-<colour>", or "r-<colour>" for reverse
// video), so a frame paints only the cells that changed.
const grid = { ctx: null, cw: 10, ch: 19, glyphs: [], classes: [], x0: 0, y0: 0 };

function buildGrid() {
  const canvas = $("map");
  const ratio = window.devicePixelRatio || 1;
  const ctx = canvas.getContext("2d", { alpha: false });
  ctx.font = FONT;
  grid.cw = Math.ceil(ctx.measureText("M").width);
  grid.ch = Math.ceil(FONT_PX * 1.2);
  canvas.width = VIEW_W * grid.cw * ratio;
  canvas.height = VIEW_H * grid.ch * ratio;
  canvas.style.width = `${VIEW_W * grid.cw}px`;
  canvas.style.height = `${VIEW_H * grid.ch}px`;
  $("page").style.height = canvas.style.height;
  $("game").style.width = canvas.style.width;
  ctx.scale(ratio, ratio);
  ctx.font = FONT;
  ctx.textBaseline = "middle";
  ctx.textAlign = "center";
  grid.ctx = ctx;
  invalidate();
}

function paintCell(k, glyph, cls) {
  const ctx = grid.ctx;
  const x = (k % VIEW_W) * grid.cw;
  const y = Math.floor(k / VIEW_W) * grid.ch;
  const colour = COLOURS[cls.slice(2)] || COLOURS.white;
  const reverse = cls.startsWith("r-");
  ctx.fillStyle = reverse ? colour : "#000000";
  ctx.fillRect(x, y, grid.cw, grid.ch);
  if (glyph !== " " && cls) {
    ctx.fillStyle = reverse ? "#000000" : colour;
    ctx.fillText(glyph, x + grid.cw / 2, y + grid.ch / 2 + 1);
  }
}

function invalidate() {
  grid.glyphs = new Array(VIEW_W * VIEW_H).fill(null);
  grid.classes = new Array(VIEW_W * VIEW_H).fill(null);
}

function addLine(line) {
  if (!line) return;
  line = line.replace(/[\u0000-\u001f\u007f-\u009f]/g, "");
  if (repeat && log.length && line === lastLine) {
    repeat += 1;
    log[log.length - 1] = `${line} (x${repeat})`;
  } else {
    lastLine = line;
    repeat = 1;
    log.push(line);
    if (log.length > LOG_KEEP) log = log.slice(-LOG_KEEP);
  }
  scheduleDraw();
}

let drawPending = false;
function scheduleDraw() {
  if (drawPending) return;
  drawPending = true;
  requestAnimationFrame(() => {
    drawPending = false;
    draw();
  });
}

function offset(centre, view, size) {
  if (size <= view) return 0;
  return Math.min(Math.max(0, centre - Math.floor(view / 2)), size - view);
}

function throwRange(letter) {
  const it = model.inventory().find((i) => i.letter === letter);
  const entry = it && model.items[it.key];
  const range = entry && entry[4] && entry[4].range;
  return Number.isInteger(range) && range > 0 ? range : DEFAULT_RANGE;
}

function overlay() {
  const out = new Map();
  if (mode.kind !== "target" || !mode.cursor) return out;
  const pos = model.position();
  const w = model.w;
  if ((mode.verb === "throw" || mode.verb === "cast") && pos) {
    const path = boltPath(pos, mode.cursor, (x, y) => !model.passable(x, y), model.w, model.h);
    const reach = mode.verb === "throw" ? throwRange(mode.item) : path.length;
    path.forEach(([x, y], i) => out.set(y * w + x, ["*", i < reach ? "bright_yellow" : "bright_black", false]));
  }
  const at = mode.cursor[1] * w + mode.cursor[0];
  const under = out.get(at);
  out.set(at, [under ? under[0] : null, "bright_white", true]);
  return out;
}

function drawMap() {
  const pos = model.position() || [0, 0];
  let x0 = offset(pos[0], VIEW_W, model.w);
  let y0 = offset(pos[1], VIEW_H, model.h);
  const cursor = mode.kind === "target" ? mode.cursor : null;
  if (cursor && !(cursor[0] >= x0 && cursor[0] < x0 + VIEW_W && cursor[1] >= y0 && cursor[1] < y0 + VIEW_H)) {
    x0 = offset(cursor[0], VIEW_W, model.w);
    y0 = offset(cursor[1], VIEW_H, model.h);
  }
  grid.x0 = x0;
  grid.y0 = y0;
  const w = model.w;
  const actors = new Map();
  for (const a of model.actors.values()) {
    const at = a.y * w + a.x;
    const there = actors.get(at);
    if (!there || a.id === model.id || (a.flags & FLAG.player && !(there.flags & FLAG.player))) actors.set(at, a);
  }
  const marksNow = overlay();
  for (const [x, y, glyph, colour] of animator.marks(performance.now() / 1000)) {
    marksNow.set(y * w + x, [glyph, colour, false]);
  }
  const terrain = model.terrain;
  for (let j = 0; j < VIEW_H; j++) {
    const y = y0 + j;
    for (let i = 0; i < VIEW_W; i++) {
      const x = x0 + i;
      let glyph = " ";
      let cls = "";
      if (x < w && y < model.h) {
        const at = y * w + x;
        const code = model.known[at];
        const entry = code === UNKNOWN ? null : terrain[code];
        if (entry) {
          const inView = model.visible[at] === 1;
          glyph = entry[2];
          let colour = entry[3];
          const key = model.objs.get(at);
          const itemEntry = key ? model.items[key] : null;
          if (itemEntry) {
            glyph = itemEntry[1];
            colour = itemEntry[2];
          }
          const actor = inView ? actors.get(at) : undefined;
          if (actor) {
            const kind = model.kindEntry(actor.kind);
            glyph = actor.flags & FLAG.player ? "@" : kind ? kind[2] : "?";
            colour = kind ? kind[3] : "white";
          }
          cls = actor && actor.id === model.id ? `r-${colour}` : `c-${inView ? colour : "bright_black"}`;
        }
        const mark = marksNow.get(at);
        if (mark) {
          glyph = mark[0] || glyph;
          cls = `${mark[2] ? "r" : "c"}-${mark[1]}`;
        }
      }
      const k = j * VIEW_W + i;
      if (grid.glyphs[k] !== glyph || grid.classes[k] !== cls) {
        paintCell(k, glyph, cls);
        grid.glyphs[k] = glyph;
        grid.classes[k] = cls;
      }
    }
  }
}

function statusFields() {
  const me = model.me;
  if (!me || me.hp === undefined) return [["Waiting for the server…", "b"]];
  const out = [];
  out.push([String(me.name || model.name), "b"]);
  out.push([`${me.class || ""} L${me.level}`, ""]);
  const low = me.max_hp && me.hp * 4 <= me.max_hp;
  out.push([`HP ${me.hp}/${me.max_hp}`, low ? "c-bright_red" : "c-bright_green"]);
  out.push([`EN ${me.en}/${me.max_en}`, ""]);
  if (Array.isArray(me.food)) {
    const [n, rating] = me.food;
    let tag = "";
    let cls = "";
    if (n >= 500) [tag, cls] = [" Full", "c-green"];
    else if (n <= 0) [tag, cls] = [" Starving", "c-bright_red"];
    else if (n < 25) [tag, cls] = [" Weak", "c-red"];
    else if (n < 150) [tag, cls] = [" Hungry", "c-yellow"];
    out.push([`Nourishment ${n}, hunger rating ${rating}${tag}`, cls]);
  }
  const statuses = (me.sts || []).map(([code]) => model.statusName(code));
  if (statuses.length) out.push([statuses.join(", "), "c-yellow"]);
  if ((me.choice || 0) > 0) out.push(["C: reward", "c-bright_cyan"]);
  out.push([`Depth ${me.depth}`, ""]);
  out.push([`Tick ${model.tick}`, ""]);
  if (me.dead) {
    const left = Math.max(0, (me.respawn || 0) - model.tick);
    out.push([`DEAD — respawn in ${Math.ceil(left / Math.max(1, model.tickRate))}s`, "c-bright_red b"]);
  }
  return out;
}

let shownStatus = "";
let shownLog = "";

function drawStatus() {
  const fields = statusFields();
  const key = JSON.stringify(fields);
  if (key === shownStatus) return;
  shownStatus = key;
  const status = $("status");
  status.replaceChildren();
  fields.forEach(([text, cls], i) => {
    if (i) status.append(el("span", "  ", "sep"));
    status.append(el("span", text, cls));
  });
}

function drawLog() {
  const lines = log.slice(-LOG_LINES);
  const key = lines.join("\n");
  if (key === shownLog) return;
  shownLog = key;
  $("log").replaceChildren(...lines.map((line) => el("div", line)));
}

function pageLines() {
  switch (mode.kind) {
    case "help":
      return HELP_LINES;
    case "inventory":
      return ["Inventory", "", ...inventoryRows(model)];
    case "equipment":
      return ["Equipment", "", ...equipmentRows(model)];
    case "item_menu":
      return [ITEM_VERBS[mode.key][1], "", ...inventoryRows(model, mode.verb), "", "(a letter, or Escape)"];
    case "spell_menu": {
      const head = mode.verb === "upgrade" ? "Upgrade which spell?" : "Spells";
      const rows = model.knownSpells().map((s) =>
        `${s.letter} - ${s.name.padEnd(20)} ${String(s.level).padStart(5)}  ${s.school.padEnd(14)} ${String(s.fail).padStart(3)}%  ${String(s.cost).padStart(4)}${s.forgotten ? "  (forgotten)" : ""}`);
      return [head, "", `    ${"Name".padEnd(20)} Level  ${"School".padEnd(14)} Fail  Cost`, ...rows];
    }
    case "choose":
      return ["Level-up reward", "", `Choose a reward (${model.me.choice || 0} owed):`,
        ...(model.me.options || []).slice(0, 26).map((o, i) => `  ${String.fromCharCode(97 + i)} - ${optionLabel(o)}`)];
    case "history": {
      const shown = mode.scroll ? log.slice(0, log.length - mode.scroll) : log;
      return [`Message history${mode.scroll ? ` (${mode.scroll} lines back)` : ""}`, "", ...shown.slice(-(VIEW_H - 2))];
    }
    case "info":
      return infoLines(mode.looked);
    default:
      return null;
  }
}

function pct(p) {
  return typeof p === "number" ? `${Math.round(p * 100)}%` : "?";
}

function infoLines(id) {
  const info = lookInfo.get(id);
  if (!info) return ["Looking..."];
  if (!info.found) return ["You cannot see that any more."];
  const a = info.about;
  const kind = model.kindByKey(a.kind);
  const kindName = kind ? kind[1] : String(a.kind);
  let title = String(a.name || kindName);
  if (kindName && title.toLowerCase() !== kindName.toLowerCase()) title += ` (${kindName})`;
  const resist = Object.entries(a.resist || {}).map(([k, v]) => `${k.replace(/_/g, " ")} ${v > 0 ? "+" : ""}${v}`);
  const rows = [title, "", `  Level ${a.level}   Health ${a.hp}/${a.max_hp}   Energy ${a.en}/${a.max_en}`,
    `  Power ${a.power}   Defence ${a.defence}`];
  if (typeof a.courage === "number" && id !== model.id) rows.push(`  Courage ${pct(a.courage)} (flees below that share of health)`);
  rows.push(`  Resistances: ${resist.join(", ") || "none"}`);
  rows.push(`  Abilities: ${(a.abilities || []).map((x) => String(x).replace(/_/g, " ")).join(", ") || "none"}`);
  if (a.spells && a.spells.length) rows.push(`  Casts: ${a.spells.map((k) => model.spellName(k)).join(", ")}`);
  if (a.breath) rows.push(`  Breathes ${String(a.breath).replace(/_/g, " ")}`);
  rows.push(`  Statuses: ${(a.sts || []).map(([c, r]) => `${model.statusName(c)} (${r})`).join(", ") || "none"}`);
  if (id !== model.id) {
    rows.push(`  You miss it ${pct(a.you_miss)}, critical ${pct(a.you_crit)};  it misses you ${pct(a.it_miss)}, critical ${pct(a.it_crit)}`);
  }
  return rows;
}

function promptText() {
  switch (mode.kind) {
    case "direction":
      return "In which direction? (a movement key, Escape cancels)";
    case "open":
      return "Open in which direction?";
    case "close":
      return "Close in which direction?";
    case "target":
      return {
        throw: "Throw: aim with the movement keys, Tab: next monster, Enter: throw, Escape: cancel",
        cast: "Cast: aim with the movement keys, Tab: next monster, Enter: cast, Escape: cancel",
        look: "Look: move the cursor, Tab: next monster, Enter: look, Escape: cancel",
        travel: "Travel: move the cursor (< > stairs), Enter: go, Escape: cancel",
      }[mode.verb];
    case "quit":
      return "Leave the game and return to the lobby? (y/n)";
    case "normal":
      return auto ? `${auto.kind}… (any key stops)` : "? help   Q leave   click: travel / look";
    default:
      return "Escape returns";
  }
}

function draw() {
  const start = performance.now();
  const lines = pageLines();
  const page = $("page");
  if (lines) {
    page.hidden = false;
    $("map").hidden = true;
    page.replaceChildren(...lines.map((line, i) => el("div", line || " ", i === 0 ? "b" : "")));
  } else {
    page.hidden = true;
    $("map").hidden = false;
    drawMap();
  }
  drawStatus();
  drawLog();
  const prompt = replay ? replay.status() : note || promptText();
  if ($("prompt").textContent !== prompt) $("prompt").textContent = prompt;
  $("prompt").className = replay || note ? "c-bright_yellow b" : "";
  const ms = performance.now() - start;
  if (animator.busy(performance.now() / 1000)) scheduleDraw(); // the next step of a ray
  stats.frames += 1;
  stats.totalMs += ms;
  stats.lastMs = ms;
  stats.maxMs = Math.max(stats.maxMs, ms);
}

// --- the connection ---------------------------------------------------------------

const conn = {
  ws: null,
  name: "",
  cls: "",
  seq: 0,
  retries: 0,
  stopped: true,
  timer: null,
  watch: "", // the player watched, or "" to play

  url() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    return `${scheme}//${location.host}/`;
  },

  start(name, cls, watch = "") {
    this.name = name;
    this.cls = cls;
    this.watch = watch;
    this.stopped = false;
    this.retries = 0;
    if (!watch) sessionStorage.setItem("underhall.playing", name);
    this.open();
  },

  open() {
    clearTimeout(this.timer);
    const ws = new WebSocket(this.url());
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    this.seq = 0;
    ws.onopen = () => {
      const hello = { t: "hello", v: PROTOCOL_VERSION, name: this.name };
      const token = store.token(this.name);
      if (this.watch) hello.watch = this.watch; // a spectator: no token, no class
      else if (token) hello.token = token;
      if (this.cls && !this.watch) hello.class = this.cls;
      this.send(hello);
    };
    ws.onmessage = (event) => {
      if (typeof event.data !== "string") feed(new Uint8Array(event.data));
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      stopAuto();
      if (this.stopped) return;
      const wait = Math.min(5000, 500 * 2 ** this.retries);
      this.retries += 1;
      note = `Connection lost; reconnecting in ${(wait / 1000).toFixed(1)} s…`;
      scheduleDraw();
      this.timer = setTimeout(() => this.open(), wait);
    };
  },

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    sessionStorage.removeItem("underhall.playing");
    if (this.ws) this.ws.close(1000);
    this.ws = null;
  },

  send(msg) {
    if (this.watch && (msg.t === "cmd" || msg.t === "look")) return; // a spectator only watches
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(MessagePack.encode(msg));
  },

  command(c, extra) {
    const seq = this.seq;
    this.seq += 1;
    this.send(Object.assign({ t: "cmd", seq, c }, extra || {}));
    return seq;
  },
};

// One frame as the server wrote it (a live one, or a recording's): decoded
// and applied; a frame that does not decode is skipped.
function feed(data) {
  let msg;
  try {
    msg = MessagePack.decode(data);
  } catch (e) {
    return;
  }
  if (msg && typeof msg === "object") receive(msg);
}

function receive(msg) {
  if (msg.t === undefined) {
    const refused = model.applyDelta(msg);
    afterFrame(refused, model.events(msg));
    return;
  }
  switch (msg.t) {
    case "welcome":
      model.applyWelcome(msg);
      if (replay) {
        const header = replay.tape.header;
        addLine(`Replay of ${header.name}'s game of ${startedText(header.started)} UTC.  space: pause  1 2 4 8: speed  arrows: seek  g G: start, end  q: lobby`);
        break;
      }
      if (msg.watch) {
        addLine(`You watch ${msg.name}: keys act on nothing; Enter chats with ${msg.name} and its spectators.`);
        break;
      }
      store.saveToken(msg.name, msg.token);
      store.saveLast(msg.name, conn.cls);
      conn.name = msg.name;
      conn.retries = 0;
      note = "";
      lookInfo = new Map();
      if (msg.motd) addLine(msg.motd);
      addLine(msg.resumed ? `Welcome back, ${msg.name}.` : `Welcome, ${msg.name}.`);
      break;
    case "snap":
      afterFrame(model.applySnap(msg), msg.ev || []);
      invalidate();
      break;
    case "chat": {
      const line = msg.from ? `<${msg.from}> ${msg.text}` : `* ${msg.text}`;
      if (msg.scope === "global") addLine(`[global] ${line}`);
      else if (msg.scope === "private") addLine(msg.to ? `[to ${msg.to}] ${line}` : `[private] ${line}`);
      else if (msg.scope === "watch") addLine(`[watching ${msg.to}] ${line}`);
      else addLine(line);
      break;
    }
    case "info":
      lookInfo.set(msg.id, msg);
      break;
    case "watchers":
      addLine(msg.n ? `${msg.n} watching you.` : "Nobody is watching you.");
      break;
    case "error":
      if (msg.fatal && !replay) {
        if (NO_RETRY.has(msg.code)) {
          conn.stop();
          lobby.show(errorText(msg.code, msg.msg));
          return;
        }
        note = `${errorText(msg.code, msg.msg)} Reconnecting…`;
      } else {
        addLine(errorText(msg.code, msg.msg));
      }
      break;
    default:
      break;
  }
  scheduleDraw();
}

function afterFrame(refused, events) {
  for (const [, reason] of refused) addLine(refusalText(reason));
  if (refused.length) stopAuto();
  animator.add(tracksFromEvents(events, model), performance.now() / 1000);
  for (const ev of events) {
    const line = describeEvent(model, ev);
    addLine(line);
    const ownDoor = ev[0] === "door" && ev[1] === model.id;
    if (line && auto && !ownDoor) stopAuto(); // something happened: a walk stops
  }
  if (model.me.dead) {
    if (mode.kind !== "normal") mode = { kind: "normal" };
    stopAuto();
  }
  if (auto) stepAuto(refused);
  scheduleDraw();
}

// --- run, travel, explore (each step one ordinary move: walk.js decides) ---------

function startAuto(kind, extra) {
  auto = { kind, seq: -1, walk: new Walk(kind, extra || {}).start(model) };
  stepAuto([]);
}

function stopAuto(why) {
  if (auto && why) addLine(why);
  auto = null;
  scheduleDraw();
}

// After each frame: once the last step is settled, take the next one.
function stepAuto(refused) {
  if (!auto || model.ack < auto.seq) return;
  if (refused.some(([seq]) => seq === auto.seq)) return stopAuto();
  const step = auto.walk.next(model);
  if (!Array.isArray(step)) return stopAuto(step.stop);
  auto.seq = conn.command("move", { d: step });
}

// --- keys ---------------------------------------------------------------------------

// The key as the terminal client names it: {ch, name, shift}.
function keyOf(e) {
  if (e.key === "Enter") return { ch: "\r" };
  if (e.key === "Escape") return { ch: "\x1b" };
  if (e.key === "Tab") return { ch: "\t", name: e.shiftKey ? "BTAB" : "TAB" };
  if (e.key === "Clear") return { ch: "5" };
  if (NAMED_DIRS[e.key]) return { ch: "", name: e.key, shift: e.shiftKey };
  if (e.ctrlKey && (e.key === "p" || e.key === "P")) return { ch: "\x10" };
  if (e.ctrlKey || e.altKey || e.metaKey) return null;
  if (e.key.length === 1) return { ch: e.key };
  return null;
}

function direction(key) {
  if (key.name) return NAMED_DIRS[key.name] || null;
  return DIRS[key.ch] || null;
}

function aimStart(verb, extra, nearest = true) {
  const targets = model.targets();
  const pos = model.position() || [0, 0];
  const cursor = nearest && targets.length ? [targets[0].x, targets[0].y] : pos;
  mode = Object.assign({ kind: "target", verb, cursor, target: 0 }, extra || {});
}

function normalKey(key) {
  const d = direction(key);
  if (d && key.shift) return startAuto("run", { dir: d });
  if (d) return conn.command("move", { d });
  const ch = key.ch;
  if (ch === "." || ch === "5") return conn.command("wait");
  if (ch === "\r" || ch === "'" || ch === '"') return openChat();
  if (ch === "\x10") return (mode = { kind: "history", scroll: 0 });
  const run = DIRS[ch.toLowerCase()];
  if (run && "HJKLYUBN".includes(ch)) return startAuto("run", { dir: run });
  if (ch === "G") return (mode = { kind: "direction", verb: "run" });
  if (ch === "_") return aimStart("travel", {}, false);
  if (ch === "A") return startAuto("explore");
  if (SIMPLE[ch]) return conn.command(SIMPLE[ch]);
  if (ITEM_VERBS[ch]) {
    const [verb, , nothing] = ITEM_VERBS[ch];
    if (!menuItems(model, verb).length) return addLine(nothing);
    return (mode = { kind: "item_menu", verb, key: ch });
  }
  if (ch === ";" || ch === "x") return aimStart("look");
  const simple = { o: "open", c: "close", "?": "help", Q: "quit", i: "inventory", e: "equipment", "[": "equipment" };
  if (simple[ch]) return (mode = { kind: simple[ch] });
  if (ch === "Z" || ch === "+") {
    if (!model.knownSpells().length) return addLine("You do not know any spells you can cast.");
    return (mode = { kind: "spell_menu", verb: ch === "Z" ? "cast" : "upgrade" });
  }
  if (ch === "C") {
    if (!(model.me.options || []).length) return addLine("You have no reward to choose.");
    return (mode = { kind: "choose" });
  }
  return null;
}

function fire() {
  const [x, y] = mode.cursor;
  const verb = mode.verb;
  const m = mode;
  mode = { kind: "normal" };
  if (verb === "look") {
    const actor = model.actorAt(x, y);
    if (!actor || !model.visible[y * model.w + x]) return addLine("You see no creature there.");
    return look(actor.id);
  }
  if (verb === "throw") return conn.command("throw", { item: m.item, at: [x, y] });
  if (verb === "travel") return startAuto("travel", { goal: [x, y] });
  return conn.command("cast", { spell: m.spell, at: [x, y] });
}

function look(id) {
  lookInfo.delete(id);
  conn.send({ t: "look", id });
  mode = { kind: "info", looked: id };
}

function aimKey(key) {
  const ch = key.ch;
  if (ch === "\x1b") return (mode = { kind: "normal" });
  if (ch === "\r" || ch === "." || ch === ",") return fire();
  const targets = model.targets();
  if (key.name === "TAB" || key.name === "BTAB") {
    if (!targets.length) return null;
    const index = (mode.target + (key.name === "TAB" ? 1 : targets.length - 1)) % targets.length;
    mode.target = index;
    mode.cursor = [targets[index].x, targets[index].y];
    return null;
  }
  if (mode.verb === "travel" && (ch === "<" || ch === ">")) {
    const cells = model.stairs(ch);
    if (!cells.length) return null;
    const here = cells.findIndex((c) => c[0] === mode.cursor[0] && c[1] === mode.cursor[1]);
    mode.cursor = cells[(here + 1) % cells.length];
    return null;
  }
  let d = direction(key);
  let far = 1;
  if (!d && /^[HJKLYUBN]$/.test(ch)) [d, far] = [DIRS[ch.toLowerCase()], FAR];
  if (d) {
    const x = Math.min(Math.max(mode.cursor[0] + d[0] * far, 0), Math.max(model.w - 1, 0));
    const y = Math.min(Math.max(mode.cursor[1] + d[1] * far, 0), Math.max(model.h - 1, 0));
    mode.cursor = [x, y];
  }
  return null;
}

function handleKey(key) {
  const ch = key.ch;
  switch (mode.kind) {
    case "normal":
      return normalKey(key);
    case "help":
    case "inventory":
    case "equipment":
    case "info":
      mode = { kind: "normal" };
      return null;
    case "quit":
      mode = { kind: "normal" };
      if (ch === "y" || ch === "Y") {
        conn.stop();
        lobby.show("");
      }
      return null;
    case "item_menu": {
      if (ch === "\x1b") return (mode = { kind: "normal" });
      if (!model.inventory().some((i) => i.letter === ch)) return null;
      const verb = mode.verb;
      if (verb === "throw") return aimStart("throw", { item: ch });
      if (verb === "zap") return (mode = { kind: "direction", verb: "zap", item: ch });
      mode = { kind: "normal" };
      return conn.command(verb, { item: ch });
    }
    case "spell_menu": {
      if (ch === "\x1b") return (mode = { kind: "normal" });
      const spell = model.knownSpells().find((s) => s.letter === ch);
      if (!spell) return null;
      if (mode.verb === "upgrade") {
        mode = { kind: "normal" };
        return conn.command("upgrade", { spell: spell.key });
      }
      if (spell.aim === "self") {
        mode = { kind: "normal" };
        return conn.command("cast", { spell: spell.key });
      }
      if (spell.aim === "cell") return aimStart("cast", { spell: spell.key });
      return (mode = { kind: "direction", verb: "cast", spell: spell.key });
    }
    case "direction": {
      const d = direction(key);
      const m = mode;
      mode = { kind: "normal" };
      if (!d) return null;
      if (m.verb === "run") return startAuto("run", { dir: d });
      const extra = { d };
      if (m.item) extra.item = m.item;
      if (m.spell) extra.spell = m.spell;
      return conn.command(m.verb, extra);
    }
    case "open":
    case "close": {
      const d = direction(key);
      const verb = mode.kind;
      mode = { kind: "normal" };
      return d ? conn.command(verb, { d }) : null;
    }
    case "target":
      return aimKey(key);
    case "choose": {
      if (ch === "\x1b") return (mode = { kind: "normal" });
      const options = model.me.options || [];
      const index = ch.length === 1 ? ch.charCodeAt(0) - 97 : -1;
      if (index >= 0 && index < options.length) {
        mode = { kind: "normal" };
        return conn.command("choose", { opt: options[index] });
      }
      return null;
    }
    case "history": {
      const step = { ArrowUp: 1, ArrowDown: -1, PageUp: 10, PageDown: -10 }[key.name] || { k: 1, j: -1, "\x10": 1 }[ch];
      if (!step) return (mode = { kind: "normal" });
      mode.scroll = Math.min(Math.max(0, mode.scroll + step), Math.max(0, log.length - 1));
      return null;
    }
    default:
      mode = { kind: "normal" };
      return null;
  }
}

function openChat() {
  const input = $("chat");
  input.hidden = false;
  input.value = "";
  input.focus();
}

function sendChat(line) {
  line = line.trim().slice(0, CHAT_MAX);
  if (!line) return;
  if (line.startsWith("/g ")) {
    const text = line.slice(3).trim();
    if (text) conn.send({ t: "chat", text, scope: "global" });
    else addLine("usage: /g text");
    return;
  }
  if (line.startsWith("/w ") || line === "/w") {
    const rest = line.slice(3).trim();
    const space = rest.indexOf(" ");
    const name = space < 0 ? rest : rest.slice(0, space);
    const text = space < 0 ? "" : rest.slice(space + 1).trim();
    if (!NAME_RE.test(name) || !text) addLine("usage: /w name text");
    else conn.send({ t: "chat", text, to: name });
    return;
  }
  if (line.startsWith("/s ") || line === "/s") {
    const text = line.slice(3).trim(); // to your spectators (protocol 12)
    if (text) conn.send({ t: "chat", text, scope: "watch" });
    else addLine("usage: /s text");
    return;
  }
  if (line === "/watchers off" || line === "/watchers on") {
    conn.send({ t: "spectators", allow: line === "/watchers on" });
    return;
  }
  conn.send({ t: "chat", text: line });
}

function onKeyDown(e) {
  if ($("game").hidden || e.target === $("chat")) return;
  const key = keyOf(e);
  if (!key) return;
  e.preventDefault();
  if (replay || loading) {
    replayKey(key);
    scheduleDraw();
    return;
  }
  if (auto) {
    stopAuto();
    return;
  }
  note = conn.ws ? "" : note;
  handleKey(key);
  scheduleDraw();
}

function onChatKey(e) {
  if (e.key === "Enter") {
    sendChat($("chat").value.replace(/[\u0000-\u001f\u007f-\u009f]/g, ""));
  } else if (e.key !== "Escape") {
    return;
  }
  e.preventDefault();
  $("chat").hidden = true;
  $("chat").value = "";
  $("map").focus();
}

function onMapClick(e) {
  const box = $("map").getBoundingClientRect();
  const col = Math.floor((e.clientX - box.left) / grid.cw);
  const row = Math.floor((e.clientY - box.top) / grid.ch);
  if (col < 0 || row < 0 || col >= VIEW_W || row >= VIEW_H || mode.kind !== "normal" || !model.w || replay) return;
  const x = grid.x0 + col;
  const y = grid.y0 + row;
  if (x >= model.w || y >= model.h) return;
  const actor = model.visible[y * model.w + x] ? model.actorAt(x, y) : null;
  if (actor && actor.id !== model.id) look(actor.id);
  else if (model.known[y * model.w + x] !== UNKNOWN) startAuto("travel", { goal: [x, y] });
  scheduleDraw();
}

// --- a recorded game played back (?replay=ID) ----------------------------------------

// The recording's frames are fed through feed(), as a live connection's
// are; nothing is sent. Keys as the terminal replay's (client/replay.py),
// and the help, inventory, equipment and history, which only show.
async function startReplay(id) {
  lobby.hide();
  resetScreen();
  loading = id;
  note = "Loading the recording…  (q: the lobby)";
  scheduleDraw();
  let tape;
  try {
    const answer = await fetch(`recordings/${encodeURIComponent(id)}.msgpack`, { cache: "no-store" });
    if (!answer.ok) throw new RecordingError(answer.status === 404 ? "no such recording" : `the server answered ${answer.status}`);
    const body = new Uint8Array(await answer.arrayBuffer());
    if (loading !== id) return; // left for the lobby meanwhile
    tape = readTape(MessagePack.decodeMulti(body), (data) => MessagePack.decode(data));
  } catch (e) {
    if (loading === id) leaveReplay(`Cannot replay ${id}: ${e instanceof RecordingError ? e.message : "the server did not answer"}.`);
    return;
  }
  loading = "";
  note = "";
  replay = new Replay(tape, {
    show: (i) => feed(tape.frames[i]),
    rebuild: () => {
      resetScreen();
      feed(tape.frames[0]);
    },
    changed: scheduleDraw,
  });
  feed(tape.frames[0]);
  replay.start();
}

function resetScreen() {
  log = [];
  lastLine = "";
  repeat = 0;
  mode = { kind: "normal" };
  lookInfo = new Map();
  animator = new Animator();
  model.reset();
  invalidate();
}

function leaveReplay(message) {
  if (replay) replay.stop();
  replay = null;
  loading = "";
  note = "";
  history.replaceState(null, "", location.pathname); // a reload shows the lobby
  lobby.show(message);
}

const VIEWS = { "?": "help", i: "inventory", e: "equipment", "[": "equipment", "\x10": "history" };

function replayKey(key) {
  if (mode.kind !== "normal") return handleKey(key); // a page shown: its keys
  const ch = key.ch;
  if (ch === "q" || ch === "Q" || ch === "\x1b") return leaveReplay("");
  if (!replay) return null; // still loading
  if (ch === " ") return replay.togglePause();
  if (SPEEDS[ch]) return replay.setSpeed(SPEEDS[ch]);
  if (SEEK_KEYS[key.name]) {
    replay.seekBy(SEEK_KEYS[key.name]);
    animator = new Animator(); // what was passed is not animated
    return invalidate();
  }
  if (ch === "g" || ch === "G") {
    replay.seek(ch === "g" ? -1 : replay.state().last);
    animator = new Animator();
    return invalidate();
  }
  if (VIEWS[ch]) mode = VIEWS[ch] === "history" ? { kind: "history", scroll: 0 } : { kind: VIEWS[ch] };
  return null;
}

// --- a frame-time measurement (the browser test calls it) ---------------------------

// Draw `frames` whole frames (every cell redrawn), with `crowd` extra actors
// scattered over the level for the duration; returns the mean and worst ms.
function benchDraw(frames, crowd) {
  const added = [];
  const kinds = model.kinds.length;
  for (let i = 0; i < crowd && model.w; i++) {
    const id = 1e9 + i;
    const rec = { id, kind: i % Math.max(1, kinds), name: i % 3 ? "" : `p${i}`, x: (i * 7) % model.w, y: (i * 3) % model.h, hp: 1, max_hp: 1, flags: i % 3 ? 0 : FLAG.player, sts: 0 };
    model.actors.set(id, rec);
    added.push(id);
  }
  const times = [];
  for (let i = 0; i < frames; i++) {
    invalidate();
    for (const id of added) {
      const rec = model.actors.get(id);
      rec.x = (rec.x + 1) % model.w;
    }
    const t0 = performance.now();
    draw();
    void $("game").offsetHeight; // style and layout too, not only the script
    grid.ctx.getImageData(0, 0, 1, 1); // and the canvas's drawing, done now
    times.push(performance.now() - t0);
  }
  for (const id of added) model.actors.delete(id);
  invalidate();
  draw();
  times.sort((a, b) => a - b);
  const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
  return { mean: times.reduce((a, b) => a + b, 0) / Math.max(1, times.length), median: at(0.5), p95: at(0.95), max: at(1) };
}

// What the map shows, for tests: [glyph, class] of each cell, row by row.
function shown() {
  return grid.glyphs.map((glyph, k) => [glyph, grid.classes[k]]);
}

window.underhall = {
  model, stats, grid: () => ({ x0: grid.x0, y0: grid.y0, cw: grid.cw, ch: grid.ch }), shown, benchDraw, log: () => log.slice(), mode: () => mode,
  replay: () => (replay ? replay.state() : null), // {speed, paused, where, turn, last, next, frames, ms}
};

// --- start ----------------------------------------------------------------------------

function join(e) {
  e.preventDefault();
  const name = $("name").value.trim();
  if (!NAME_RE.test(name)) {
    $("lobby-error").textContent = "A name is 1–16 letters, digits, _ or -.";
    return;
  }
  begin(name, $("class").value);
}

function begin(name, cls, watch = "") {
  lobby.hide();
  resetScreen();
  note = "Connecting…";
  conn.start(name, cls, watch);
  scheduleDraw();
}

document.addEventListener("DOMContentLoaded", () => {
  buildGrid();
  $("join-form").addEventListener("submit", join);
  document.addEventListener("keydown", onKeyDown);
  $("chat").addEventListener("keydown", onChatKey);
  $("map").addEventListener("click", onMapClick);
  const playing = sessionStorage.getItem("underhall.playing");
  const params = new URLSearchParams(location.search);
  const watch = params.get("watch");
  const recording = params.get("replay");
  if (recording && RECORDING_RE.test(recording)) startReplay(recording);
  else if (watch && NAME_RE.test(watch)) {
    // A spectator (the lobby's watch link): named as this browser last played, unless that is the player.
    const last = store.last().name || "";
    begin(NAME_RE.test(last) && last.toLowerCase() !== watch.toLowerCase() ? last : "spectator", "", watch);
  } else if (playing && store.token(playing)) begin(playing, store.last().cls || "");
  else lobby.show("");
});
