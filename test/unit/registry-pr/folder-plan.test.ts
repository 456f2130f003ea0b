// What the registry pull request carries (tools/registry-pr/folder-plan.ts).
import { readdir, readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { folderPackageJson, folderPlan, folderReadme, reformatted } from "../../../tools/registry-pr/folder-plan.js";

const DIR = "registry/coder/modules/goose";

describe("folderPlan", () => {
  const repo = [
    "README.md",
    "main.tf",
    "variables.tf",
    "outputs.tf",
    "goose.tftest.hcl",
    "modules/agentapi/main.tf",
    "modules/agentapi/templates/run.sh.tftpl",
    "scripts/start.cjs",
    "src/start.ts",
    "src/supervisor/supervisor.sh",
    "build.mjs",
    "docs/operations.md",
    "docs/development.md",
    "docs/images/chat-after-restart.png",
    "examples/workspace-template/main.tf",
    "test/unit/lib/exec.test.ts",
    "test/goose-double/goose",
    "support/workspace/render.ts",
    "tools/setup.sh",
    "bench/main.ts",
    "vitest.config.ts",
    "package-lock.json",
    "biome.jsonc",
  ];
  const plan = folderPlan(repo, "![The chat](docs/images/chat-after-restart.png)\n");

  it("carries the module, its layer, bundles, sources, build, user docs and examples", () => {
    expect(plan.copies.filter((c) => c.to.startsWith(`${DIR}/`)).map((c) => c.from)).toEqual([
      "README.md",
      "main.tf",
      "variables.tf",
      "outputs.tf",
      "goose.tftest.hcl",
      "modules/agentapi/main.tf",
      "modules/agentapi/templates/run.sh.tftpl",
      "scripts/start.cjs",
      "src/start.ts",
      "src/supervisor/supervisor.sh",
      "build.mjs",
      "docs/operations.md",
      "examples/workspace-template/main.tf",
    ]);
  });

  it("leaves out the tests bun would run, the developer tools and docs", () => {
    const carried = plan.copies.map((c) => c.from);
    for (const file of [
      "test/unit/lib/exec.test.ts",
      "vitest.config.ts",
      "support/workspace/render.ts",
      "docs/development.md",
    ])
      expect(carried).not.toContain(file);
  });

  it("carries exactly the docs pages docs/README.md lists as travelling with the module", async () => {
    const docs = new URL("../../../docs/", import.meta.url);
    const index = await readFile(new URL("README.md", docs), "utf8");
    const travelling = /^## .*\(travel with the module\)\n([\s\S]*?)(?=^## )/m.exec(index)?.[1] ?? "";
    const listed = [...travelling.matchAll(/\]\(([a-z-]+\.md)\)/g)].map((m) => `docs/${m[1]}`);
    const pages = (await readdir(docs)).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`);
    const carried = folderPlan(pages, "").copies.map((c) => c.from);
    expect(listed.length).toBeGreaterThan(0);
    expect(carried.sort()).toEqual(listed.sort());
  });

  it("moves the README's picture into the registry's images folder", () => {
    expect(plan.copies).toContainEqual({
      from: "docs/images/chat-after-restart.png",
      to: "registry/coder/.images/goose-chat-after-restart.png",
    });
    expect(folderReadme("![The chat](docs/images/chat-after-restart.png)\n![x](https://e.com/x.png)\n", plan)).toBe(
      "![The chat](../../.images/goose-chat-after-restart.png)\n![x](https://e.com/x.png)\n",
    );
  });

  it("points the README's links to other files of the folder at them on GitHub, as registry.coder.com cannot follow relative ones", () => {
    const readme = [
      "[Operations](docs/operations.md#logs), [inputs](./variables.tf), [the layer](modules/agentapi/),",
      "[usage](#usage), [Goose](https://github.com/aaif-goose/goose), [dev notes](docs/development.md).",
      "```md",
      "[in code](variables.tf)",
      "```",
      "",
    ].join("\n");
    const linked = folderPlan(repo, readme);
    expect(folderReadme(readme, linked)).toBe(
      [
        "[Operations](https://github.com/coder/registry/blob/main/registry/coder/modules/goose/docs/operations.md#logs),",
        "[inputs](https://github.com/coder/registry/blob/main/registry/coder/modules/goose/variables.tf),",
        "[the layer](https://github.com/coder/registry/tree/main/registry/coder/modules/goose/modules/agentapi),",
      ].join(" ") +
        "\n[usage](#usage), [Goose](https://github.com/aaif-goose/goose), [dev notes](docs/development.md).\n```md\n[in code](variables.tf)\n```\n",
    );
  });

  it("names which carried files get the registry's formatting (those Biome formats here)", () => {
    expect(
      [
        "src/start.ts",
        "build.mjs",
        "package.json",
        "scripts/start.cjs",
        "README.md",
        "src/supervisor/supervisor.sh",
      ].filter(reformatted),
    ).toEqual(["src/start.ts", "build.mjs", "package.json"]);
  });
});

describe("folderPackageJson", () => {
  it("pins the build's packages exactly as the repository does", () => {
    const json = folderPackageJson({
      name: "coder-goose-module",
      engines: { node: ">=18.19" },
      dependencies: { semver: "7.8.6", zx: "8.8.5" },
      devDependencies: { esbuild: "0.28.2", vitest: "4.1.12" },
    });
    expect(JSON.parse(json)).toEqual({
      name: "coder-goose-module",
      private: true,
      type: "module",
      engines: { node: ">=18.19" },
      scripts: { build: "node build.mjs" },
      dependencies: { semver: "7.8.6", zx: "8.8.5" },
      devDependencies: { esbuild: "0.28.2" },
    });
  });
});
