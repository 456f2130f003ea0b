# "Adding Custom Extensions (MCP)" in coder/goose 3.0.1's README (see
# ../README.md); its "# ... other configuration ..." is the required inputs.

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
  source         = "../../../.."
  agent_id       = coder_agent.main.id
  goose_provider = "anthropic"
  goose_model    = "claude-3-5-sonnet-latest"

  pre_install_script = <<-EOT
  npm i -g @wonderwhy-er/desktop-commander@latest
  EOT

  additional_extensions = <<-EOT
  desktop-commander:
    args: []
    cmd: desktop-commander
    description: Ideal for background tasks
    enabled: true
    envs: {}
    name: desktop-commander
    timeout: 300
    type: stdio
  EOT
}
