// The browser's replay of a recorded game (issue 45, item 3), as the terminal
// replay (client/replay.py) plays one: the play screen fed the recording's
// frames at the pace they were written. This module holds the recording and
// its pace; it never touches the page or the network: app.js fetches the
// values of /recordings/ID.msgpack (docs/protocol.md, "Recordings"), hands
// each frame to the path a live frame takes, and maps the keys.

export const FORMAT = "underhall-recording";
export const FORMAT_VERSION = 1;
export const SPEEDS = { 1: 1, 2: 2, 4: 4, 8: 8 }; // speed key -> factor
export const SEEK_KEYS = { ArrowRight: 10, ArrowLeft: -10, ArrowDown: 100, ArrowUp: -100 }; // turns (ticks)

export class RecordingError extends Error {}

// A recording's values made into a tape: {header, ms[], ticks[], frames[], ended}.
// `values` iterates the decoded msgpack values (a header map, then
// [ms, tick, payload] arrays, then maybe {ended}); a value that fails to
// decode ends the tape there, as a file cut short reads up to its cut.
// `decode(payload)` decodes a frame; the first must be a `welcome`.
// Ticks are made never to decrease. Throws RecordingError.
export function readTape(values, decode) {
  const tape = { header: null, ms: [], ticks: [], frames: [], ended: null };
  try {
    for (const value of values) {
      if (tape.header === null) {
        if (!value || value.format !== FORMAT) throw new RecordingError("not an Underhall recording");
        if (value.v !== FORMAT_VERSION) throw new RecordingError(`a recording of format ${value.v}, not ${FORMAT_VERSION}`);
        tape.header = value;
      } else if (Array.isArray(value) && value.length === 3 && Number.isInteger(value[0])
          && Number.isInteger(value[1]) && value[2] instanceof Uint8Array) {
        const last = tape.ticks.length ? tape.ticks[tape.ticks.length - 1] : value[1];
        tape.ms.push(value[0]);
        tape.ticks.push(Math.max(value[1], last));
        tape.frames.push(value[2]);
      } else if (value && typeof value.ended === "number") {
        tape.ended = value.ended;
      }
    }
  } catch (e) {
    if (e instanceof RecordingError) throw e;
    if (tape.header === null) throw new RecordingError("not an Underhall recording");
    // a value that does not decode: the tape ends before it
  }
  let first = null;
  try {
    first = tape.frames.length ? decode(tape.frames[0]) : null;
  } catch (e) {
    first = null;
  }
  if (!first || first.t !== "welcome") throw new RecordingError("the recording does not begin with a welcome");
  tape.welcome = first;
  return tape;
}

// One replay of a tape. `show(i)` applies frame i as a live frame is
// applied; `rebuild()` starts the screen again from the welcome (frame 0)
// for a seek back; `changed()` is called after anything changed (frames
// shown, pace or place); `now()` is the page's clock in ms.
export class Replay {
  constructor(tape, { show, rebuild, changed, now = () => performance.now() }) {
    this.tape = tape;
    this.show = show;
    this.rebuild = rebuild;
    this.changed = changed;
    this.now = now;
    this.speed = 1;
    this.paused = false;
    this.next = 1; // the next frame to show (0, the welcome, is shown at start)
    this.clock = [now(), 0]; // [page ms, recording ms] at the last change of pace
    this.timer = null;
    this.stopped = false;
  }

  get length() {
    return this.tape.frames.length;
  }

  // The index of the first frame written after `tick` (at least 1): the
  // frames before it are what the player had seen at that tick.
  indexAfter(tick) {
    const ticks = this.tape.ticks;
    let lo = 0;
    let hi = ticks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ticks[mid] <= tick) lo = mid + 1;
      else hi = mid;
    }
    return Math.max(1, lo);
  }

  // The recording's time now (ms since the game began), at the current pace.
  nowMs() {
    const [page, ms] = this.clock;
    return this.paused ? ms : ms + (this.now() - page) * this.speed;
  }

  where() {
    if (this.next >= this.length) return "end";
    return this.paused ? "paused" : "playing";
  }

  // Where the replay is: the turn (tick) shown and the last, the next
  // frame's index and how many there are, the pace, the recording's time.
  state() {
    const ticks = this.tape.ticks;
    return {
      speed: this.speed, paused: this.paused, where: this.where(), turn: ticks[this.next - 1],
      last: ticks[ticks.length - 1], next: this.next, frames: this.length, ms: this.nowMs(),
    };
  }

  status() {
    const s = this.state();
    return `replay ×${s.speed}  ${s.where}  turn ${s.turn} of ${s.last}`;
  }

  start() {
    this.repace(0);
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = null;
  }

  togglePause() {
    const now = this.nowMs();
    this.paused = !this.paused;
    this.repace(now);
  }

  setSpeed(speed) {
    const now = this.nowMs();
    this.speed = speed;
    this.repace(now);
  }

  // Seek by `turns` ticks from the turn shown.
  seekBy(turns) {
    this.seek(this.tape.ticks[this.next - 1] + turns);
  }

  // Show the screen as it was after `tick` (clamped to the recording); a
  // seek back builds it again from the start, a seek on applies the frames
  // between, neither drawing what it passes.
  seek(tick) {
    const target = Math.min(this.indexAfter(tick), this.length);
    if (target < this.next) {
      this.rebuild();
      this.next = 1;
    }
    for (let i = this.next; i < target; i++) this.show(i);
    this.next = target;
    this.repace(this.tape.ms[this.next - 1]);
  }

  // Restart the clock at recording time `ms`, and wait for the next frame.
  repace(ms) {
    this.clock = [this.now(), ms];
    this.schedule();
    this.changed();
  }

  schedule() {
    clearTimeout(this.timer);
    this.timer = null;
    if (this.stopped || this.paused || this.next >= this.length) return;
    const wait = (this.tape.ms[this.next] - this.nowMs()) / this.speed;
    this.timer = setTimeout(() => this.due(), Math.max(0, Math.ceil(wait)));
  }

  // Show every frame whose time has come, then wait for the next.
  due() {
    this.timer = null;
    if (this.stopped) return;
    const now = this.nowMs();
    let shown = false;
    while (!this.paused && this.next < this.length && this.tape.ms[this.next] <= now) {
      this.show(this.next);
      this.next += 1;
      shown = true;
    }
    this.schedule();
    if (shown) this.changed();
  }
}
