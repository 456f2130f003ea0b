variable "agent_id" {
  description = "The ID of the Coder agent that runs AgentAPI."
  type        = string

  validation {
    condition     = trimspace(var.agent_id) != ""
    error_message = "agent_id must not be empty."
  }
}

variable "folder" {
  description = "Absolute path of the folder the agent works in."
  type        = string
  default     = "/home/coder"

  validation {
    condition     = can(regex("^/[^\\n\\r\\x00]*$", var.folder))
    error_message = "folder must be an absolute path (starting with /) on one line."
  }
}

variable "icon" {
  description = "The icon of the apps and scripts."
  type        = string
}

variable "order" {
  description = "The order of the apps in the Coder dashboard."
  type        = number
  default     = null
}

variable "group" {
  description = "The group of the apps in the Coder dashboard."
  type        = string
  default     = null
}

variable "app_slug" {
  description = "The slug of the web app; the CLI app gets \"<slug>-cli\"."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9](-?[a-z0-9])*$", var.app_slug))
    error_message = "app_slug must be lower-case letters and digits separated by single hyphens."
  }
}

variable "display_name" {
  description = "The name of the agent shown on the apps and scripts."
  type        = string
}

variable "web_app" {
  description = "Create the web app. Always created in a Coder task."
  type        = bool
  default     = true
}

variable "cli_app" {
  description = "Create a terminal app that attaches to the agent."
  type        = bool
  default     = false
}

variable "subdomain" {
  description = "Serve the web app on a subdomain instead of a path."
  type        = bool
  default     = false
}

variable "module_folder" {
  description = "The module's runtime folder relative to $HOME, following the registry layout .coder-modules/<namespace>/<module>."
  type        = string

  validation {
    condition     = can(regex("^\\.coder-modules/[a-z0-9-]+/[a-z0-9-]+$", var.module_folder))
    error_message = "module_folder must look like .coder-modules/<namespace>/<module>."
  }
}

variable "install_agentapi" {
  description = "Install AgentAPI when it is not already installed at agentapi_version."
  type        = bool
  default     = true
}

variable "agentapi_version" {
  description = "The AgentAPI release tag to install."
  type        = string
  default     = "v0.12.1"

  validation {
    condition     = can(regex("^v[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z.-]+)?$", var.agentapi_version))
    error_message = "agentapi_version must be a release tag such as \"v0.12.1\"."
  }
}

variable "agentapi_port" {
  description = "The port AgentAPI listens on."
  type        = number
  default     = 3284

  validation {
    condition     = var.agentapi_port == floor(var.agentapi_port) && var.agentapi_port >= 1024 && var.agentapi_port <= 65535
    error_message = "agentapi_port must be a whole number between 1024 and 65535."
  }
}

variable "agentapi_download_url" {
  description = "Base URL of AgentAPI release assets."
  type        = string
  default     = "https://github.com/coder/agentapi/releases/download"

  validation {
    condition     = can(regex("^https?://[^\\s]+[^/]$", var.agentapi_download_url))
    error_message = "agentapi_download_url must be an http:// or https:// URL without a trailing slash."
  }
}

variable "enable_state_persistence" {
  description = "Save and restore the AgentAPI chat history across restarts (AgentAPI v0.12.0 or newer)."
  type        = bool
  default     = true
}

variable "state_file_path" {
  description = "Absolute path of the AgentAPI state file; empty means agentapi-state.json in the module folder."
  type        = string
  default     = ""

  validation {
    condition     = var.state_file_path == "" || can(regex("^/[^\\n\\r\\x00]*[^/]$", var.state_file_path))
    error_message = "state_file_path must be empty or an absolute file path (starting with /, not ending with /)."
  }
}

variable "pid_file_path" {
  description = "Absolute path of the AgentAPI PID file; empty means agentapi.pid in the module folder."
  type        = string
  default     = ""

  validation {
    condition     = var.pid_file_path == "" || can(regex("^/[^\\n\\r\\x00]*[^/]$", var.pid_file_path))
    error_message = "pid_file_path must be empty or an absolute file path (starting with /, not ending with /)."
  }
}

variable "task_log_snapshot" {
  description = "In a Coder task, upload the last chat messages to Coder when the workspace stops."
  type        = bool
  default     = true
}

variable "install_node" {
  description = "Install a pinned Node.js into the module folder when the workspace has neither Node.js 18+ nor Bun."
  type        = bool
  default     = true
}

variable "node_download_url" {
  description = "Base URL of Node.js releases."
  type        = string
  default     = "https://nodejs.org/dist"

  validation {
    condition     = can(regex("^https?://[^\\s]+[^/]$", var.node_download_url))
    error_message = "node_download_url must be an http:// or https:// URL without a trailing slash."
  }
}

variable "start_script" {
  description = "The built start script (an ES module) that installs, configures and launches the agent under AgentAPI."
  type        = string
}

variable "stop_script" {
  description = "The built stop script (an ES module) that saves state and stops AgentAPI."
  type        = string
}

variable "agent_config" {
  description = "Agent-specific settings handed to the start script as JSON under the key \"agent\"."
  type        = any
  default     = {}
}

variable "stop_turn_wait_seconds" {
  description = "How long the stop script lets a running turn finish."
  type        = number
  default     = 5

  validation {
    condition     = var.stop_turn_wait_seconds >= 0 && var.stop_turn_wait_seconds <= 300
    error_message = "stop_turn_wait_seconds must be between 0 and 300."
  }
}

variable "stop_sigterm_wait_seconds" {
  description = "How long the stop script waits for AgentAPI to exit after SIGTERM before SIGKILL."
  type        = number
  default     = 10

  validation {
    condition     = var.stop_sigterm_wait_seconds >= 1 && var.stop_sigterm_wait_seconds <= 300
    error_message = "stop_sigterm_wait_seconds must be between 1 and 300."
  }
}
