// Message-log lines from events (docs/protocol.md, "Events"), after the
// terminal client's client/event_text.py and client/combat_text.py. An event
// this file does not know, or a malformed one, gives null: a newer server
// never breaks the page.

const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);
const words = (key) => (typeof key === "string" ? key.replace(/_/g, " ") : "something");
const article = (name) => (/^[aeiou]/i.test(name) ? `an ${name}` : `a ${name}`);
const isInt = (v) => Number.isInteger(v);

// Who an actor id is: "you", a player's name, or "the <kind>".
function who(model, id) {
  if (id === null || id === undefined) return actorWords("something", false, false);
  if (id === model.id) return actorWords("you", true, false);
  let rec = model.actors.get(id);
  if (!rec && model.kept.has(id)) rec = model.kept.get(id)[0];
  if (!rec) return actorWords("something", false, false);
  if (rec.name) return actorWords(rec.name, false, true);
  const kind = model.kindEntry(rec.kind);
  return actorWords(`the ${kind ? kind[1] : "creature"}`, false, false);
}

function actorWords(name, you, proper) {
  return {
    you,
    name,
    subject: () => (you ? "You" : proper ? name : cap(name)),
    object: () => (you ? "you" : name),
    verb: (v) => (you ? v : /(s|sh|ch|x)$/.test(v) ? `${v}es` : `${v}s`),
  };
}

function item(model, key) {
  return article(model.itemName(key));
}

const USE = { eat: ["eat", "eats"], quaff: ["drink", "drinks"], read: ["read", "reads"],
  zap: ["zap", "zaps"], blow: ["blow", "blows"] };
const CAUSES = { throw: "missile", ray: "ray", beam: "beam", bolt: "bolt", ball: "explosion",
  spell: "spell", breath: "breath", shield: "shield", potion: "potion" };
const PREFIX = { crit: "A critical hit! ", lucky: "A lucky hit! " };
const packItem = (m, letter) => {
  const it = m.inventory().find((i) => i.letter === letter);
  return it ? m.itemName(it.key) : "equipment";
};
const OPTION_LABELS = { health: "more health", energy: "more energy", power: "more power", defence: "more defence" };

// A level-up reward key in words ("resist_fire" -> "resistance to fire").
export function optionLabel(option) {
  if (OPTION_LABELS[option]) return OPTION_LABELS[option];
  if (option.startsWith("resist_")) return `resistance to ${words(option.slice(7))}`;
  return `the ability: ${words(option)}`;
}

const NOTES = {
  hungry: () => "You are getting hungry.",
  weak: () => "You feel weak from hunger.",
  starving: () => "You are starving!",
  identified: (m, a) => (typeof a === "string" ? `You now know ${item(m, a)}.` : null),
  nothing_happens: () => "Nothing seems to happen.",
  forgot: (m, a) => `You have forgotten the spell ${m.spellName(a)}.`,
  choice: (m, a) => (typeof a === "string" ? `You gain ${optionLabel(a)}.` : "You may choose a reward for your level: press C."),
  curse_removed: (m, a) => `The curse on your ${packItem(m, a)} is lifted.`,
  curse_stays: (m, a) => `The curse on your ${packItem(m, a)} holds fast.`,
  enchanted: (m, a) => `Your ${packItem(m, a)} glows blue for a moment.`,
  spell_failed: () => "Your spell fails.",
  upgraded: (m, a) => `The altar glows: your ${m.spellName(a)} spell grows stronger.`,
  rusted: (m, a) => `Your ${packItem(m, a)} rusts.`,
};

