variable "agent_id" {
  description = "The ID of the Coder agent that runs Goose (usually coder_agent.main.id)."
  type        = string

  validation {
    condition     = trimspace(var.agent_id) != ""
    error_message = "agent_id must not be empty."
  }
}

variable "folder" {
  description = "Absolute path of the folder Goose works in. The start creates it, empty, when it is missing (a clone step may fill it later: order the clone first, see the README), and it must stay the same across restarts, or Goose asks to switch folders when it resumes."
  type        = string
  default     = "/home/coder"

  validation {
    condition     = can(regex("^/[^\\n\\r\\x00]*$", var.folder))
    error_message = "Set folder to an absolute path on one line, such as \"/home/coder/project\". Version 3.x handed a relative folder to cd in its start script, so it named a folder under wherever the Coder agent ran that script; this module needs the same absolute folder at every start, because Goose keeps it in the session and asks to switch folders when it resumes elsewhere."
  }
}

variable "order" {
  description = "The order of the Goose apps in the Coder dashboard."
  type        = number
  default     = null
}

variable "group" {
  description = "The name of a group that the Goose apps belong to in the Coder dashboard."
  type        = string
  default     = null
}

variable "icon" {
  description = "The icon of the Goose apps and scripts."
  type        = string
  default     = "/icon/goose.svg"

  validation {
    condition     = trimspace(var.icon) != ""
    error_message = "icon must not be empty."
  }
}

variable "install_goose" {
  description = "Install the Goose CLI (goose_version) when it is not already installed at that version."
  type        = bool
  default     = true
}

variable "goose_version" {
  description = "The Goose CLI release to install, as X.Y.Z or vX.Y.Z, 1.34.0 or newer: the module hands Goose its extensions as a config layer (GOOSE_ADDITIONAL_CONFIG_FILES), which Goose reads from 1.34.0. Null (the default) installs the release this module is tested with (tested_versions in main.tf); \"stable\" and \"latest\", the values of version 3.x, mean the same, with a plan-time warning."
  type        = string
  default     = null

  validation {
    condition = var.goose_version == null ? true : (
      contains(local.version_aliases, var.goose_version) ||
      can(regex("^v?[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z.-]+)?$", var.goose_version))
    )
    error_message = "Remove goose_version to use the tested Goose ${local.tested_versions.goose_version}, or set a release version such as \"${local.tested_versions.goose_version}\" (1.34.0 or newer). \"${coalesce(var.goose_version, "null")}\" is not a release version."
  }

  validation {
    condition = var.goose_version == null ? true : (
      !can(regex("^v?([0-9]+)\\.([0-9]+)\\.", var.goose_version)) ||
      try(
        tonumber(regex("^v?([0-9]+)\\.([0-9]+)\\.", var.goose_version)[0]) > 1 ||
        (tonumber(regex("^v?([0-9]+)\\.([0-9]+)\\.", var.goose_version)[0]) == 1 && tonumber(regex("^v?([0-9]+)\\.([0-9]+)\\.", var.goose_version)[1]) >= 34),
        false
      )
    )
    error_message = "Remove goose_version to use the tested Goose ${local.tested_versions.goose_version}, or set 1.34.0 or newer. Goose ${coalesce(var.goose_version, "null")} is older than 1.34.0, the first release that reads the config layer carrying the module's extensions (GOOSE_ADDITIONAL_CONFIG_FILES), where version 3.x wrote them into ~/.config/goose/config.yaml."
  }
}

variable "goose_provider" {
  description = "The Goose provider, for example \"anthropic\", \"openai\" or \"databricks\". Its API key must reach the workspace as an environment variable (for example ANTHROPIC_API_KEY through a coder_env)."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9_-]*$", var.goose_provider))
    error_message = "goose_provider must be a Goose provider name in lower case, such as \"anthropic\"."
  }
}

variable "goose_model" {
  description = "The model Goose uses, for example \"claude-sonnet-4-5\"."
  type        = string

  validation {
    condition     = can(regex("^[^\\s]+$", var.goose_model))
    error_message = "goose_model must be a model name without spaces or line breaks."
  }
}

