// A module README that passes every rule of the registry's validator, for the tests to break.
export const README_PATH = "registry/coder/modules/goose/README.md";
export const iconExists = (registryPath: string) => registryPath === ".icons/goose.svg";

export const validReadme = (version = "4.0.0") => `---
display_name: Goose
description: Run Goose in your workspace
icon: ../../../../.icons/goose.svg
verified: false
tags: [agent, goose, ai]
---

# Goose

Run Goose in your workspace.

\`\`\`tf
module "goose" {
  source   = "registry.coder.com/coder/goose/coder"
  version  = "${version}"
  agent_id = coder_agent.main.id
}
\`\`\`

## Usage

> [!NOTE]
> Goose needs a model.

| Input    | Meaning       |
| -------- | ------------- |
| \`folder\` | Where it runs |

\`\`\`sh
# not a header
goose session
\`\`\`

### Another provider

Set \`goose_provider\`.
`;
