// tools/load.sh as tools/test.sh uses it: sourced by a `set -euo pipefail` script that
// starts the hogs, stops them, and carries on to print its summary.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const loadSh = new URL("../../../tools/load.sh", import.meta.url).pathname;

it("stopping the CPU hogs does not end a set -e script, and leaves no hog running", async () => {
  const script = `set -euo pipefail
source "$1"
load_start >/dev/null
hogs="\${LOAD_PIDS[*]}"
load_stop >/dev/null
echo "after load_stop"
for pid in $hogs; do if kill -0 "$pid" 2>/dev/null; then echo "hog $pid still runs"; fi; done`;
  const { stdout } = await promisify(execFile)("bash", ["-c", script, "load-test", loadSh]);
  expect(stdout).toBe("after load_stop\n");
});
