// A stand-in for prettier-plugin-terraform-formatter 1.2.1, the plugin coder/registry's
// prettier loads (package.json "prettier" key), which the npm registry reachable here does
// not serve. It does what that plugin's README says it does: Terraform text is whatever
// `terraform fmt -` makes of it. The registry's .prettierignore leaves out *.tf and *.hcl,
// so what it formats there is the ```tf blocks in Markdown: prettier formats a fenced
// block when a language's name or extension (".tf") matches the fence's info string.
// Unlike the original, a missing or failing Terraform is an error here, never a silent
// pass; a block Terraform cannot parse stays as written (prettier keeps an embedded
// block whose formatting throws).
import { execFileSync } from "node:child_process";

export const languages = [{ name: "Terraform", extensions: [".tf"], parsers: ["terraform"] }];

export const parsers = {
  terraform: {
    parse: (text) => ({ type: "terraform-text", text }),
    astFormat: "terraform-text",
    locStart: () => 0,
    locEnd: (node) => node.text.length,
  },
};

export const printers = {
  "terraform-text": {
    print: (path) =>
      execFileSync(process.env.TF || "terraform", ["fmt", "-no-color", "-"], {
        input: path.node.text,
        encoding: "utf8",
        stdio: ["pipe", "pipe", "pipe"],
      }),
  },
};
