terraform {
  required_version = ">= 1.9"

  required_providers {
    coder = {
      source  = "coder/coder"
      version = ">= 2.12"
    }
  }
}

# The checks that span inputs live here, as preconditions: a variable's
# validation that reads another variable needs Terraform 1.9 and is not
# portable to every OpenTofu the module supports.
data "coder_workspace" "me" {
  lifecycle {
    precondition {
      condition     = local.task_prompt == "" || var.ai_prompt == ""
      error_message = "Remove ai_prompt from this task template, or leave it empty in a task, for example ai_prompt = data.coder_task.me.enabled ? \"\" : data.coder_parameter.ai_prompt.value. This workspace runs a Coder task with a prompt, and ai_prompt is set too: Goose gets one first prompt, and the module will not pick one of the two for you."
    }
  }
}

data "coder_workspace_owner" "me" {}

locals {
  # The releases this module is tested with: what a template that sets no
  # goose_version or agentapi_version installs, and what version 3.x's aliases
  # "stable" and "latest" now mean. The one place these versions are written:
  # tools/lib.sh (module_default) reads these lines for the test setup.
  tested_versions = {
    goose_version    = "1.47.0"
    agentapi_version = "v0.12.2"
  }
  version_aliases = ["stable", "latest"]

  # The versions the scripts install, always a release: the settings carry no
  # alias, so a restart installs what the plan named.
  goose_version = (
    var.goose_version == null ? local.tested_versions.goose_version :
    contains(local.version_aliases, var.goose_version) ? local.tested_versions.goose_version :
    trimprefix(var.goose_version, "v")
  )
  agentapi_version = (
    var.agentapi_version == null ? local.tested_versions.agentapi_version :
    contains(local.version_aliases, var.agentapi_version) ? local.tested_versions.agentapi_version :
    var.agentapi_version
  )

  app_slug      = "goose"
  module_folder = ".coder-modules/coder/goose"
  session_name  = var.session_name != "" ? var.session_name : "coder-${data.coder_workspace.me.id}"

  # Tasks is what a template opts into (variable "task"); outside a task the
  # provider reports a random ID and no prompt, and neither reaches a script.
  task_enabled = var.task == null ? false : var.task.enabled == true
  task_id      = local.task_enabled ? var.task.id : ""
  task_prompt  = local.task_enabled ? (var.task.prompt == null ? "" : var.task.prompt) : ""
  # One prompt reaches Goose: the task's, or else ai_prompt (both set is a
  # plan-time error, data "coder_workspace" "me" below). The start tells them
  # apart by the task ID in the AgentAPI layer's settings.
  prompt = local.task_prompt != "" ? local.task_prompt : var.ai_prompt

  extra_extensions = (
    var.additional_extensions == null ? {} :
    trimspace(var.additional_extensions) == "" ? {} :
    yamldecode(var.additional_extensions)
  )

  # Where the module may download from, checked once for every URL variable:
  # https://, or a local mirror the tests and air-gapped images use (file://,
  # or plain http:// on loopback only, where nobody on the network can change
  # what is served). Redirects are held to the same rule (src/install/url-policy.ts).
  download_url_rule = "^(https://[^/\\s]+[^\\s]*|http://(127\\.0\\.0\\.1|localhost|\\[::1\\])(:[0-9]+)?(/[^\\s]*)?|file:///[^\\s]*)$"

  # The first AgentAPI release that saves the chat: the plan-time echo of
  # MIN_PERSISTENCE_VERSION in src/agentapi/version-gate.ts, which decides at
  # the start (test/unit/agentapi/version-gate.test.ts holds the two equal, and
  # the "vX.Y.Z or newer" in variables.tf's descriptions, which cannot read it).
  agentapi_persistence_since = "0.12.0"
  agentapi_version_parts     = [for part in regex("^v([0-9]+)\\.([0-9]+)\\.([0-9]+)", local.agentapi_version) : tonumber(part)]
  persistence_since_parts    = [for part in split(".", local.agentapi_persistence_since) : tonumber(part)]
  agentapi_has_persistence = (
    local.agentapi_version_parts[0] != local.persistence_since_parts[0] ? local.agentapi_version_parts[0] > local.persistence_since_parts[0] :
    local.agentapi_version_parts[1] != local.persistence_since_parts[1] ? local.agentapi_version_parts[1] > local.persistence_since_parts[1] :
    local.agentapi_version_parts[2] >= local.persistence_since_parts[2]
  )

  # AI Gateway: Goose's provider host is the gateway's route for that provider
  # (Goose appends v1/messages or v1/chat/completions to it: build_url in
  # crates/goose-providers/src/api_client.rs, aaif-goose/goose @ v1.46.1), and
  # its key is the owner's session token, which reaches the workspace in this
  # variable (a coder_env), never in the scripts' settings.
  ai_gateway_token_env = "CODER_GOOSE_AI_GATEWAY_TOKEN"
  ai_gateway = {
    enabled   = var.enable_ai_gateway
    base_url  = var.enable_ai_gateway ? "${trimsuffix(data.coder_workspace.me.access_url, "/")}/api/v2/aibridge/${var.goose_provider}" : ""
    token_env = local.ai_gateway_token_env
  }

  # Goose's OpenTelemetry export: the template's resource attributes, then
  # Coder's identifiers of this workspace, which win, as claude-code adds them
  # (registry/coder/modules/claude-code/main.tf @ coder/registry 6be121e4) so
  # Goose's telemetry joins Coder's audit logs. Empty when off.
  telemetry = var.telemetry.enabled ? {
    enabled  = true
    endpoint = var.telemetry.otlp_endpoint
    protocol = var.telemetry.otlp_protocol
    headers  = var.telemetry.otlp_headers
    resource_attributes = merge(var.telemetry.resource_attributes, {
      "coder.workspace_id"       = data.coder_workspace.me.id
      "coder.workspace_name"     = data.coder_workspace.me.name
      "coder.workspace_owner"    = data.coder_workspace_owner.me.name
      "coder.workspace_owner_id" = data.coder_workspace_owner.me.id
      "coder.template_name"      = data.coder_workspace.me.template_name
      "coder.template_version"   = data.coder_workspace.me.template_version
      "coder.access_url"         = data.coder_workspace.me.access_url
    })
    } : {
    enabled             = false
    endpoint            = ""
    protocol            = ""
    headers             = tomap({})
    resource_attributes = tomap({})
  }

  # What runs Goose inside the Agent Firewall: the agent-firewall module's
  # wrapper takes `--config=<file> -- <command>` (its README), or the
  # template's own prefix as given.
  firewall = var.agent_firewall == null ? { wrapper_path = "", config_path = "", command = tolist([]) } : var.agent_firewall
  goose_command_prefix = (
    local.firewall.wrapper_path != "" ?
    concat([local.firewall.wrapper_path], local.firewall.config_path != "" ? ["--config=${local.firewall.config_path}"] : [], ["--"]) :
    local.firewall.command
  )

  # The goose part of each script's settings; the AgentAPI layer adds its own
  # part (port, persistence, paths, task) beside it. Both reach the workspace as
  # gzip+base64 inside the coder_script, never as shell source. Each member is
  # read by src/settings/config.ts, which owns the defaults.
  start_settings = {
    folder    = trimsuffix(var.folder, "/") == "" ? "/" : trimsuffix(var.folder, "/")
    supervise = var.supervise
    agentapi = {
      install      = var.install_agentapi
      version      = local.agentapi_version
      download_url = var.agentapi_download_url
      sha256       = var.agentapi_sha256
    }
    goose = {
      install        = var.install_goose
      version        = local.goose_version
      download_url   = var.goose_download_url
      sha256         = var.goose_sha256
      installer_url  = var.goose_installer_url
      provider       = var.goose_provider
      model          = var.goose_model
      prompt         = local.prompt
      system_prompt  = var.system_prompt
      session_name   = local.session_name
      continue       = var.continue
      app_slug       = local.app_slug
      extensions     = local.extra_extensions
      install_script = { pre = var.pre_install_script == null ? "" : var.pre_install_script, post = var.post_install_script == null ? "" : var.post_install_script }

      continue_interrupted_turn = var.continue_interrupted_turn
      mode                      = var.goose_mode
      ai_gateway                = local.ai_gateway
      command_prefix            = local.goose_command_prefix
      telemetry                 = local.telemetry
    }
    # Who may reach AgentAPI: the start adds these to loopback and the
    # deployment's or the app's own host name (src/settings/access-lists.ts).
    access = {
      allowed_hosts   = var.agentapi_allowed_hosts
      allowed_origins = var.agentapi_allowed_origins
      access_url      = data.coder_workspace.me.access_url
      subdomain       = var.subdomain
    }
  }

  stop_settings = {
    log_snapshot = var.task_log_snapshot
    timeouts = {
      turn_ms = var.stop_turn_wait_seconds * 1000
      term_ms = var.stop_sigterm_wait_seconds * 1000
    }
    goose_mode = var.goose_mode
  }
}

