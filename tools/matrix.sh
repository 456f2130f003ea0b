# shellcheck shell=bash
# The compatibility matrix (docs/development.md#tested-versions), sourced by tools/test.sh.

MATRIX_ROWS=()

matrix_row() { MATRIX_ROWS+=("$1"$'\t'"$2"$'\t'"$3"$'\t'"$4"); }

# cell DIMENSION VERSION CHECKS SKIP_REASON CMD...: run CMD for one cell, unless SKIP_REASON.
cell() {
  local dimension="$1" version="$2" checks="$3" skip="$4" started=$SECONDS
  shift 4
  if [[ -n "$skip" ]]; then
    echo "==> matrix: $dimension $version: skipped: $skip"
    matrix_row "$dimension" "$version" "$checks" "skipped: $skip"
    return
  fi
  echo "==> matrix: $dimension $version: $checks"
  if "$@"; then
    echo "==> matrix: $dimension $version: passed ($((SECONDS - started)) s)"
    matrix_row "$dimension" "$version" "$checks" "passed"
  else
    echo "==> matrix: $dimension $version: FAILED ($((SECONDS - started)) s)"
    matrix_row "$dimension" "$version" "$checks" "FAILED (its output is above)"
    failed+=("matrix: $dimension $version")
  fi
}

core_scenarios() { env "$@" npx vitest run --project integration test/integration/core.test.ts; }

# provider_selected CLI DIR: the coder provider version DIR's last init selected.
provider_selected() {
  (cd "$2" && "$1" version -json) | node -e '
    const selections = JSON.parse(require("node:fs").readFileSync(0, "utf8")).provider_selections ?? {};
    const coder = Object.entries(selections).find(([address]) => address.endsWith("/coder/coder"));
    process.stdout.write(coder ? coder[1] : "none");'
}

# tf_validate CLI DIR PROVIDER: init and validate DIR, and check that init selected PROVIDER.
tf_validate() {
  local cli="$1" dir="$2" want="$3" got
  (cd "$dir" && "$cli" init -upgrade -backend=false -input=false -no-color >/dev/null && "$cli" validate -no-color) || return 1
  got="$(provider_selected "$cli" "$dir")"
  [[ "$got" == "$want" ]] || { echo "$dir: init selected coder provider $got, expected $want" >&2; return 1; }
}

TF_DIRS=(. modules/agentapi examples/task-template examples/workspace-template)

# tf_checks CLI PROVIDER: fmt, validate and test with CLI and exactly that coder provider, in
# a copy of the Terraform files (the repository's own .terraform folders and lock files stay
# the primary combination's). An override file in each folder pins the provider: Terraform
# merges required_providers from *_override.tf files.
tf_checks() {
  local cli="$1" provider="$2" copy dir status=0
  mkdir -p .tmp
  copy="$(mktemp -d .tmp/matrix-tf.XXXXXX)"
  git ls-files --cached --others --exclude-standard -- '*.tf' '*.tftest.hcl' '*.tftpl' 'scripts/*.cjs' |
    tar -cf - -T - | tar -xf - -C "$copy"
  for dir in "${TF_DIRS[@]}"; do
    printf 'terraform {\n  required_providers {\n    coder = {\n      source  = "coder/coder"\n      version = "%s"\n    }\n  }\n}\n' \
      "$provider" >"$copy/$dir/coder_provider_override.tf"
  done
  (cd "$copy" && "$cli" fmt -check -recursive -diff) || status=1
  for dir in "${TF_DIRS[@]}"; do tf_validate "$cli" "$copy/$dir" "$provider" || status=1; done
  "$cli" -chdir="$copy" test -no-color || status=1
  "$cli" -chdir="$copy/modules/agentapi" test -no-color || status=1
  rm -rf "$copy"
  return "$status"
}