const EVENTS = {
  atk(m, [, attacker, target, outcome, damage, surprise]) {
    const a = who(m, attacker);
    const t = who(m, target);
    if (outcome === "miss") return `${a.subject()} ${a.verb("miss")} ${t.object()}.`;
    const head = PREFIX[outcome] || "";
    const clause = surprise
      ? `${a.subject()} ${a.verb("surprise")} ${t.object()} and ${a.verb("hit")} ${t.you ? "you" : "it"}`
      : `${a.subject()} ${a.verb("hit")} ${t.object()}`;
    if (damage > 0) return `${head}${clause} for ${damage}.`;
    return `${head}${clause} but ${a.you ? "do" : "does"} no damage.`;
  },
  die(m, [, victim, killer]) {
    const v = who(m, victim);
    const k = killer === null || killer === undefined ? null : who(m, killer);
    if (v.you) return k && !k.you ? `You are killed by ${k.object()}. You die...` : "You die...";
    if (!k) return `${v.subject()} dies.`;
    return `${k.subject()} ${k.verb("kill")} ${v.object()}!`;
  },
  door(m, [, actor, , , open]) {
    const a = who(m, actor);
    return `${a.subject()} ${a.verb(open ? "open" : "close")} a door.`;
  },
  pick(m, [, actor, key]) {
    const a = who(m, actor);
    return `${a.subject()} ${a.verb("pick")} up ${item(m, key)}.`;
  },
  drop(m, [, actor, key]) {
    const a = who(m, actor);
    return `${a.subject()} ${a.verb("drop")} ${item(m, key)}.`;
  },
  use(m, [, actor, verb, key]) {
    const a = who(m, actor);
    const v = USE[verb];
    return v ? `${a.subject()} ${a.you ? v[0] : v[1]} ${item(m, key)}.` : null;
  },
  throw(m, [, actor, key]) {
    const a = who(m, actor);
    return `${a.subject()} ${a.verb("throw")} ${item(m, key)}.`;
  },
  land(m, [, , key, , , shattered]) {
    if (typeof key !== "string" || key.startsWith("bolt:")) return null;
    const name = cap(`the ${m.itemName(key)}`);
    return shattered === true ? `${name} shatters!` : `${name} lands.`;
  },
  harm(m, [, target, source, dtype, damage, cause, outcome]) {
    if (!isInt(damage)) return null;
    const t = who(m, target);
    const kind = typeof dtype === "string" && dtype !== "physical" ? ` ${words(dtype)}` : "";
    if (cause === "status" || cause === "hunger") {
      if (damage <= 0) return null;
      const why = cause === "hunger" ? " from hunger" : "";
      return `${t.subject()} ${t.verb("suffer")} ${damage}${kind} damage${why}.`;
    }
    const noun = CAUSES[cause];
    if (!noun) return null;
    let thing = `The ${noun}`;
    if (source !== null && source !== undefined) {
      const s = who(m, source);
      thing = s.you ? (t.you ? `Your own ${noun}` : `Your ${noun}`) : `${s.subject()}'s ${noun}`;
    }
    if (outcome === "miss") return `${thing} misses ${t.object()}.`;
    const head = PREFIX[outcome] || "";
    if (damage > 0) return `${head}${thing} hits ${t.object()} for ${damage}${kind} damage.`;
    return `${head}${thing} hits ${t.object()} but does no damage.`;
  },
  ray(m, [, source, kind, , bounces, , beam]) {
    const what = `${words(kind)} ${beam === true ? "beam" : "ray"}`;
    let line;
    if (source === null || source === undefined) line = `${cap(article(what))} flashes past.`;
    else {
      const s = who(m, source);
      line = `${s.subject()} ${s.verb("fire")} ${article(what)}.`;
    }
    if (Array.isArray(bounces) && bounces.length) {
      line += bounces.length === 1 ? " It bounces!" : ` It bounces ${bounces.length} times!`;
    }
    return line;
  },
  boom(m, [, , kind]) {
    return `${cap(article(words(kind)))} explosion bursts!`;
  },
  status(m, [, actor, code, on]) {
    const a = who(m, actor);
    const be = a.you ? "are" : "is";
    const name = m.statusName(code);
    return on === true ? `${a.subject()} ${be} ${name}.` : `${a.subject()} ${be} no longer ${name}.`;
  },
  burn(m, [, , , key]) {
    return `${cap(article(m.itemName(key)))} is destroyed!`;
  },
  poly(m, [, old, , kind]) {
    const entry = m.kindByKey(kind);
    return `${cap(who(m, old).name)} changes into ${article(entry ? entry[1] : words(kind))}!`;
  },
  cast(m, [, actor, spell, success]) {
    const a = who(m, actor);
    const name = m.spellName(spell);
    return success === true
      ? `${a.subject()} ${a.verb("cast")} ${name}.`
      : `${a.subject()} ${a.verb("fail")} to cast ${name}.`;
  },
  lvl(m, [, actor, level]) {
    const a = who(m, actor);
    return a.you
      ? `You feel more experienced (level ${level}).`
      : `${a.subject()} ${a.verb("reach")} level ${level}.`;
  },
  stairs(m, [, actor, depth]) {
    const a = who(m, actor);
    return `${a.subject()} ${a.verb("go")} ${depth > m.depth ? "down" : "up"} the stairs.`;
  },
  wake(m, [, actor]) {
    const a = who(m, actor);
    return `${a.subject()} ${a.verb("notice")} you.`;
  },
  flee(m, [, actor]) {
    const a = who(m, actor);
    return `${a.subject()} ${a.verb("turn")} to flee.`;
  },
  respawn(m, [, actor]) {
    const a = who(m, actor);
    return a.you ? "You return to life." : `${a.subject()} ${a.verb("return")} to life.`;
  },
  xp(m, [, actor, amount]) {
    const a = who(m, actor);
    return isInt(amount) && amount > 0 ? `${a.subject()} ${a.verb("gain")} ${amount} experience.` : null;
  },
  join: (m, [, name]) => (typeof name === "string" ? `${name} joined.` : null),
  leave: (m, [, name]) => (typeof name === "string" ? `${name} left.` : null),
  equip(m, [, letter, key, slot, on]) {
    const thing = `${article(m.itemName(key))} (${letter})`;
    if (on === true) {
      const head = { weapon: "You are now wielding", book: "You now hold" }[slot] || "You are now wearing";
      return `${head} ${thing}.`;
    }
    if (slot === "weapon") return `You are no longer wielding ${thing}.`;
    return slot === "book" ? `You put away ${thing}.` : `You take off ${thing}.`;
  },
  learn: (m, [, spell]) => `You learn the spell ${m.spellName(spell)}.`,
  note(m, [, code, arg]) {
    const f = NOTES[code];
    return f ? f(m, arg) : null;
  },
};

