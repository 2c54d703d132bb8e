// The page's menus, after the terminal client's client/menus.py: which pack
// items fit a command, and the lines of the inventory and equipment screens.
// A menu lists what looks as if it fits; the server has the last word.

const CATEGORY_SLOT = {
  weapon: "weapon", armour: "body", robe: "cloak", shield: "shield",
  helmet: "head", gloves: "hands", boots: "feet", spellbook: "book",
};
const SLOT_LABELS = {
  weapon: "Weapon", shield: "Shield", head: "Helmet", body: "Body armour",
  cloak: "Cloak", hands: "Gloves", feet: "Boots", book: "Spellbook",
};
export const EQUIPMENT_SLOTS = ["weapon", "shield", "head", "body", "cloak", "hands", "feet", "book"];
const WORN_SLOTS = new Set(["shield", "head", "body", "cloak", "hands", "feet", "book"]);
const GROUPS = [
  ["Weapons", ["weapon"]],
  ["Thrown weapons", ["thrown"]],
  ["Armour", ["armour", "shield", "robe", "helmet", "gloves", "boots"]],
  ["Wands and horns", ["wand", "horn"]],
  ["Potions", ["potion"]],
  ["Scrolls", ["scroll"]],
  ["Spellbooks", ["spellbook"]],
  ["Food", ["food"]],
];
const WHERE = { weapon: "weapon in hand", book: "spellbook in use" };

function entry(model, key) {
  const e = model.items[key];
  return e ? { name: e[0], category: e[3], about: e[4] || {} } : { name: String(key).replace(/_/g, " "), category: "misc", about: {} };
}

function itemSlot(category, about) {
  return typeof about.slot === "string" ? about.slot : CATEGORY_SLOT[category] || "";
}

export function fits(verb, item, model) {
  const { category, about } = entry(model, item.key);
  const slot = itemSlot(category, about);
  const nutrition = about.nutrition;
  switch (verb) {
    case "drop": return true;
    case "wield": return (slot === "weapon" || category === "weapon" || category === "thrown") && item.slot !== "weapon";
    case "wear": return WORN_SLOTS.has(slot) && item.slot === "";
    case "remove": return item.slot !== "";
    case "eat": return category === "food" || (Number.isInteger(nutrition) && nutrition > 0);
    case "quaff": return category === "potion";
    case "read": return category === "scroll" || category === "spellbook";
    case "throw": return !WORN_SLOTS.has(item.slot);
    case "zap": return category === "wand" || category === "horn";
    default: return false;
  }
}

export function menuItems(model, verb) {
  return model.inventory().filter((item) => fits(verb, item, model));
}

export function plural(name) {
  const cut = name.indexOf(" of ");
  let head = cut < 0 ? name : name.slice(0, cut);
  const tail = cut < 0 ? "" : name.slice(cut);
  if (/(s|sh|ch|x)$/.test(head)) head += "es";
  else if (/[^aeiou]y$/.test(head)) head = `${head.slice(0, -1)}ies`;
  else head += "s";
  return head + tail;
}

const article = (name) => (/^[aeiou]/i.test(name) ? `an ${name}` : `a ${name}`);

// "a - 2 cursed scrolls of spark", "b - a dagger (weapon in hand)" ...
export function itemLabel(model, item, where = true) {
  const { name } = entry(model, item.key);
  let buc = "";
  if (item.flags & 1) buc = "cursed ";
  else if (item.flags & 2) buc = "blessed ";
  else if (item.flags & 4) buc = "uncursed ";
  const phrase = item.count > 1 ? `${item.count} ${buc}${plural(name)}` : article(buc + name);
  const notes = [];
  if (item.charges >= 0) notes.push(`${item.charges} charge${item.charges === 1 ? "" : "s"}`);
  if (where && item.slot) notes.push(WHERE[item.slot] || "being worn");
  return `${item.letter} - ${phrase}${notes.map((n) => ` (${n})`).join("")}`;
}

// The inventory under headings; only the items fitting `verb` if given.
export function inventoryRows(model, verb) {
  const items = verb ? menuItems(model, verb) : model.inventory();
  if (!items.length) return [verb ? "Nothing fits." : "Your pack is empty."];
  const rows = [];
  const placed = new Set();
  for (const [heading, categories] of [...GROUPS, ["Other", null]]) {
    const group = items.filter((it) => !placed.has(it.letter) && (!categories || categories.includes(entry(model, it.key).category)));
    if (!group.length) continue;
    rows.push(heading);
    for (const it of group) {
      rows.push(`  ${itemLabel(model, it)}`);
      placed.add(it.letter);
    }
  }
  return rows;
}

const signed = (v) => `${v > 0 ? "+" : ""}${v}`;

// One line per slot, the item in it or "(nothing)", then power, defence and resistances.
export function equipmentRows(model) {
  const worn = {};
  for (const it of model.inventory()) if (it.slot && !worn[it.slot]) worn[it.slot] = it;
  const slots = [...EQUIPMENT_SLOTS, ...Object.keys(worn).filter((s) => !EQUIPMENT_SLOTS.includes(s))];
  const rows = slots.map((slot) => {
    const label = SLOT_LABELS[slot] || slot.replace(/_/g, " ");
    const it = worn[slot];
    return `  ${label.padEnd(12)} ${it ? itemLabel(model, it, false) : "(nothing)"}`;
  });
  const me = model.me;
  const resist = Object.entries(me.resist || {}).sort().map(([k, v]) => `${k.replace(/_/g, " ")} ${signed(v)}`);
  rows.push("", `  With this equipment: power ${me.power ?? "?"}, defence ${me.defence ?? "?"}; resistances: ${resist.join(", ") || "none"}`);
  return rows;
}
