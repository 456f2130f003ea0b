// The registry's folder rules and the link check (tools/registry-pr/folder-rules.ts).
import { describe, expect, it } from "vitest";
import {
  folderUrlTargets,
  hyphenatedVariables,
  relativeLinkTargets,
  setUBeforeSource,
  siteUnresolvable,
} from "../../../tools/registry-pr/folder-rules.js";

describe("hyphenatedVariables", () => {
  it.each([
    ['variable "agent_id" {}\nvariable "goose-model" {}', ["goose-model"]],
    ['variable "agent_id" {}\nresource "coder_app" "goose-cli" {}', []],
  ])("%s", (tf, want) => {
    expect(hyphenatedVariables(tf)).toEqual(want);
  });
});

describe("setUBeforeSource", () => {
  it.each([
    ['#!/bin/bash\nset -euo pipefail\nsource "$HOME/.bashrc"\n', { setU: 2, source: 3 }],
    ["#!/bin/bash\n. /etc/os-release\nset -eu\n", null],
    ["#!/bin/sh\nset -u\necho hi\n", null],
    ['#!/bin/bash\nset -e\nsource "$HOME/.bashrc"\n', null],
  ])("%j", (script, want) => {
    expect(setUBeforeSource(script)).toEqual(want);
  });
});

describe("relativeLinkTargets", () => {
  it("resolves links and pictures from the file's folder, without fragments, outside code", () => {
    const text = [
      "See [operations](operations.md#logs), [the README](../README.md), [variables](../variables.tf).",
      "![chat](../../../.images/goose-chat.png) [site](https://coder.com) [here](#usage) [mail](mailto:a@b.c)",
      "```md",
      "[not a link](nowhere.md)",
      "```",
    ].join("\n");
    expect(relativeLinkTargets("registry/coder/modules/goose/docs/security.md", text)).toEqual([
      "registry/coder/modules/goose/docs/operations.md",
      "registry/coder/modules/goose/README.md",
      "registry/coder/modules/goose/variables.tf",
      "registry/coder/.images/goose-chat.png",
    ]);
  });
});

describe("folderUrlTargets", () => {
  it("names the folder's files that links to it on GitHub reach, and no other module's", () => {
    const base = "https://github.com/coder/registry";
    const text = [
      `[ops](${base}/blob/main/registry/coder/modules/goose/docs/operations.md#logs)`,
      `[layer](${base}/tree/main/registry/coder/modules/goose/modules/agentapi/)`,
      `[firewall](${base}/blob/main/registry/coder/modules/agent-firewall/main.tf)`,
      `[near](${base}/blob/main/registry/coder/modules/goose-extra/main.tf)`,
    ].join(" ");
    expect(folderUrlTargets(text)).toEqual([
      "registry/coder/modules/goose/docs/operations.md",
      "registry/coder/modules/goose/modules/agentapi",
    ]);
  });
});

describe("siteUnresolvable", () => {
  it("names relative links, not pictures, anchors or absolute links", () => {
    const text =
      "[a](docs/operations.md) ![p](../../.images/goose.png) [b](#usage) [c](https://coder.com) [d](./variables.tf#L3)";
    expect(siteUnresolvable(text)).toEqual(["docs/operations.md", "./variables.tf#L3"]);
  });
});
