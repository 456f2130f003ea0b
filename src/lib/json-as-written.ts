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
// A string: unescaped characters other than control characters, and escapes (RFC 8259, section 7).
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON forbids raw control characters in strings.
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

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

  string(): { kind: "string"; raw: string; value: string } {
    const quoted = this.match(STRING) ?? this.fail("a malformed string");
    const raw = quoted.slice(1, -1);
    // Without a backslash the text is its own value; only escapes need decoding.
    return { kind: "string", raw, value: raw.includes("\\") ? (JSON.parse(quoted) as string) : raw };
  }

  value(): JsonValue {
    this.skip();
    const c = this.text[this.at];
    if (c === "{") return this.object();
    if (c === "[") return this.array();
    if (c === '"') return this.string();
    if (this.literal("null")) return { kind: "null" };
    if (this.literal("true")) return { kind: "bool", value: true };
    if (this.literal("false")) return { kind: "bool", value: false };
    const raw = this.match(NUMBER);
    return raw === null ? this.fail("an unexpected character") : { kind: "number", raw };
  }

  /** Calls `each` for every element of a `[...]` or `{...}` opened at the current position. */
  list(close: string, each: () => void): void {
    this.at++;
    this.skip();
    if (this.literal(close)) return;
    for (;;) {
      each();
      this.skip();
      if (this.literal(close)) return;
      if (!this.literal(",")) this.fail(`"," or "${close}" expected`);
    }
  }

  array(): JsonValue {
    const items: JsonValue[] = [];
    this.list("]", () => items.push(this.value()));
    return { kind: "array", items };
  }

  object(): JsonValue {
    const members: Array<[string, JsonValue]> = [];
    this.list("}", () => {
      this.skip();
      const key = this.string().value;
      this.skip();
      if (!this.literal(":")) this.fail('":" expected');
      members.push([key, this.value()]);
    });
    return { kind: "object", members };
  }
}

/**
 * The first JSON value in `text`, as Go's json.Decoder.Decode reads it: what
 * follows that value is not read. Throws SyntaxError when it is not JSON.
 */
export function readFirstJsonValue(text: string): JsonValue {
  return new Reader(text).value();
}
