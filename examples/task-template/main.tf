# A Coder task template: Goose in AgentAPI, resuming the same session and chat at
# every start. Tasks needs the v2.29 or v2.34 extended-support releases (removed in
# v2.37). Provider 2.20+ warns that data "coder_task" and "coder_ai_task" below are
# deprecated (this file, not the module). Plain workspace: ../workspace-template.
#
# Your template: source = "registry.coder.com/coder/goose/coder" plus a version.
# `npm run lifecycle -- --task` plays it locally.

terraform {
  required_version = ">= 1.9"

  required_providers {
    coder = {
      source  = "coder/coder"
      version = ">= 2.13"
    }
  }
}

variable "goose_provider" {
  description = "The Goose provider, for example \"anthropic\" or \"openai\"."
  type        = string
  default     = "anthropic"
}

variable "goose_model" {
  description = "The model Goose uses."
  type        = string
  default     = "claude-sonnet-4-5"
}

variable "goose_provider_api_key_env" {
  description = "The environment variable Goose reads the provider's API key from."
  type        = string
  default     = "ANTHROPIC_API_KEY"
}

variable "goose_provider_api_key" {
  description = "The provider's API key. Empty means the workspace image or another coder_env provides it."
  type        = string
  default     = ""
  sensitive   = true
}

variable "folder" {
  description = "The project folder Goose works in. Keep it on the workspace's persistent volume."
  type        = string
  default     = "/home/coder/project"
}

variable "install_goose" {
  description = "Install the Goose CLI in the workspace. Set to false when the image already has it."
  type        = bool
  default     = true
}

variable "install_agentapi" {
  description = "Install AgentAPI in the workspace. Set to false when the image already has it."
  type        = bool
  default     = true
}

variable "agentapi_port" {
  description = "The port AgentAPI listens on inside the workspace."
  type        = number
  default     = 3284
}

data "coder_workspace" "me" {}

data "coder_workspace_owner" "me" {}

# Set by Coder when the workspace runs a task: the task's id and its prompt.
data "coder_task" "me" {}

resource "coder_agent" "main" {
  os   = "linux"
  arch = "amd64"

  # Runs in parallel with the module's start: nothing Goose needs at start.
  startup_script = <<-EOT
    set -eu
    mkdir -p "${var.folder}"
    if [ ! -f "$HOME/.gitconfig" ]; then
      git config --global init.defaultBranch main 2>/dev/null || true
    fi
  EOT

  env = {
    GIT_AUTHOR_NAME     = coalesce(data.coder_workspace_owner.me.full_name, data.coder_workspace_owner.me.name)
    GIT_AUTHOR_EMAIL    = data.coder_workspace_owner.me.email
    GIT_COMMITTER_NAME  = coalesce(data.coder_workspace_owner.me.full_name, data.coder_workspace_owner.me.name)
    GIT_COMMITTER_EMAIL = data.coder_workspace_owner.me.email
  }

  display_apps {
    vscode       = true
    web_terminal = true
    ssh_helper   = true
  }

  metadata {
    display_name = "CPU Usage"
    key          = "cpu_usage"
    script       = "coder stat cpu"
    interval     = 10
    timeout      = 1
  }

  metadata {
    display_name = "Home Disk"
    key          = "home_disk"
    script       = "coder stat disk --path $HOME"
    interval     = 60
    timeout      = 1
  }
}

# Only whether a key is set is revealed to count; the key stays sensitive.
resource "coder_env" "goose_provider_api_key" {
  count    = nonsensitive(var.goose_provider_api_key != "") ? 1 : 0
  agent_id = coder_agent.main.id
  name     = var.goose_provider_api_key_env
  value    = var.goose_provider_api_key
}

module "goose" {
  source = "../.."

  agent_id       = coder_agent.main.id
  folder         = var.folder
  goose_provider = var.goose_provider
  goose_model    = var.goose_model

  # The prompt is delivered once, at the first start; the ID is where the stop
  # posts the task log snapshot.
  task = data.coder_task.me

  system_prompt = <<-EOT
    You work in a Coder task. Report progress with the coder_report_task tool:
    what you are doing now, and when you are done or need input.
  EOT

  install_goose    = var.install_goose
  install_agentapi = var.install_agentapi
  agentapi_port    = var.agentapi_port
}

resource "coder_ai_task" "task" {
  count  = data.coder_workspace.me.start_count
  app_id = module.goose.task_app_id
}

# The compute goes here (a docker_container or kubernetes_pod running
# coder_agent.main.init_script with CODER_AGENT_TOKEN), with a persistent volume at
# /home/coder (Goose's database and the module's state) and time for the stop:
#
#   resource "docker_container" "workspace" {
#     count        = data.coder_workspace.me.start_count
#     image        = "codercom/enterprise-base:ubuntu"
#     entrypoint   = ["sh", "-c", coder_agent.main.init_script]
#     env          = ["CODER_AGENT_TOKEN=${coder_agent.main.token}"]
#     stop_timeout = 60
#     ...
#   }
# (Kubernetes: termination_grace_period_seconds = 60.)

output "goose_session_name" {
  description = "The Goose session this workspace starts and resumes."
  value       = module.goose.session_name
}