check "agentapi_version_supports_persistence" {
  assert {
    condition     = !var.enable_state_persistence || !var.install_agentapi || local.agentapi_has_persistence
    error_message = "Remove agentapi_version to use the tested AgentAPI ${local.tested_versions.agentapi_version}, or set enable_state_persistence = false. AgentAPI ${local.agentapi_version} is older than v${local.agentapi_persistence_since}, the first release that saves the chat, so the chat history will not survive a restart (Goose still resumes its session)."
  }
}

# Version 3.x's aliases install the tested release, named here, not whatever is
# newest at each start: a warning, so that a 3.x template plans, and the line
# can go.
check "goose_version_alias" {
  assert {
    condition     = var.goose_version == null ? true : !contains(local.version_aliases, var.goose_version)
    error_message = "Remove goose_version = \"${coalesce(var.goose_version, "null")}\": it now means Goose ${local.tested_versions.goose_version}, the release this module is tested with, which is also what the module installs without the line. In version 3.x it installed the newest Goose release at every start; set a version such as \"${local.tested_versions.goose_version}\" to pin another release."
  }
}

check "agentapi_version_alias" {
  assert {
    condition     = var.agentapi_version == null ? true : !contains(local.version_aliases, var.agentapi_version)
    error_message = "Remove agentapi_version = \"${coalesce(var.agentapi_version, "null")}\": it now means AgentAPI ${local.tested_versions.agentapi_version}, the release this module is tested with, which is also what the module installs without the line. In version 3.x \"latest\" installed the newest AgentAPI release at every start; set a tag such as \"${local.tested_versions.agentapi_version}\" to pin another release."
  }
}

