# A plain Coder workspace (not a task) with Goose in AgentAPI: a chat app in the
# dashboard and a terminal app, resuming the same Goose session on every start.
# In your own template, use the registry source and a version instead of "../..".

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

variable "folder" {
  description = "The project folder Goose works in. Keep it on the workspace's persistent volume."
  type        = string
  default     = "/home/coder/project"
}

resource "coder_agent" "main" {
  os   = "linux"
  arch = "amd64"

  startup_script = <<-EOT
    set -eu
    mkdir -p "${var.folder}"
  EOT
}

module "goose" {
  source = "../.."

  agent_id       = coder_agent.main.id
  folder         = var.folder
  goose_provider = var.goose_provider
  goose_model    = var.goose_model
  cli_app        = true

  # Outside a task there is no task prompt; the user chats in the Goose app.
  # The provider's API key (for example ANTHROPIC_API_KEY) must reach the
  # workspace, from the image or a coder_env.
}

# Add the workspace's compute (docker_container, kubernetes_pod, ...) here,
# running coder_agent.main.init_script, with /home/coder on a persistent volume
# and a stop grace period of a minute (Docker stop_timeout, Kubernetes
# termination_grace_period_seconds) so the stop script can save the chat.
