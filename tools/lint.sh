#!/usr/bin/env bash
# The lint gates (shellcheck, tflint, biome; docs/development.md). tools/test.sh sources this
# file and runs each gate as a step; run directly (npm run lint) it runs setup, then the gates
# named on the command line, or all. The pinned tools need no network.

# shell_scripts: the repository's shell scripts, one a line (tracked or new, not ignored).
# The wrapper template is left out: it is shell only once Terraform has filled it in.
shell_scripts() {
  local f
  while IFS= read -r f; do
    case "$f" in
      *.tftpl) ;;
      *.sh) printf '%s\n' "$f" ;;
      *) if [[ -f "$f" ]] && head -n1 "$f" | grep -qE '^#!(/usr/bin/env |/bin/)(ba)?sh$'; then printf '%s\n' "$f"; fi ;;
    esac
  done < <(git ls-files --cached --others --exclude-standard)
}

# render_wrappers DIR: write each coder_script (install, start, stop), as a plan of the root module
# renders them, to DIR/<name>.sh. A plan renders the template exactly as a
# workspace receives it, whatever variables the template takes.
render_wrappers() {
  local dir="$1"
  if ! { "$TF" init -upgrade -backend=false -input=false -no-color &&
    "$TF" plan -input=false -lock=false -no-color -out="$dir/plan" \
      -var agent_id=lint -var goose_provider=anthropic -var goose_model=claude-sonnet-4-5; } >"$dir/plan.log" 2>&1; then
    cat "$dir/plan.log" >&2
    return 1
  fi
  "$TF" show -json "$dir/plan" | node -e '
    const fs = require("node:fs");
    const plan = JSON.parse(fs.readFileSync(0, "utf8"));
    const scripts = plan.resource_changes.filter((r) => r.type === "coder_script");
    if (scripts.length === 0) throw new Error("the plan has no coder_script");
    for (const r of scripts) fs.writeFileSync(process.argv[1] + "/" + r.name + ".sh", r.change.after.script);
  ' "$dir"
}

lint_shell() {
  local scripts status=0 dir
  mapfile -t scripts < <(shell_scripts)
  echo "shellcheck: ${scripts[*]}, and the rendered wrapper template"
  "$SHELLCHECK" -x "${scripts[@]}" || status=1
  mkdir -p .tmp
  dir="$(mktemp -d .tmp/lint-wrapper.XXXXXX)"
  if ! render_wrappers "$dir"; then
    echo "could not render modules/agentapi/templates/run.sh.tftpl with terraform plan" >&2
    status=1
  elif ! "$SHELLCHECK" "$dir"/*.sh; then
    echo "(the scripts above are modules/agentapi/templates/run.sh.tftpl as Terraform renders it)" >&2
    status=1
  fi
  rm -rf "$dir"
  return "$status"
}

lint_terraform() {
  local dir status=0 flags
  for dir in . modules/* examples/*; do
    [[ -d "$dir" ]] || continue
    flags=()
    # An example is a Coder template meant to be copied as one main.tf; the registry's
    # variables.tf/outputs.tf layout is for modules.
    if [[ "$dir" == examples/* ]]; then flags=(--disable-rule=terraform_standard_module_structure); fi
    echo "tflint: $dir"
    "$TFLINT" --chdir="$dir" --config="$PWD/.tflint.hcl" "${flags[@]}" || status=1
  done
  return "$status"
}

lint_ts() {
  local colors=() extra
  extra="$(find src -maxdepth 1 -type f ! -name install.ts ! -name start.ts ! -name stop.ts ! -name README.md)"
  if [[ -n "$extra" ]]; then
    echo "src/ holds only install.ts, start.ts and stop.ts, one per coder_script; move these into the folder of their job (src/README.md): $extra" >&2
    return 1
  fi
  [[ -t 1 ]] || colors=(--colors=off) # Biome colours even a log file otherwise
  node_modules/.bin/biome ci --error-on-warnings "${colors[@]}"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  cd "$(dirname "${BASH_SOURCE[0]}")/.."
  bash tools/setup.sh
  # shellcheck source=/dev/null
  . .tools/env.sh
  gates=("$@")
  ((${#gates[@]})) || gates=(shellcheck tflint biome)
  status=0
  for gate in "${gates[@]}"; do
    case "$gate" in
      shellcheck) lint_shell || status=1 ;;
      tflint) lint_terraform || status=1 ;;
      biome) lint_ts || status=1 ;;
      *) echo "usage: tools/lint.sh [shellcheck|tflint|biome]..." >&2; exit 2 ;;
    esac
  done
  exit "$status"
fi
