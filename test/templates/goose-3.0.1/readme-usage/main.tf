# The usage block under "# Goose" in coder/goose 3.0.1's README (see ../README.md).

terraform {
  required_providers {
    coder = {
      source = "coder/coder"
    }
  }
}

resource "coder_agent" "main" {
  os   = "linux"
  arch = "amd64"
}

module "goose" {
  source           = "../../../.."
  agent_id         = coder_agent.main.id
  folder           = "/home/coder"
  install_goose    = true
  goose_version    = "v1.0.31"
  goose_provider   = "anthropic"
  goose_model      = "claude-3-5-sonnet-latest"
  agentapi_version = "latest"
}
