# TFLint settings for the root module, modules/* and examples/* (tools/lint.sh runs them).
# The "all" preset holds the registry's conventions that "recommended" leaves out: snake_case
# names, a description on every variable and output, and the standard module file layout.
# No "source" or "version": TFLint then runs the terraform ruleset built into it, so linting
# downloads nothing (the ruleset's version follows TFLINT_VERSION in tools/setup.sh).
plugin "terraform" {
  enabled = true
  preset  = "all"
}
