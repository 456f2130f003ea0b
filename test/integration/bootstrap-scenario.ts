// What bootstrap.test.ts shares: the settings a rendered coder_script carries
// and which of them a script reads, a PATH without any JavaScript runtime,
// and the runtimes tools/setup.sh installed.

import { mkdir, readdir, rm, symlink } from "node:fs/promises";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { afterEach } from "vitest";
import { scratchDir, Workspace } from "../../support/workspace/index.js";

/** The settings document a rendered coder_script carries (gzip+base64 in CODER_MODULE_SETTINGS). */
export function embeddedSettings(script: string): unknown {
  const encoded = /^CODER_MODULE_SETTINGS='([A-Za-z0-9+/=]+)'$/m.exec(script)?.[1];
  if (!encoded) throw new Error("no CODER_MODULE_SETTINGS in the rendered script");
  return JSON.parse(gunzipSync(Buffer.from(encoded, "base64")).toString("utf8"));
}

/** What a rendered coder_script gives its runtime: the loader (-e) and the bundle (gzip+base64 in CODER_MODULE_SCRIPT). */
export function embeddedLoader(script: string): { loader: string; bundle: string } {
  const loader = /^LOADER='([^']+)'$/m.exec(script)?.[1];
  const bundle = /^CODER_MODULE_SCRIPT='([A-Za-z0-9+/=]+)'$/m.exec(script)?.[1];
  if (!loader || !bundle) throw new Error("no LOADER or CODER_MODULE_SCRIPT in the rendered script");
  return { loader, bundle };
}

/** Every key path in a JSON document ("layer.port"), objects included. */
export function keyPaths(value: unknown, prefix = ""): string[] {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([key, child]) => [`${prefix}${key}`, ...keyPaths(child, `${prefix}${key}.`)]);
}

/**
 * `value` wrapped so that every key read or tested with `in`, at any depth, is
 * recorded in `read`, whether the document has it or not: a key the script
 * reads but Terraform never sends shows up as a path keyPaths does not list.
 * Names every object has (its prototype's, such as `constructor`) are not
 * settings and are not recorded. Lists are values, as in keyPaths.
 */
export function recording(value: unknown, read: Set<string>, prefix = ""): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const note = (target: object, key: string | symbol) => {
    if (typeof key === "string" && (Object.hasOwn(target, key) || !(key in target))) read.add(`${prefix}${key}`);
  };
  return new Proxy(value, {
    get(target, key, receiver) {
      note(target, key);
      const child = Reflect.get(target, key, receiver);
      return typeof key === "string" && Object.hasOwn(target, key) ? recording(child, read, `${prefix}${key}.`) : child;
    },
    has(target, key) {
      note(target, key);
      return Reflect.has(target, key);
    },
  });
}

/** A PATH with the shell tools a slim image has, and `fetcher` to download with, but no node and no bun. */
export async function pathWithoutNode(fetcher: "curl" | "wget" = "curl"): Promise<string> {
  const bin = path.join(await scratchDir("bin"), "bin");
  await mkdir(bin);
  const tools = "sh base64 gzip mkdir mv rm cat uname tar xz sha256sum cut printf dirname mktemp head wc".split(" ");
  for (const tool of [...tools, fetcher]) {
    for (const dir of ["/usr/bin", "/bin"]) {
      if ((await readdir(dir)).includes(tool)) {
        await symlink(path.join(dir, tool), path.join(bin, tool)).catch(() => undefined);
        break;
      }
    }
  }
  return bin;
}

/** A runtime binary tools/setup.sh installed (.tools/env.sh), named by its variable. */
export function installed(name: string): string {
  const binary = process.env[name];
  if (!binary)
    throw new Error(
      `${name} is not set: ${process.env[name.replace(/_BIN$/, "_SKIP")] || "run tools/setup.sh and source .tools/env.sh"}`,
    );
  return binary;
}

const workspaces: Workspace[] = [];
afterEach(async () => {
  for (const ws of workspaces.splice(0)) {
    await ws.cleanup();
    await rm(ws.home, { recursive: true, force: true });
  }
});

/** A workspace whose PATH ends with `pathDirs`; the test says which runtime the wrapper must pick. */
export async function offering(pathDirs: string[]): Promise<Workspace> {
  const ws = await Workspace.create({ runtime: { binary: null, pathDirs } });
  workspaces.push(ws);
  return ws;
}
