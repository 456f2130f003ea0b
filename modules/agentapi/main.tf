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

data "coder_workspace_owner" "me" {}

data "coder_task" "me" {}

locals {
  folder = trimsuffix(var.folder, "/") == "" ? "/" : trimsuffix(var.folder, "/")

  # A task needs the web app: the task page embeds it.
  web_app = var.web_app || data.coder_task.me.enabled

  # Path-based apps are served under this prefix; AgentAPI must know it to
  # link its chat assets. The agent ID stands in for the agent name, which
  # older Coder deployments do not expose to templates.
  chat_base_path = var.subdomain ? "" : "/@${data.coder_workspace_owner.me.name}/${data.coder_workspace.me.name}.${var.agent_id}/apps/${var.app_slug}/chat"

  # Defaults are spelled with a literal $HOME, which the scripts expand.
  state_file_path = var.state_file_path != "" ? var.state_file_path : "$HOME/${var.module_folder}/agentapi-state.json"
  pid_file_path   = var.pid_file_path != "" ? var.pid_file_path : "$HOME/${var.module_folder}/agentapi.pid"

  agentapi = {
    install        = var.install_agentapi
    version        = var.agentapi_version
    download_url   = var.agentapi_download_url
    port           = var.agentapi_port
    chat_base_path = local.chat_base_path
    persistence    = var.enable_state_persistence
    state_file     = local.state_file_path
    pid_file       = local.pid_file_path
  }

  start_config = {
    module_folder = var.module_folder
    folder        = local.folder
    agentapi      = local.agentapi
    agent         = var.agent_config
  }

  # Outside a task the provider reports a random task ID, so the snapshot is
  # gated on `enabled`, never on the ID alone.
  stop_config = {
    module_folder = var.module_folder
    agentapi      = local.agentapi
    task = {
      enabled      = data.coder_task.me.enabled
      id           = data.coder_task.me.enabled ? data.coder_task.me.id : ""
      log_snapshot = var.task_log_snapshot
    }
    timeouts = {
      turn_ms = var.stop_turn_wait_seconds * 1000
      term_ms = var.stop_sigterm_wait_seconds * 1000
    }
  }

  wrapper = {
    module_folder = var.module_folder
    install_node  = var.install_node
    node_url_b64  = base64encode(var.node_download_url)
  }

  start_wrapper = templatefile("${path.module}/templates/run.sh.tftpl", merge(local.wrapper, {
    name       = "start"
    script_b64 = base64gzip(var.start_script)
    config_b64 = base64gzip(jsonencode(local.start_config))
  }))

  stop_wrapper = templatefile("${path.module}/templates/run.sh.tftpl", merge(local.wrapper, {
    name         = "shutdown"
    install_node = false
    script_b64   = base64gzip(var.stop_script)
    config_b64   = base64gzip(jsonencode(local.stop_config))
  }))

  # The Coder agent runs a script as one `sh -c <script>` argument, and Linux
  # refuses a single argument over 128 KiB (MAX_ARG_STRLEN).
  max_script_bytes = 131072
}

resource "coder_script" "start" {
  agent_id     = var.agent_id
  display_name = "${var.display_name} (start)"
  icon         = var.icon
  run_on_start = true
  script       = local.start_wrapper

  lifecycle {
    precondition {
      condition     = length(local.start_wrapper) < local.max_script_bytes - 8192
      error_message = "The rendered start script is ${length(local.start_wrapper)} bytes, too close to Linux's 128 KiB limit for one argument. Shorten ai_prompt, system_prompt, the install scripts or additional_extensions."
    }
  }
}

resource "coder_script" "stop" {
  agent_id     = var.agent_id
  display_name = "${var.display_name} (stop)"
  icon         = var.icon
  run_on_stop  = true
  script       = local.stop_wrapper

  lifecycle {
    precondition {
      condition     = length(local.stop_wrapper) < local.max_script_bytes - 8192
      error_message = "The rendered stop script is ${length(local.stop_wrapper)} bytes, too close to Linux's 128 KiB limit for one argument."
    }
  }
}

resource "coder_app" "web" {
  count = local.web_app ? 1 : 0

  agent_id     = var.agent_id
  slug         = var.app_slug
  display_name = var.display_name
  icon         = var.icon
  order        = var.order
  group        = var.group
  url          = "http://localhost:${var.agentapi_port}/"
  subdomain    = var.subdomain

  healthcheck {
    url       = "http://localhost:${var.agentapi_port}/status"
    interval  = 3
    threshold = 20
  }
}

resource "coder_app" "cli" {
  count = var.cli_app ? 1 : 0

  agent_id     = var.agent_id
  slug         = "${var.app_slug}-cli"
  display_name = "${var.display_name} CLI"
  icon         = var.icon
  order        = var.order
  group        = var.group
  command      = "\"$HOME/${var.module_folder}/bin/agentapi\" attach --url localhost:${var.agentapi_port}"
}