variable "task" {
  description = "Coder Tasks (Coder v2.29 and v2.34 extended-support releases; removed from v2.37): pass data.coder_task.me from a task template. Null (the default) is a plain workspace: no prompt is sent, the first message is typed into the chat, and the stop posts no task log snapshot. In a task (enabled = true) the prompt is delivered to Goose once, on the first start of the named session, the web app is always created, and the stop posts the task log snapshot. Other attributes of the object are ignored."
  type = object({
    enabled = bool
    id      = string
    prompt  = string
  })
  default = null

  validation {
    condition     = var.task == null || !try(var.task.enabled, false) || try(trimspace(var.task.id) != "", false)
    error_message = "task.enabled is true but task.id is empty: pass the whole data.coder_task.me, which carries the task's ID."
  }
}

variable "ai_prompt" {
  description = "A prompt for Goose outside Coder Tasks, for example data.coder_parameter.ai_prompt.value. It is sent once, to a new Goose session (the first start, or every start with continue = false), and never again on a resume or after a crash. Empty (the default) sends nothing: Goose waits for the first message typed into the chat. In a task (task.enabled) the task's prompt is the one sent; setting both fails the plan."
  type        = string
  default     = ""
  nullable    = false
}

variable "system_prompt" {
  description = "Standing instructions for Goose, written to a block that this module owns inside ~/.config/goose/.goosehints."
  type        = string
  default     = ""
  nullable    = false
}

variable "session_name" {
  description = "The name of the Goose session. Empty means a name derived from the workspace ID, which stays the same across restarts."
  type        = string
  default     = ""
  nullable    = false

  validation {
    condition     = var.session_name == "" || can(regex("^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$", var.session_name))
    error_message = "session_name must be empty or 1 to 128 characters of letters, digits, '.', '_' and '-', starting with a letter or digit."
  }
}

variable "continue" {
  description = "Resume the named Goose session when it already holds a conversation. When false, every start begins a new session."
  type        = bool
  default     = true
}

variable "continue_interrupted_turn" {
  description = "When the workspace stopped while Goose was answering a message, ask the resumed session to carry on with it (once) on the next start. When false, the task waits for input in the chat."
  type        = bool
  default     = true
  nullable    = false
}

variable "supervise" {
  description = "Keep a supervisor running beside AgentAPI: it restarts AgentAPI and Goose, resuming the same session without sending the task prompt again, when they exit without a workspace stop (a crash, an out-of-memory kill, /exit typed in the CLI app), saves the chat after every turn, and gives up after 5 failed restarts within 10 minutes. See logs/supervisor.log in the module folder."
  type        = bool
  default     = true
  nullable    = false
}

variable "install_agentapi" {
  description = "Install AgentAPI (agentapi_version) when it is not already installed at that version."
  type        = bool
  default     = true
}

variable "agentapi_version" {
  description = "The AgentAPI release to install, as vX.Y.Z. State persistence needs v0.12.0 or newer. Null (the default) installs the release this module is tested with (tested_versions in main.tf); \"latest\" and \"stable\" mean the same, with a plan-time warning."
  type        = string
  default     = null

  validation {
    condition = var.agentapi_version == null ? true : (
      contains(local.version_aliases, var.agentapi_version) ||
      can(regex("^v[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z.-]+)?$", var.agentapi_version))
    )
    error_message = "Remove agentapi_version to use the tested AgentAPI ${local.tested_versions.agentapi_version}, or set a release tag such as \"${local.tested_versions.agentapi_version}\". \"${coalesce(var.agentapi_version, "null")}\" is not a release tag vX.Y.Z."
  }
}

variable "agentapi_port" {
  description = "The port AgentAPI listens on. Give each AgentAPI-based module in a workspace its own port."
  type        = number
  default     = 3284

  validation {
    condition     = var.agentapi_port == floor(var.agentapi_port) && var.agentapi_port >= 1024 && var.agentapi_port <= 65535
    error_message = "agentapi_port must be a whole number between 1024 and 65535."
  }
}

variable "subdomain" {
  description = "Serve the Goose web app on a subdomain. Needs a wildcard access URL on the deployment; false serves it under a path."
  type        = bool
  default     = false
}

variable "web_app" {
  description = "Show the Goose chat as a web app in the dashboard. Always on in a Coder task (task.enabled), which needs it."
  type        = bool
  default     = true
}

variable "cli_app" {
  description = "Add a terminal app that attaches to the running Goose session."
  type        = bool
  default     = false
}

variable "web_app_display_name" {
  description = "The name of the Goose chat app in the dashboard."
  type        = string
  default     = "Goose"

  validation {
    condition     = can(regex("^[^\\n\\r\\x00]{1,64}$", var.web_app_display_name)) && trimspace(var.web_app_display_name) != ""
    error_message = "web_app_display_name must be 1 to 64 characters on one line, not only spaces."
  }
}