# The gateway's address is the access URL's: over http:// every model request
# carries the owner's full-scope session token in clear, readable on any
# network between the workspace and Coder. Loopback never leaves the host. A
# warning, not an error: a deployment whose access URL is http:// already
# sends its agent's token so.
locals {
  ai_gateway_in_clear = var.enable_ai_gateway && startswith(lower(data.coder_workspace.me.access_url), "http://") && !can(regex("^http://(localhost|127\\.[0-9.]+|\\[::1\\])(:[0-9]+)?(/|$)", lower(data.coder_workspace.me.access_url)))
}

check "ai_gateway_over_https" {
  assert {
    condition     = !local.ai_gateway_in_clear
    error_message = "Give the deployment an https:// access URL, or set enable_ai_gateway = false: with enable_ai_gateway, Goose sends the workspace owner's session token with every model request to ${data.coder_workspace.me.access_url}, which is plain http://, so anyone on the network between the workspace and Coder can read it and act as the owner."
  }
}

# The owner's session token for the AI Gateway, as the registry's agent modules
# pass secrets (registry/coder/modules/claude-code/main.tf @ 6be121e4). Coder
# issues a new one at every workspace build.
resource "coder_env" "ai_gateway_token" {
  count    = var.enable_ai_gateway ? 1 : 0
  agent_id = var.agent_id
  name     = local.ai_gateway_token_env
  value    = sensitive(data.coder_workspace_owner.me.session_token)
}

module "agentapi" {
  source = "./modules/agentapi"

  agent_id     = var.agent_id
  app_slug     = local.app_slug
  display_name = "Goose"
  task_id      = local.task_id
  icon         = var.icon
  order        = var.order
  group        = var.group
  web_app      = var.web_app
  cli_app      = var.cli_app

  web_app_display_name = var.web_app_display_name
  cli_app_display_name = var.cli_app_display_name

  subdomain     = var.subdomain
  module_folder = local.module_folder
  agentapi_port = var.agentapi_port

  enable_state_persistence = var.enable_state_persistence
  state_file_path          = var.state_file_path
  pid_file_path            = var.pid_file_path

  install_node      = var.install_node
  node_download_url = var.node_download_url

  install_script = file("${path.module}/scripts/install.cjs")
  start_script   = file("${path.module}/scripts/start.cjs")
  stop_script    = file("${path.module}/scripts/stop.cjs")
  start_settings = jsonencode(local.start_settings)
  stop_settings  = jsonencode(local.stop_settings)
}
