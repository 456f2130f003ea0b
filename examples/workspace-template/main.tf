# A plain Coder workspace template with Goose in AgentAPI: the Goose chat as an
# app in the dashboard (and a terminal app), resuming the same Goose session,
# with its chat history, on every start. No Coder Tasks: any Coder release with
# coder_script and coder_app works. Nothing is sent to Goose until someone types
# the first message into the chat.
#
# It uses the module from this repository by local path. In your own template,
# use the registry source and a version instead:
#
#   module "goose" {
#     source  = "registry.coder.com/coder/goose/coder"
#     version = "5.0.0"
#     ...
#   }
#
# `npm run lifecycle` applies this template on your machine (with -var overrides
# for the port, the folder and the installs) and plays a workspace's life with it.

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

resource "coder_agent" "main" {
  os   = "linux"
  arch = "amd64"

  display_apps {
    vscode       = true
    web_terminal = true
    ssh_helper   = true
  }
}

# The provider's API key reaches Goose as an environment variable. Only whether
# a key is set is revealed to count; the key itself stays sensitive.
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

# The workspace's compute goes here, for example a docker_container or a
# kubernetes_pod that runs coder_agent.main.init_script with
# CODER_AGENT_TOKEN = coder_agent.main.token. Mount a persistent volume at
# /home/coder (Goose's session database and the module's state live under it)
# and give the stop script time to save the conversation: Docker
# stop_timeout = 60, or Kubernetes termination_grace_period_seconds = 60.

output "goose_session_name" {
  description = "The Goose session this workspace starts and resumes."
  value       = module.goose.session_name
}