variable "cli_app_display_name" {
  description = "The name of the Goose terminal app in the dashboard (cli_app = true)."
  type        = string
  default     = "Goose CLI"

  validation {
    condition     = can(regex("^[^\\n\\r\\x00]{1,64}$", var.cli_app_display_name)) && trimspace(var.cli_app_display_name) != ""
    error_message = "cli_app_display_name must be 1 to 64 characters on one line, not only spaces."
  }
}

variable "pre_install_script" {
  description = "A shell script run before Goose and AgentAPI are installed. Its output goes to logs/pre_install.log in the module folder."
  type        = string
  default     = null
}

variable "post_install_script" {
  description = "A shell script run after Goose and AgentAPI are installed and configured. Its output goes to logs/post_install.log in the module folder."
  type        = string
  default     = null
}

variable "additional_extensions" {
  description = "Extra Goose extensions as YAML: a map from extension name to its Goose config entry, given to the module's Goose in its own config layer (GOOSE_ADDITIONAL_CONFIG_FILES); ~/.config/goose/config.yaml is never written."
  type        = string
  default     = null

  validation {
    condition = (
      var.additional_extensions == null ? true :
      trimspace(var.additional_extensions) == "" ? true :
      can(keys(yamldecode(var.additional_extensions))) &&
      alltrue([for name, ext in try(yamldecode(var.additional_extensions), {}) : can(keys(ext)) && can(regex("^[A-Za-z0-9_-]+$", name)) && !contains(["__proto__", "constructor", "prototype"], lower(name))])
    )
    error_message = "additional_extensions must be YAML mapping extension names (letters, digits, '_' and '-'; not __proto__, constructor or prototype, which name JavaScript object internals) to extension settings, for example \"github:\\n  type: stdio\\n  cmd: github-mcp-server\"."
  }
}

variable "enable_state_persistence" {
  description = "Save the AgentAPI chat history when the workspace stops and restore it when it starts. Needs AgentAPI v0.12.0 or newer; with an older binary the start logs a warning and runs without it."
  type        = bool
  default     = true
}

variable "state_file_path" {
  description = "Absolute path of the AgentAPI state file. Empty means $HOME/.coder-modules/coder/goose/agentapi-state.json."
  type        = string
  default     = ""
  nullable    = false

  validation {
    condition     = var.state_file_path == "" || can(regex("^/[^\\n\\r\\x00]*[^/]$", var.state_file_path))
    error_message = "state_file_path must be empty or an absolute file path (starting with /, not ending with /)."
  }
}

variable "pid_file_path" {
  description = "Absolute path of the AgentAPI PID file. Empty means $HOME/.coder-modules/coder/goose/agentapi.pid."
  type        = string
  default     = ""
  nullable    = false

  validation {
    condition     = var.pid_file_path == "" || can(regex("^/[^\\n\\r\\x00]*[^/]$", var.pid_file_path))
    error_message = "pid_file_path must be empty or an absolute file path (starting with /, not ending with /)."
  }
}

variable "task_log_snapshot" {
  description = "In a Coder task (task.enabled), upload the last chat messages to Coder when the workspace stops, so the chat stays readable while the task is paused."
  type        = bool
  default     = true
}

variable "goose_download_url" {
  description = "Base URL of Goose's release assets; the tarball is fetched from <base>/v<goose_version>/goose-<x86_64|aarch64>-unknown-linux-gnu.tar.bz2. Must be https:// (or file://, or http:// on 127.0.0.1, localhost or [::1])."
  type        = string
  default     = "https://github.com/aaif-goose/goose/releases/download"

  validation {
    condition     = can(regex(local.download_url_rule, var.goose_download_url)) && !endswith(var.goose_download_url, "/")
    error_message = "goose_download_url must be an https:// URL (or file://, or http:// on 127.0.0.1, localhost or [::1] for a local mirror) without a trailing slash."
  }
}

