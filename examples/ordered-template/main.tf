# Goose starts after the project is cloned and stops before the teardown, with
# coder_script_order: provider 2.20+, and Coder v2.39+ (control plane, provisioners
# and agents) to honour it. Older Coder silently runs all scripts at once; Goose then
# creates the folder empty (and logs it), and the clone still clones into it.
#
# "module.goose" with a phase selects its one start or stop script; selectors are
# addresses relative to the declaring module.

terraform {
  required_version = ">= 1.9"

  required_providers {
    coder = {
      source  = "coder/coder"
      version = ">= 2.20"
    }
  }
}

variable "repository" {
  description = "The Git repository cloned into the project folder on the first start."
  type        = string
  default     = "https://github.com/coder/coder.git"
}

variable "folder" {
  description = "The project folder: the clone's target, and the folder Goose works in."
  type        = string
  default     = "/home/coder/project"
}

resource "coder_agent" "main" {
  os   = "linux"
  arch = "amd64"
}

# Clones once: a folder with files (a restart) is left alone; an empty one (Goose
# started first, without ordering) is cloned into.
resource "coder_script" "clone" {
  agent_id     = coder_agent.main.id
  display_name = "Clone the project"
  icon         = "/icon/git.svg"
  run_on_start = true
  script       = <<-EOT
    #!/bin/sh
    set -eu
    folder=${jsonencode(var.folder)}
    if [ -n "$(ls -A "$folder" 2>/dev/null)" ]; then
      echo "clone: $folder already holds files; not cloning"
      exit 0
    fi
    mkdir -p "$folder"
    git clone -- ${jsonencode(var.repository)} "$folder"
  EOT
}

# Runs after Goose has saved its chat and stopped (e.g. detach /home/coder's volume).
resource "coder_script" "teardown" {
  agent_id     = coder_agent.main.id
  display_name = "Tear down"
  icon         = "/icon/database.svg"
  run_on_stop  = true
  script       = <<-EOT
    #!/bin/sh
    sync
    echo "teardown: the home volume may be detached now"
  EOT
}

module "goose" {
  source = "../.."

  agent_id       = coder_agent.main.id
  folder         = var.folder
  goose_provider = "anthropic"
  goose_model    = "claude-sonnet-4-5"
}

# Coder reads the rules from the plan.
# tflint-ignore: terraform_unused_declarations
data "coder_script_order" "goose" {
  # Whatever the clone's outcome: a failed clone still leaves a chat to ask for help in.
  rule {
    run      = ["module.goose"]
    after    = ["coder_script.clone"]
    phase    = "start"
    requires = "completion"
  }

  rule {
    run      = ["coder_script.teardown"]
    after    = ["module.goose"]
    phase    = "stop"
    requires = "completion"
  }
}

output "goose_start_script_id" {
  description = "The Goose start script's ID (its log source in Coder)."
  value       = module.goose.start_script_id
}
