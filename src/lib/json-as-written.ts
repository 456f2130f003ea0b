// A JSON reader that keeps how each number and string was written. Go's
// encoding/json decodes a number into an int from its spelling
// (strconv.ParseInt, so 1.0 and 1e3 are refused) and hands time.Time the
// string's raw bytes, escapes and all; JSON.parse keeps neither.

export type JsonValue =
  | { kind: "null" }
  | { kind: "bool"; value: boolean }
  | { kind: "number"; raw: string }
  /** `raw`: the text between the quotes, undecoded. */
  | { kind: "string"; raw: string; value: string }
  | { kind: "array"; items: JsonValue[] }
  /** Members in the order written, duplicates kept. */
  | { kind: "object"; members: Array<[string, JsonValue]> };

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const HEX4 = /[0-9a-fA-F]{4}/y;
const SIMPLE_ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);
// Go's scanner refuses a value nested deeper (maxNestingDepth in
// encoding/json/scanner.go, Go 1.15 and later).
const MAX_DEPTH = 10_000;

/** An array or object being read, and the key its next member goes under. */
interface Open {
  value: JsonValue & { kind: "array" | "object" };
  key: string;
}

// Iterative, with its own stack, and strings read by a loop rather than a
// regular expression: a file nested 10,000 deep or holding a string of many
// millions of characters, both of which Go decodes, must not exhaust the
// JavaScript stack (a backtracking regular expression recurses per character).
class Reader {
  at = 0;
  constructor(readonly text: string) {}

  fail(what: string): never {
    throw new SyntaxError(`${what} at position ${this.at}`);
  }

  skip(): void {
    const { text } = this;
    let at = this.at;
    for (let c = text.charCodeAt(at); c === 32 || c === 9 || c === 10 || c === 13; c = text.charCodeAt(++at));
    this.at = at;
  }

  match(pattern: RegExp): string | null {
    pattern.lastIndex = this.at;
    const found = pattern.exec(this.text);
    if (!found) return null;
    this.at = pattern.lastIndex;
    return found[0];
  }

  literal(word: string): boolean {
    if (!this.text.startsWith(word, this.at)) return false;
    this.at += word.length;
    return true;
  }

  /** A string: characters other than control characters, and escapes (RFC 8259, section 7). */
  string(): { kind: "string"; raw: string; value: string } {
    const { text } = this;
    const start = this.at;
    if (text[start] !== '"') this.fail("a malformed string");
    let at = start + 1;
    let escaped = false;
    for (;;) {
      const c = text.charCodeAt(at);
      if (c === 34) break;
      if (Number.isNaN(c) || c < 0x20) {
        this.at = at;
        this.fail("a malformed string");
      }
      if (c !== 92) {
        at++;
        continue;
      }
      escaped = true;
      const next = text[at + 1] ?? "";
      if (SIMPLE_ESCAPES.has(next)) at += 2;
      else {
        HEX4.lastIndex = at + 2;
        if (next !== "u" || !HEX4.test(text)) {
          this.at = at;
          this.fail("a malformed string");
        }
        at += 6;
      }
    }
    this.at = at + 1;
    const raw = text.slice(start + 1, at);
    // Without a backslash the text is its own value; only escapes need decoding.
    return { kind: "string", raw, value: escaped ? (JSON.parse(text.slice(start, at + 1)) as string) : raw };
  }

  scalar(): JsonValue {
    if (this.text[this.at] === '"') return this.string();
    if (this.literal("null")) return { kind: "null" };
    if (this.literal("true")) return { kind: "bool", value: true };
    if (this.literal("false")) return { kind: "bool", value: false };
    const raw = this.match(NUMBER);
    return raw === null ? this.fail("an unexpected character") : { kind: "number", raw };
  }

  /** A member's key and its colon. */
  key(): string {
    this.skip();
    const key = this.string().value;
    this.skip();
    if (!this.literal(":")) this.fail('":" expected');
    return key;
  }

  value(): JsonValue {
    const open: Open[] = [];
    for (;;) {
      this.skip();
      const c = this.text[this.at];
      let done: JsonValue;
      if (c === "[" || c === "{") {
        if (open.length >= MAX_DEPTH)
          this.fail(`nesting deeper than ${MAX_DEPTH} levels, which AgentAPI's Go decoder refuses too,`);
        this.at++;
        this.skip();
        const value: Open["value"] = c === "[" ? { kind: "array", items: [] } : { kind: "object", members: [] };
        if (!this.literal(c === "[" ? "]" : "}")) {
          open.push({ value, key: c === "{" ? this.key() : "" });
          continue;
        }
        done = value;
      } else {
        done = this.scalar();
      }
      // Hands the finished value to the containers above it, closing each that ends here.
      for (;;) {
        const top = open.at(-1);
        if (top === undefined) return done;
        if (top.value.kind === "array") top.value.items.push(done);
        else top.value.members.push([top.key, done]);
        this.skip();
        const close = top.value.kind === "array" ? "]" : "}";
        if (this.literal(close)) {
          open.pop();
          done = top.value;
          continue;
        }
        if (!this.literal(",")) this.fail(`"," or "${close}" expected`);
        if (top.value.kind === "object") top.key = this.key();
        break;
      }
    }
  }
}

/**
 * The first JSON value in `text`, as Go's json.Decoder.Decode reads it: what
 * follows that value is not read. Throws SyntaxError when it is not JSON.
 */
export function readFirstJsonValue(text: string): JsonValue {
  return new Reader(text).value();
}