variable "goose_sha256" {
  description = "SHA-256 of Goose's release tarball for goose_version, per architecture: { amd64 = \"<64 hex>\", arm64 = \"<64 hex>\" }. A download that does not match is deleted before it is unpacked or run, and the start fails. Empty: the download is installed NOT verified, with a warning in the start log (the module pins no checksum; see the README)."
  type        = map(string)
  default     = {}
  nullable    = false

  validation {
    condition     = alltrue([for arch, sum in var.goose_sha256 : contains(["amd64", "arm64"], arch) && can(regex("^[0-9A-Fa-f]{64}$", sum))])
    error_message = "goose_sha256 must map \"amd64\" and/or \"arm64\" to a SHA-256 of 64 hexadecimal characters."
  }

  validation {
    condition     = length(var.goose_sha256) == 0 || var.goose_installer_url == ""
    error_message = "goose_sha256 cannot verify what goose_installer_url's installer downloads by itself. Remove goose_installer_url (the module then downloads the release tarball from goose_download_url and checks it), or remove goose_sha256."
  }
}

variable "goose_installer_url" {
  description = "Deprecated: URL of a Goose installer (a mirrored download_cli.sh) to run instead of downloading the release tarball. What it downloads cannot be verified; it runs with a minimal environment (no CODER_* variables). Empty (the default) downloads the tarball from goose_download_url."
  type        = string
  default     = ""
  nullable    = false

  validation {
    condition     = var.goose_installer_url == "" || can(regex(local.download_url_rule, var.goose_installer_url))
    error_message = "goose_installer_url must be empty or an https:// URL (or file://, or http:// on 127.0.0.1, localhost or [::1] for a local mirror)."
  }
}

variable "agentapi_download_url" {
  description = "Base URL of AgentAPI release assets; the binary is fetched from <base>/<agentapi_version>/agentapi-linux-<amd64|arm64>. Must be https:// (or file://, or http:// on 127.0.0.1, localhost or [::1])."
  type        = string
  default     = "https://github.com/coder/agentapi/releases/download"

  validation {
    condition     = can(regex(local.download_url_rule, var.agentapi_download_url)) && !endswith(var.agentapi_download_url, "/")
    error_message = "agentapi_download_url must be an https:// URL (or file://, or http:// on 127.0.0.1, localhost or [::1] for a local mirror) without a trailing slash."
  }
}

variable "agentapi_sha256" {
  description = "SHA-256 of the AgentAPI release binary for agentapi_version, per architecture: { amd64 = \"<64 hex>\", arm64 = \"<64 hex>\" }. A download that does not match is deleted before it runs, and the start fails. Empty: the download is installed NOT verified, with a warning in the start log (the module pins no checksum; see the README)."
  type        = map(string)
  default     = {}
  nullable    = false

  validation {
    condition     = alltrue([for arch, sum in var.agentapi_sha256 : contains(["amd64", "arm64"], arch) && can(regex("^[0-9A-Fa-f]{64}$", sum))])
    error_message = "agentapi_sha256 must map \"amd64\" and/or \"arm64\" to a SHA-256 of 64 hexadecimal characters."
  }
}

variable "node_download_url" {
  description = "Base URL of Node.js releases, used only when the workspace has no Node.js 18.19+ (or Bun) to run the module's scripts; the tarball is fetched from <base>/v<version>/ and checked against a pinned SHA-256. Must be https:// (or file://, or http:// on 127.0.0.1, localhost or [::1])."
  type        = string
  default     = "https://nodejs.org/dist"

  validation {
    condition     = can(regex(local.download_url_rule, var.node_download_url)) && !endswith(var.node_download_url, "/")
    error_message = "node_download_url must be an https:// URL (or file://, or http:// on 127.0.0.1, localhost or [::1] for a local mirror) without a trailing slash."
  }
}

variable "install_node" {
  description = "Install a pinned Node.js into the module folder when the workspace has neither Node.js 18.19+ nor Bun. When false, such a workspace fails to start Goose with a message naming what to install."
  type        = bool
  default     = true
}

variable "stop_turn_wait_seconds" {
  description = "When the workspace stops while Goose is in the middle of a turn, how long to let the turn finish before stopping it (Goose saves a turn only when it completes)."
  type        = number
  default     = 5

  validation {
    condition     = var.stop_turn_wait_seconds >= 0 && var.stop_turn_wait_seconds <= 300
    error_message = "stop_turn_wait_seconds must be between 0 and 300."
  }
}

variable "stop_sigterm_wait_seconds" {
  description = "How long the stop script waits for AgentAPI to exit after SIGTERM before it kills AgentAPI and Goose. The stop sends SIGTERM only when Goose did not exit by itself on /exit. AgentAPI's own shutdown takes at most 10 s (5 s to drain HTTP, 5 s for the agent). With the defaults the whole stop fits a 30 s grace period."
  type        = number
  default     = 10

  validation {
    condition     = var.stop_sigterm_wait_seconds >= 1 && var.stop_sigterm_wait_seconds <= 300
    error_message = "stop_sigterm_wait_seconds must be between 1 and 300."
  }
}

