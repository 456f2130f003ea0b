# A plain workspace template (no Coder Tasks; any Coder with coder_script and
# coder_app): the Goose chat as a dashboard app, plus a terminal app, resuming the
# same session and chat at every start. Nothing is sent until someone types.
#
# Your template: source = "registry.coder.com/coder/goose/coder", version = "4.0.0".
# `npm run lifecycle` plays it locally.

terraform {
  required_version = ">= 1.9"

  required_providers {
    coder = {
      source  = "coder/coder"
      version = ">= 2.12"
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

resource "coder_agent" "main" {
  os   = "linux"
  arch = "amd64"

  display_apps {
    vscode       = true
    web_terminal = true
    ssh_helper   = true
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
  cli_app        = true

  install_goose    = var.install_goose
  install_agentapi = var.install_agentapi
  agentapi_port    = var.agentapi_port
}

# The compute goes here (a docker_container or kubernetes_pod running
# coder_agent.main.init_script with CODER_AGENT_TOKEN), with a persistent volume at
# /home/coder (Goose's database and the module's state) and time for the stop:
# Docker stop_timeout = 60, Kubernetes termination_grace_period_seconds = 60.

output "goose_session_name" {
  description = "The Goose session this workspace starts and resumes."
  value       = module.goose.session_name
}