# tf_cell CLI PROVIDER: the Terraform checks, then the core scenarios rendered with them.
tf_cell() {
  local status=0
  tf_checks "$1" "$2" || status=1
  core_scenarios TF="$1" CODER_PROVIDER_VERSION="$2" || status=1
  return "$status"
}

# run_matrix PRIMARY_RESULT: the primary combination's rows (PRIMARY_RESULT is what the full
# suite gave), then every other cell.
run_matrix() {
  local primary="$1" full="full suite" other_bin other_skip other_name agentapi_default
  matrix_row runtime "Node.js $(node --version | tr -d v) (the machine's; primary)" "$full" "$primary"
  cell runtime "Node.js $NODE_MIN_VERSION (declared minimum)" "core scenarios" "$NODE_MIN_SKIP" \
    core_scenarios WORKSPACE_RUNTIME="$NODE_MIN_BIN"
  cell runtime "Node.js $NODE_WRAPPER_VERSION (what the wrapper installs)" "core scenarios" "$NODE_WRAPPER_SKIP" \
    core_scenarios WORKSPACE_RUNTIME="$NODE_WRAPPER_BIN"
  cell runtime "Bun $BUN_VERSION (newest)" "core scenarios" "$BUN_SKIP" \
    core_scenarios WORKSPACE_RUNTIME="$BUN_BIN"

  if [[ "$TF_FLAVOR" == terraform ]]; then
    matrix_row CLI "Terraform $TF_VERSION (primary)" "$full" "$primary"
    other_bin="$TOFU_BIN" other_name="OpenTofu $OPENTOFU_VERSION" other_skip=""
  else
    matrix_row CLI "OpenTofu $TF_VERSION (primary)" "$full" "$primary"
    other_bin="$TERRAFORM_BIN" other_name="Terraform ${TERRAFORM_VERSION:-(none)}" other_skip="$TERRAFORM_SKIP"
  fi
  cell CLI "$other_name" "fmt, validate, test, core scenarios" "$other_skip" \
    tf_cell "$other_bin" "$CODER_PROVIDER_NEWEST"

  matrix_row provider "coder $CODER_PROVIDER_NEWEST (newest served; primary)" "$full" "$primary"
  cell provider "coder $CODER_PROVIDER_OLDEST (oldest served >= 2.13)" "fmt, validate, test, core scenarios" "" \
    tf_cell "$TF" "$CODER_PROVIDER_OLDEST"

  agentapi_default="$AGENTAPI_VERSION_NEW (module default"
  if [[ "$AGENTAPI_VERSION_NEWEST" == "$AGENTAPI_VERSION_NEW" ]]; then
    matrix_row AgentAPI "$agentapi_default = newest served; primary)" "$full" "$primary"
  else
    matrix_row AgentAPI "$agentapi_default; primary)" "$full" "$primary"
    cell AgentAPI "$AGENTAPI_VERSION_NEWEST (newest served)" "core scenarios" "" \
      core_scenarios WORKSPACE_AGENTAPI="$AGENTAPI_BIN_NEWEST"
  fi
  cell AgentAPI "$AGENTAPI_VERSION_OLD (below the 0.12.0 persistence gate)" "core scenarios" "" \
    core_scenarios WORKSPACE_AGENTAPI="$AGENTAPI_BIN_OLD"
}

# print_matrix: the rows as an aligned table (awk, since `column` is not on every image).
print_matrix() {
  echo
  echo "compatibility matrix (each cell changes one dimension of the primary combination)"
  printf 'DIMENSION\tVERSION\tCHECKS\tRESULT\n%s\n' "$(printf '%s\n' "${MATRIX_ROWS[@]}")" | awk -F '\t' '
    { for (i = 1; i <= NF; i++) { cell[NR, i] = $i; if (length($i) > width[i]) width[i] = length($i) } }
    END { for (r = 1; r <= NR; r++) printf "%-*s  %-*s  %-*s  %s\n", width[1], cell[r, 1], width[2], cell[r, 2], width[3], cell[r, 3], cell[r, 4] }'
}