variable "goose_mode" {
  description = "Goose's permission mode for the module's Goose: \"auto\" runs every tool call without asking, \"smart_approve\" asks before the ones it judges sensitive, \"approve\" asks before each one, \"chat\" makes none. Goose asks in its terminal; answer in the CLI app (cli_app = true). See the README's Security section."
  type        = string
  default     = "auto"
  nullable    = false

  validation {
    condition     = contains(["auto", "smart_approve", "approve", "chat"], var.goose_mode)
    error_message = "goose_mode must be one of \"auto\", \"smart_approve\", \"approve\" or \"chat\" (Goose's GOOSE_MODE values)."
  }
}

variable "agentapi_allowed_hosts" {
  description = "More host names AgentAPI accepts in a request's Host header, beside the defaults: loopback, and the access URL's host (path-based app) or the app's own host (subdomain app). Add a workspace proxy's host name here. Names or IP addresses only, no scheme, port or pattern; IPv6 in brackets. \"*\" turns the check off, so that a web page that points its name at the workspace (DNS rebinding) can drive Goose: do not use it."
  type        = list(string)
  default     = []
  nullable    = false

  validation {
    condition = alltrue([for host in var.agentapi_allowed_hosts : (
      host == "*" ||
      can(regex("^[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*$", host)) ||
      can(regex("^\\[[0-9A-Fa-f:.]+\\]$", host))
    )])
    error_message = "Each agentapi_allowed_hosts entry must be a host name or IP address without scheme, port or wildcard pattern (AgentAPI matches names exactly; it ignores the port), an IPv6 address in brackets such as \"[fd00::1]\", or \"*\"."
  }
}

variable "agentapi_allowed_origins" {
  description = "More origins (scheme://host[:port]) whose web pages may call AgentAPI from a browser, beside the default, loopback on agentapi_port only. The dashboard's chat is same-origin and needs none, so this matters only for a browser that reaches the port directly (coder port-forward, Coder Desktop). Every page of an origin listed here can read and drive the chat; \"*\" lets any web page do so: do not use it."
  type        = list(string)
  default     = []
  nullable    = false

  validation {
    condition = alltrue([for origin in var.agentapi_allowed_origins : (
      origin == "*" ||
      can(regex("^https?://([A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?$", origin))
    )])
    error_message = "Each agentapi_allowed_origins entry must be an origin, http:// or https:// and a host with an optional port and nothing after it (for example \"https://coder.example.com\"), or \"*\"."
  }
}

variable "enable_ai_gateway" {
  description = "Send Goose's model requests through the deployment's AI Gateway (Coder Premium, v2.30+) as the workspace owner, with their Coder session token instead of a provider key: <access URL>/api/v2/aibridge/anthropic or /api/v2/aibridge/openai. Works with goose_provider \"anthropic\" or \"openai\". See the README's AI governance section."
  type        = bool
  default     = false
  nullable    = false

  validation {
    condition     = !var.enable_ai_gateway || contains(["anthropic", "openai"], var.goose_provider)
    error_message = "enable_ai_gateway works with goose_provider \"anthropic\" or \"openai\", the two the AI Gateway serves (goose_provider is \"${var.goose_provider}\"). Set one of them, or set enable_ai_gateway = false and give the provider's key through a coder_env."
  }
}