export function describeEvent(model, ev) {
  if (!Array.isArray(ev) || typeof ev[0] !== "string") return null;
  const f = EVENTS[ev[0]];
  if (!f) return null;
  try {
    return f(model, ev);
  } catch (e) {
    return null;
  }
}

// The terminal client's wording (client/notices.py).
const REASONS = {
  blocked: "Something solid blocks your way.",
  occupied: "Someone is standing there.",
  no_door: "There is no door there.",
  door_blocked: "Something is in the doorway.",
  no_stairs: "There are no stairs here.",
  sealed: "The way up is sealed.",
  nothing_here: "There is nothing here to pick up.",
  dead: "You are dead.",
  monster_in_view: "You cannot rest with a monster in view.",
  lava: "You will not step into lava.",
  queue_full: "Too many actions queued; wait a moment.",
  no_item: "You do not have that item.",
  pack_full: "Your pack is full.",
  wrong_item: "You cannot use that item that way.",
  cursed: "You cannot; it is cursed!",
  full: "You are too full to eat.",
  no_energy: "You do not have enough energy.",
  cannot_cast: "You cannot cast a spell right now.",
  unknown_spell: "You do not know that spell.",
  no_target: "That spell needs another kind of target.",
  no_choice: "You have no reward to choose.",
  confused: "You are too confused to do that.",
  afraid: "You are too afraid to attack.",
  no_altar: "You must stand on an altar to upgrade a spell.",
};

const ERRORS = {
  rate_limited: "Slow down: the server dropped some of your input.",
  version: "This client speaks another protocol version than the server.",
  name_taken: "That name is taken (and this browser has no token for it).",
  bad_class: "The server does not know that class.",
  server_full: "The server is full.",
  flood: "Disconnected for flooding the server.",
  timeout: "The server timed out waiting for us.",
  shutdown: "The server is shutting down.",
  replaced: "This character connected from elsewhere; this session is closed.",
  too_large: "A message was too large for the server.",
  kicked: "An operator disconnected you from the server.",
  banned: "This name is banned from the server.",
};

// One line for a server `error` (its `msg` where the code has no wording here).
export function errorText(code, msg) {
  return ERRORS[code] || (msg ? `Server error (${code}): ${msg}` : `Server error (${code}).`);
}

export function refusalText(reason) {
  return REASONS[reason] || `You cannot do that (${reason}).`;
}

export const HELP_LINES = [
  "Underhall keys",
  "",
  "  move / attack   arrows, numpad, or  h j k l  y u b n        y k u",
  "  wait  .  5      rest  R       pick up  g  ,                 h . l",
  "  stairs  >  <    open / close  o  c  then a direction        b j n",
  "  inventory  i    drop  d       wield  w    wear  W    take off  T",
  "  eat  E          quaff  q      read  r     equipment  e  [",
  "  throw  t  then aim            zap  z  then a direction",
  "  cast a spell  Z  then a direction or aim      look  ;  x  then aim",
  "  upgrade a spell at an altar  +     choose a level-up reward  C",
  "  run  Shift + direction (H J K L Y U B N), or G then a direction",
  "  travel  _  then aim (< > jump to stairs)    explore  A   (a key stops)",
  "  aiming: move the cursor (H J K L Y U B N: 8 cells), Tab: next monster,",
  "          Enter or .: fire, Escape: cancel",
  "  chat  Enter  '  \"  (Enter sends; /g text: everyone, /w name text: one player)",
  "  messages  Ctrl-P   help  ?   leave  Q",
  "  mouse: click a cell to travel there, click a creature to look at it",
  "",
  "Escape cancels a prompt or menu.  Press any key to return.",
];
