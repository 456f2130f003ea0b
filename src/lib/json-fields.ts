import path from "node:path";

/** A document that does not have the shape a script expects; the message names the field. */
export class FieldError extends Error {}

function describe(value: unknown): string {
  if (value === undefined) return "missing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string")
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === "object") return "an object";
  return `${typeof value} ${String(value)}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Typed reads from one JSON object. Each read checks the value's type and
 * names the field ("layer.port") when it is wrong, so a document from another
 * module version fails with the field to look at instead of an `undefined`
 * somewhere later.
 */
export class Fields {
  private constructor(
    private readonly value: Record<string, unknown>,
    private readonly at: string,
  ) {}

  static of(value: unknown, at: string): Fields {
    if (!isObject(value)) throw new FieldError(`${at} must be an object, but it is ${describe(value)}`);
    return new Fields(value, at);
  }

  private fail(key: string, what: string): never {
    throw new FieldError(`${this.name(key)} must be ${what}, but it is ${describe(this.value[key])}`);
  }

  private name(key: string): string {
    return `${this.at}.${key}`;
  }

  /** The object's own members as read, for a document written back with a change. */
  members(): Record<string, unknown> {
    return { ...this.value };
  }

  object(key: string): Fields {
    return Fields.of(this.value[key], this.name(key));
  }

  string(key: string): string {
    const value = this.value[key];
    return typeof value === "string" ? value : this.fail(key, "a string");
  }

  nullableString(key: string): string | null {
    const value = this.value[key];
    return value === null || typeof value === "string" ? value : this.fail(key, "a string or null");
  }

  boolean(key: string): boolean {
    const value = this.value[key];
    return typeof value === "boolean" ? value : this.fail(key, "true or false");
  }

  integer(key: string, min: number, max: number): number {
    const value = this.value[key];
    return Number.isInteger(value) && (value as number) >= min && (value as number) <= max
      ? (value as number)
      : this.fail(key, `a whole number from ${min} to ${max}`);
  }

  nullableInteger(key: string, min: number, max: number): number | null {
    return this.value[key] === null ? null : this.integer(key, min, max);
  }

  /** Whether the object has the key at all. */
  has(key: string): boolean {
    return this.value[key] !== undefined;
  }

  /** A list of strings. */
  stringList(key: string): string[] {
    const value = this.value[key];
    return Array.isArray(value) && value.every((item) => typeof item === "string")
      ? [...value]
      : this.fail(key, "a list of strings");
  }

  /** A list of whole numbers from `min` to `max`. */
  integerList(key: string, min: number, max: number): number[] {
    const value = this.value[key];
    return Array.isArray(value) && value.every((item) => Number.isInteger(item) && item >= min && item <= max)
      ? [...value]
      : this.fail(key, `a list of whole numbers from ${min} to ${max}`);
  }

  /** A list of objects, each read as Fields. */
  objectList(key: string): Fields[] {
    const value = this.value[key];
    if (!Array.isArray(value)) return this.fail(key, "a list of objects");
    return value.map((item, i) => Fields.of(item, `${this.name(key)}[${i}]`));
  }

  /** One of a fixed set of strings. */
  oneOf<T extends string>(key: string, allowed: readonly T[]): T {
    const value = this.value[key];
    return allowed.includes(value as T) ? (value as T) : this.fail(key, `one of ${allowed.join(", ")}`);
  }

  /** An absolute path, or `fallback` when there is one and the field is the empty string. */
  path(key: string, fallback?: string): string {
    const value = this.string(key);
    if (value === "" && fallback !== undefined) return fallback;
    return path.isAbsolute(value)
      ? path.normalize(value)
      : this.fail(key, fallback === undefined ? "an absolute path" : "an absolute path or empty");
  }

  /** A map from names to objects, such as Goose extension entries. */
  objectMap(key: string): Record<string, Record<string, unknown>> {
    const value = this.value[key];
    if (!isObject(value)) return this.fail(key, "an object");
    const map: Record<string, Record<string, unknown>> = Object.create(null);
    for (const [name, entry] of Object.entries(value)) {
      if (!isObject(entry))
        throw new FieldError(`${this.name(key)}.${name} must be an object, but it is ${describe(entry)}`);
      map[name] = entry;
    }
    return map;
  }

  /** A map from names to strings, such as an architecture's checksum. */
  stringMap(key: string): Record<string, string> {
    const value = this.value[key];
    if (!isObject(value)) return this.fail(key, "an object");
    const map: Record<string, string> = Object.create(null);
    for (const [name, entry] of Object.entries(value)) {
      if (typeof entry !== "string")
        throw new FieldError(`${this.name(key)}.${name} must be a string, but it is ${describe(entry)}`);
      map[name] = entry;
    }
    return map;
  }
}