variable "telemetry" {
  description = "Goose's OpenTelemetry export, as claude-code offers it: with enabled = true the module's Goose sends its traces, metrics and logs to otlp_endpoint over OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT, _PROTOCOL and _HEADERS), and OTEL_RESOURCE_ATTRIBUTES carries resource_attributes plus Coder's workspace identifiers (coder.workspace_id, coder.workspace_name, coder.workspace_owner, coder.workspace_owner_id, coder.template_name, coder.template_version, coder.access_url), so they join Coder's audit logs. Only AgentAPI's environment carries them, for the Goose it starts; no other process of the workspace, and none of the module's helpers."
  type = object({
    enabled             = optional(bool, false)
    otlp_endpoint       = optional(string, "")
    otlp_protocol       = optional(string, "http/protobuf")
    otlp_headers        = optional(map(string), {})
    resource_attributes = optional(map(string), {})
  })
  default  = {}
  nullable = false

  validation {
    condition     = !var.telemetry.enabled || can(regex("^https?://[^\\s,]+$", var.telemetry.otlp_endpoint))
    error_message = "Set telemetry.otlp_endpoint to your OpenTelemetry collector's OTLP/HTTP address, such as \"http://localhost:4318\": with telemetry.enabled, Goose needs an http:// or https:// URL to send to."
  }
  validation {
    condition     = contains(["http/protobuf", "http/json"], var.telemetry.otlp_protocol)
    error_message = "Set telemetry.otlp_protocol to \"http/protobuf\" (the default) or \"http/json\": Goose's release builds export OTLP over HTTP only, and skip every signal when the protocol is grpc (crates/goose/src/otel/otlp.rs, aaif-goose/goose v1.47.0)."
  }
  validation {
    condition     = alltrue([for key in concat(keys(var.telemetry.otlp_headers), keys(var.telemetry.resource_attributes)) : can(regex("^[A-Za-z0-9._-]+$", key))])
    error_message = "Name each telemetry.otlp_headers and telemetry.resource_attributes entry with letters, digits, '.', '_' and '-' only: the names go into comma-separated OTEL_* variables."
  }
  validation {
    condition     = alltrue([for value in values(var.telemetry.resource_attributes) : !strcontains(value, ",") && !strcontains(value, "=")])
    error_message = "Remove ',' and '=' from the values of telemetry.resource_attributes: OTEL_RESOURCE_ATTRIBUTES is a comma-separated list of name=value pairs, and Goose reads a value as written, with no way to escape them."
  }
}

variable "agent_firewall" {
  description = "Run Goose, and only Goose, inside Coder's Agent Firewall; AgentAPI and the module's helpers stay outside. Either the agent-firewall module's outputs, { wrapper_path = module.agent-firewall.agent_firewall_wrapper_path, config_path = module.agent-firewall.agent_firewall_config_path }, which runs `<wrapper_path> --config=<config_path> -- goose ...`; or { command = [...] }, any command prefix that runs the command after it, such as [\"boundary\", \"--config=/etc/boundary.yaml\", \"--\"]. $HOME in a value is the workspace user's home folder. See the README's AI governance section for the allow-list Goose needs."
  type = object({
    wrapper_path = optional(string, "")
    config_path  = optional(string, "")
    command      = optional(list(string), [])
  })
  default = null

  validation {
    condition     = var.agent_firewall == null || ((try(var.agent_firewall.wrapper_path, "") != "") != (length(try(var.agent_firewall.command, [])) > 0))
    error_message = "agent_firewall needs exactly one of wrapper_path (the agent-firewall module's agent_firewall_wrapper_path output) or command (a command prefix such as [\"boundary\", \"--\"])."
  }

  validation {
    condition     = var.agent_firewall == null || try(var.agent_firewall.config_path, "") == "" || try(var.agent_firewall.wrapper_path, "") != ""
    error_message = "agent_firewall.config_path goes with wrapper_path; with command, put the config option in the command itself."
  }

  validation {
    condition = var.agent_firewall == null || alltrue([
      for value in concat([try(var.agent_firewall.wrapper_path, ""), try(var.agent_firewall.config_path, "")], try(var.agent_firewall.command, [])) :
      !can(regex("[\\n\\r\\x00]", value))
    ])
    error_message = "agent_firewall values must be on one line (no line breaks or NUL characters)."
  }

  validation {
    condition = var.agent_firewall == null || alltrue([
      for value in [try(var.agent_firewall.wrapper_path, ""), try(var.agent_firewall.config_path, "")] :
      value == "" || can(regex("^(/|\\$HOME/|\\$\\{HOME\\}/)", value))
    ])
    error_message = "agent_firewall.wrapper_path and config_path must be absolute paths, or start with $HOME/ (as the agent-firewall module's outputs do)."
  }

  validation {
    condition     = var.agent_firewall == null || length(try(var.agent_firewall.command, [])) == 0 || trimspace(try(var.agent_firewall.command[0], "")) != ""
    error_message = "agent_firewall.command must start with the name or path of the firewall's command."
  }

  # The prefix runs after env(1), which would read a leading "-" word as its own option.
  validation {
    condition     = var.agent_firewall == null || !startswith(trimspace(try(var.agent_firewall.command[0], "")), "-")
    error_message = "agent_firewall.command must start with the firewall's command (such as \"boundary\" or a path), not an option: its first word starts with \"-\"."
  }
}
