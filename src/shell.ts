import { $, which } from "zx/core";

/**
 * zx runs commands through bash and quotes with bash's $'...'. Some minimal
 * images only have sh, where zx has no quote function at all, so fall back to
 * POSIX single quotes.
 */
export async function configureShell(): Promise<void> {
  $.verbose = false;
  const bash = await which("bash", { nothrow: true });
  if (bash) {
    $.shell = bash;
    return;
  }
  $.shell = "/bin/sh";
  $.prefix = "set -eu;";
  $.quote = (value: string) => `'${String(value).replace(/'/g, "'\\''")}'`;
}

export async function commandPath(name: string, pathValue?: string): Promise<string | null> {
  return (await which(name, { nothrow: true, path: pathValue })) ?? null;
}
