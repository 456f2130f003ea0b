import { type FSWatcher, watch } from "node:fs";

/** How a wait ended: a change in a watched folder, its bound, or close(). */
export type WaitEnd = "changed" | "timeout" | "closed";

export interface FolderChanges {
  /** Resolves at the first change since the previous wait (at once if one came meanwhile), or after `ms`. */
  wait(ms: number): Promise<WaitEnd>;
  close(): void;
}

/**
 * Wakes a poll when something changes in one of these folders (inotify,
 * through fs.watch), so a wait for a file ends when the file changes rather
 * than at the next tick. A folder that cannot be watched (gone, or the
 * inotify limit reached) leaves the poll to its interval, so a watch can only
 * make a wait end sooner, never later. Folders are watched rather than files
 * because a file replaced by a rename is a new file.
 */
export function watchFolders(folders: string[]): FolderChanges {
  let changed = false;
  let wake: ((end: WaitEnd) => void) | null = null;
  const watchers: FSWatcher[] = [];
  const onChange = () => {
    changed = true;
    wake?.("changed");
  };
  for (const folder of new Set(folders)) {
    try {
      const watcher = watch(folder, { persistent: false }, onChange);
      watcher.on("error", () => watcher.close());
      watchers.push(watcher);
    } catch {
      // Polled only (see above).
    }
  }
  return {
    wait(ms) {
      if (changed) {
        changed = false;
        return Promise.resolve("changed");
      }
      return new Promise((resolve) => {
        const done = (end: WaitEnd) => {
          clearTimeout(timer);
          wake = null;
          changed = false;
          resolve(end);
        };
        const timer = setTimeout(() => done("timeout"), ms);
        wake = done;
      });
    },
    close() {
      for (const watcher of watchers) watcher.close();
      wake?.("closed");
    },
  };
}
