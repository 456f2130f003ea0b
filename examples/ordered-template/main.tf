# A plain workspace in which Goose starts only after the project is cloned, and
# stops before the workspace's teardown step runs, with coder_script_order.
#
# Needs the coder provider 2.20 or newer (the data source), and Coder v2.39 or
# newer, control plane, provisioners and agents alike, to honour the rules.
# Older Coder ignores them without an error and runs all scripts at once; the
# Goose start then finds the folder missing, creates it empty and says so in
# its log, and the clone below still clones into the empty folder.
#
# Rules name this module as a whole: it has one start and one stop script, so
# "module.goose" with a phase selects exactly one of them. Selectors are
# Terraform addresses that Coder resolves relative to the module that declares
# the rules, here the template's root module.

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

# Clones once: a folder that already holds files (a restart) is left alone. An
# empty folder is cloned into, so a Goose start that ran first on a Coder
# release without ordering does not break the clone.
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

# Runs after Goose has saved its chat and stopped; for example, detaching or
# snapshotting the volume that holds /home/coder.
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

# Coder reads the rules from the plan; nothing in the template refers to them.
# tflint-ignore: terraform_unused_declarations
data "coder_script_order" "goose" {
  # Goose starts once the clone has finished, whatever its outcome: a failed
  # clone still leaves a chat to ask for help in.
  rule {
    run      = ["module.goose"]
    after    = ["coder_script.clone"]
    phase    = "start"
    requires = "completion"
  }

  # The teardown waits until Goose has saved its chat and exited.
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
