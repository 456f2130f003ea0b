terraform {
  required_version = ">= 1.9"

  required_providers {
    coder = {
      source  = "coder/coder"
      version = ">= 2.13"
    }
  }
}

data "coder_workspace" "me" {}

locals {
  app_slug     = "goose"
  session_name = var.session_name != "" ? var.session_name : "coder-${data.coder_workspace.me.id}"

  extra_extensions = (
    var.additional_extensions == null ? {} :
    trimspace(var.additional_extensions) == "" ? {} :
    yamldecode(var.additional_extensions)
  )

  agentapi_version_parts = regex("^v([0-9]+)\\.([0-9]+)", var.agentapi_version)
  agentapi_has_persistence = (
    tonumber(local.agentapi_version_parts[0]) > 0 ||
    tonumber(local.agentapi_version_parts[1]) >= 12
  )

  # Everything the start script needs about Goose. It reaches the workspace as
  # gzip+base64 inside the coder_script, never as shell source.
  goose_config = {
    install        = var.install_goose
    version        = trimprefix(var.goose_version, "v")
    installer_url  = var.goose_installer_url
    provider       = var.goose_provider
    model          = var.goose_model
    prompt         = var.ai_prompt
    system_prompt  = var.system_prompt
    session_name   = local.session_name
    continue       = var.continue
    app_slug       = local.app_slug
    extensions     = local.extra_extensions
    install_script = { pre = var.pre_install_script == null ? "" : var.pre_install_script, post = var.post_install_script == null ? "" : var.post_install_script }

    continue_interrupted_turn = var.continue_interrupted_turn
  }
}

check "agentapi_version_supports_persistence" {
  assert {
    condition     = !var.enable_state_persistence || !var.install_agentapi || local.agentapi_has_persistence
    error_message = "enable_state_persistence needs AgentAPI v0.12.0 or newer, but agentapi_version is ${var.agentapi_version}: the chat history will not survive a restart. Set agentapi_version to v0.12.1, or enable_state_persistence = false."
  }
}

module "agentapi" {
  source = "./modules/agentapi"

  agent_id      = var.agent_id
  folder        = var.folder
  icon          = var.icon
  order         = var.order
  group         = var.group
  app_slug      = local.app_slug
  display_name  = "Goose"
  cli_app       = var.cli_app
  web_app       = var.web_app
  subdomain     = var.subdomain
  module_folder = ".coder-modules/coder/goose"

  install_agentapi      = var.install_agentapi
  agentapi_version      = var.agentapi_version
  agentapi_port         = var.agentapi_port
  agentapi_download_url = var.agentapi_download_url

  enable_state_persistence = var.enable_state_persistence
  state_file_path          = var.state_file_path
  pid_file_path            = var.pid_file_path
  task_log_snapshot        = var.task_log_snapshot

  stop_turn_wait_seconds    = var.stop_turn_wait_seconds
  stop_sigterm_wait_seconds = var.stop_sigterm_wait_seconds

  install_node      = var.install_node
  node_download_url = var.node_download_url

  start_script = file("${path.module}/scripts/start.mjs")
  stop_script  = file("${path.module}/scripts/shutdown.mjs")
  agent_config = local.goose_config
}
