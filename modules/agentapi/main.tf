terraform {
  required_version = ">= 1.9"

  required_providers {
    coder = {
      source  = "coder/coder"
      version = ">= 2.12"
    }
  }
}

data "coder_workspace" "me" {}

data "coder_workspace_owner" "me" {}

locals {
  # The layer reads no `data "coder_task"`: the calling module says whether
  # this workspace is a task (provider 2.20 deprecates the data source, and a
  # plain workspace must plan without its warnings).
  task = var.task_id != ""

  # A task needs the web app: the task page embeds it.
  web_app = var.web_app || local.task

  # Path-based apps are served under this prefix; AgentAPI must know it to
  # link its chat assets. The agent ID stands in for the agent name, which
  # older Coder deployments do not expose to templates.
  chat_base_path = var.subdomain ? "" : "/@${data.coder_workspace_owner.me.name}/${data.coder_workspace.me.name}.${var.agent_id}/apps/${var.app_slug}/chat"

  # What this layer tells each script; the calling module's own settings
  # travel beside it as "agent". Empty paths are resolved by the scripts, which
  # own the defaults.
  start_layer = {
    display_name   = var.display_name
    module_folder  = var.module_folder
    port           = var.agentapi_port
    chat_base_path = local.chat_base_path
    persistence    = var.enable_state_persistence
    state_file     = var.state_file_path
    pid_file       = var.pid_file_path
    task = {
      id = var.task_id
    }
  }

  stop_layer = {
    module_folder = var.module_folder
    port          = var.agentapi_port
    state_file    = var.state_file_path
    pid_file      = var.pid_file_path
    task = {
      enabled = local.task
      id      = var.task_id
    }
  }

  start_document = { layer = local.start_layer, agent = jsondecode(var.start_settings) }
  stop_document  = { layer = local.stop_layer, agent = jsondecode(var.stop_settings) }

  wrapper = {
    label         = basename(var.module_folder)
    module_folder = var.module_folder
    install_node  = var.install_node
    node_url_b64  = base64encode(var.node_download_url)
    sync_install  = local.sync_names.install
    sync_start    = local.sync_names.start
  }

  # Coder stores both scripts with every workspace build, so the rendered
  # wrapper drops the template's comment lines (not the #! line) and its
  # indentation, which sh reads past (the template has no here-document); the
  # template keeps both for its readers.
  comment_lines = "/(?m)^[ \\t]*#[^!\\n]*\\n|^[ \\t]+/"

  # The names the scripts announce to `coder exp sync`, as the registry's
  # coder-utils makes them from the module folder (".coder-modules/coder/goose"
  # gives "coder-goose-install_script"; registry/coder/modules/coder-utils/main.tf
  # at coder/registry@6be121e4): another module can wait for this one by them.
  sync_prefix = replace(trimprefix(var.module_folder, ".coder-modules/"), "/", "-")
  sync_names = {
    install = "${local.sync_prefix}-install_script"
    start   = "${local.sync_prefix}-start_script"
  }

  install_wrapper = replace(templatefile("${path.module}/templates/run.sh.tftpl", merge(local.wrapper, {
    name         = "install"
    script_b64   = base64gzip(var.install_script)
    settings_b64 = base64gzip(jsonencode(local.start_document))
  })), local.comment_lines, "")

  start_wrapper = replace(templatefile("${path.module}/templates/run.sh.tftpl", merge(local.wrapper, {
    name         = "start"
    script_b64   = base64gzip(var.start_script)
    settings_b64 = base64gzip(jsonencode(local.start_document))
  })), local.comment_lines, "")

  stop_wrapper = replace(templatefile("${path.module}/templates/run.sh.tftpl", merge(local.wrapper, {
    name         = "stop"
    script_b64   = base64gzip(var.stop_script)
    settings_b64 = base64gzip(jsonencode(local.stop_document))
  })), local.comment_lines, "")

  # The Coder agent runs a script as one `sh -c <script>` argument, and Linux
  # refuses a single argument over 128 KiB (MAX_ARG_STRLEN).
  max_script_bytes = 131072
}

resource "coder_script" "install" {
  agent_id     = var.agent_id
  display_name = "${var.display_name}: Install Script"
  icon         = var.icon
  run_on_start = true
  script       = local.install_wrapper

  lifecycle {
    precondition {
      condition     = length(local.install_wrapper) < local.max_script_bytes - 8192
      error_message = "Shorten the settings that are long text, such as a prompt or an install script: the rendered install script is ${length(local.install_wrapper)} bytes, too close to Linux's 128 KiB limit for one argument, so it would not run."
    }
  }
}

resource "coder_script" "start" {
  agent_id     = var.agent_id
  display_name = "${var.display_name}: Start Script"
  icon         = var.icon
  run_on_start = true
  script       = local.start_wrapper

  lifecycle {
    precondition {
      condition     = length(local.start_wrapper) < local.max_script_bytes - 8192
      error_message = "Shorten the settings that are long text, such as a prompt or an install script: the rendered start script is ${length(local.start_wrapper)} bytes, too close to Linux's 128 KiB limit for one argument, so it would not run."
    }
  }
}

resource "coder_script" "stop" {
  agent_id     = var.agent_id
  display_name = "${var.display_name}: Stop Script"
  icon         = var.icon
  run_on_stop  = true
  script       = local.stop_wrapper

  lifecycle {
    precondition {
      condition     = length(local.stop_wrapper) < local.max_script_bytes - 8192
      error_message = "The rendered stop script is ${length(local.stop_wrapper)} bytes, too close to Linux's 128 KiB limit for one argument, so it would not run."
    }
  }
}

resource "coder_app" "web" {
  count = local.web_app ? 1 : 0

  agent_id     = var.agent_id
  slug         = var.app_slug
  display_name = var.web_app_display_name
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
  display_name = var.cli_app_display_name
  icon         = var.icon
  order        = var.order
  group        = var.group
  command      = "\"$HOME/${var.module_folder}/bin/agentapi\" attach --url localhost:${var.agentapi_port}"
}
