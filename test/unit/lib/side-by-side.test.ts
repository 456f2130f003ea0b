import { describe, expect, it } from "vitest";
import { sideBySide } from "../../../src/lib/side-by-side.js";

/** A step that ends when the test says so, and records when it did. */
function step<T>(ended: string[], name: string) {
  let settle: { resolve: (v: T) => void; reject: (e: Error) => void } | undefined;
  const promise = new Promise<T>((resolve, reject) => {
    settle = {
      resolve: (v) => {
        ended.push(name);
        resolve(v);
      },
      reject: (e) => {
        ended.push(name);
        reject(e);
      },
    };
  });
  return { promise, ...(settle as NonNullable<typeof settle>) };
}

describe("sideBySide", () => {
  it("gives the results in the order of the steps, not the order they ended", async () => {
    const ended: string[] = [];
    const a = step<string>(ended, "a");
    const b = step<number>(ended, "b");
    const both = sideBySide<[string, number]>([a.promise, b.promise]);
    b.resolve(2);
    a.resolve("one");
    expect(await both).toEqual(["one", 2]);
    expect(ended).toEqual(["b", "a"]);
  });

  it.each([
    { name: "the first fails after the second", order: ["b", "a"] },
    { name: "the first fails before the second", order: ["a", "b"] },
  ])("throws the first step's failure when both fail ($name)", async ({ order }) => {
    const ended: string[] = [];
    const steps = { a: step<undefined>(ended, "a"), b: step<undefined>(ended, "b") };
    const both = sideBySide<[undefined, undefined]>([steps.a.promise, steps.b.promise]);
    for (const name of order) steps[name as "a" | "b"].reject(new Error(`${name} failed`));
    await expect(both).rejects.toThrow("a failed");
  });

  it("reports a failure only once every step has ended", async () => {
    const ended: string[] = [];
    const a = step<undefined>(ended, "a");
    const b = step<undefined>(ended, "b");
    const both = sideBySide<[undefined, undefined]>([a.promise, b.promise]).catch((error: Error) => {
      ended.push(`reported: ${error.message}`);
    });
    a.reject(new Error("a failed"));
    // Let every callback that is already due run: the failure must not be reported yet.
    await new Promise((resolve) => setImmediate(resolve));
    expect(ended).toEqual(["a"]);
    b.resolve(undefined);
    await both;
    expect(ended).toEqual(["a", "b", "reported: a failed"]);
  });
});
