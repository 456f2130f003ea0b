# "Run in the background and report tasks" in coder/goose 3.0.1's README (see
# ../README.md): the prompts reach Goose through the agent's environment.

terraform {
  required_providers {
    coder = {
      source = "coder/coder"
    }
  }
}

data "coder_workspace" "me" {}

variable "anthropic_api_key" {
  type        = string
  description = "The Anthropic API key"
  sensitive   = true
}

data "coder_parameter" "ai_prompt" {
  type        = "string"
  name        = "AI Prompt"
  default     = ""
  description = "Write a prompt for Goose"
  mutable     = true
}

# Set the prompt and system prompt for Goose via environment variables
resource "coder_agent" "main" {
  os   = "linux"
  arch = "amd64"
  env = {
    GOOSE_SYSTEM_PROMPT = <<-EOT
      You are a helpful assistant that can help write code.

      Run all long running tasks (e.g. npm run dev) in the background and not in the foreground.

      Periodically check in on background tasks.

      Notify Coder of the status of the task before and after your steps.
    EOT
    GOOSE_TASK_PROMPT   = data.coder_parameter.ai_prompt.value

    # See https://block.github.io/goose/docs/getting-started/providers
    ANTHROPIC_API_KEY = var.anthropic_api_key # or use a coder_parameter
  }
}

module "goose" {
  count            = data.coder_workspace.me.start_count
  source           = "../../../.."
  agent_id         = coder_agent.main.id
  folder           = "/home/coder"
  install_goose    = true
  goose_version    = "v1.0.31"
  agentapi_version = "latest"

  goose_provider = "anthropic"
  goose_model    = "claude-3-5-sonnet-latest"
}
